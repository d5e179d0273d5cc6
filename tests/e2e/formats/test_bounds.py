"""Every read of an image, a PDF or a notebook has a time and a memory bound of its own:
small hostile files (a PDF whose pages share megabytes of drawing instructions, a PNG
declaring 81 million 16-bit pixels) are answered promptly with what could be read or a
clear refusal, the work stops at the bound, the server keeps answering meanwhile, and
its memory stays within the documented bound."""

from __future__ import annotations

import asyncio
import base64
import json
import os
import sys
import time
from pathlib import Path

import pytest
from pytest_lsp import LanguageClient

from steadyhand.protocol.commands import PING, READ
from tests.conftest import call
from tests.hostile_formats import grey16_png, shared_stream_pdf

#: The documented bound of a read of an image, a PDF or a notebook.
BOUND_KIB = 256 * 1024


def _server_pid(client: LanguageClient) -> int:
    server = getattr(client, "_server", None) or getattr(client, "server", None)
    pid = getattr(server, "pid", None)
    assert isinstance(pid, int), "cannot find the server process"
    return pid


def _status(pid: int, key: str) -> int | None:
    """A ``/proc/<pid>/status`` figure in KiB, or None where there is no /proc."""
    try:
        with open(f"/proc/{pid}/status") as fh:
            for line in fh:
                if line.startswith(key + ":"):
                    return int(line.split()[1])
    except OSError:
        return None
    return None


def _assert_within_bound(pid: int) -> None:
    peak = _status(pid, "VmHWM")
    if peak is None:
        pytest.skip("no /proc here: the server's peak memory cannot be read")
    assert peak <= BOUND_KIB, f"the server's peak memory was {peak // 1024} MiB"


def _children(pid: int) -> list[int]:
    """The processes ``pid`` started that are still running (Linux)."""
    out: list[int] = []
    for task in os.listdir(f"/proc/{pid}/task"):
        with open(f"/proc/{pid}/task/{task}/children") as fh:
            out += [int(c) for c in fh.read().split()]
    return out


async def test_pages_sharing_a_huge_content_stream_are_answered_at_once(
    client: LanguageClient, workspace: Path
) -> None:
    (workspace / "shared.pdf").write_bytes(shared_stream_pdf(20, 8 * 1024 * 1024))
    assert (workspace / "shared.pdf").stat().st_size < 64 * 1024
    pid = _server_pid(client)
    started = time.monotonic()
    r = await asyncio.wait_for(call(client, READ, file_path="shared.pdf", pages="1-20"), timeout=45)
    took = time.monotonic() - started
    assert r["ok"], r
    assert took < 10, took
    assert [p["page"] for p in r["pages"]] == list(range(1, 21))
    assert "MiB of drawing instructions" in r["message"]
    _assert_within_bound(pid)


@pytest.mark.slow
@pytest.mark.timeout(120)
async def test_a_slow_pdf_is_stopped_at_its_time_limit_and_the_server_keeps_answering(
    client: LanguageClient, workspace: Path
) -> None:
    # each page parses 3.9 MB of instructions: some seconds a page, a minute for twenty
    (workspace / "slow.pdf").write_bytes(shared_stream_pdf(20, 3_900_000))
    pid = _server_pid(client)
    started = time.monotonic()
    read = asyncio.create_task(call(client, READ, file_path="slow.pdf", pages="1-20"))
    await asyncio.sleep(1.0)
    assert not read.done()
    ping_started = time.monotonic()
    pong = await asyncio.wait_for(call(client, PING), timeout=10)
    assert pong["ok"] and time.monotonic() - ping_started < 2.0
    r = await asyncio.wait_for(read, timeout=45)
    took = time.monotonic() - started
    assert r["ok"] is False and r["error"] == "too_large", r
    assert r["reason"] == "time_limit" and r["limit_seconds"] == 15
    assert "15-second limit" in r["message"] and "stopped" in r["message"]
    assert 'pages="1' in r["message"], r["message"]  # a range that was read in time
    assert took < 25, took
    if sys.platform.startswith("linux"):
        assert _children(pid) == []  # the decoding process is gone: the work stopped
    _assert_within_bound(pid)


async def test_a_png_declaring_81_million_16_bit_pixels_is_refused_before_decoding(
    client: LanguageClient, workspace: Path
) -> None:
    (workspace / "huge.png").write_bytes(grey16_png(9000, 9000))
    assert (workspace / "huge.png").stat().st_size < 256 * 1024
    pid = _server_pid(client)
    started = time.monotonic()
    r = await asyncio.wait_for(call(client, READ, file_path="huge.png"), timeout=45)
    assert time.monotonic() - started < 10
    assert r["ok"] is False and r["error"] == "too_large", r
    assert r["reason"] == "memory_limit" and "9,000×9,000" in r["message"]
    assert "smaller version" in r["message"]
    _assert_within_bound(pid)


async def test_a_large_16_bit_png_within_the_bound_is_downscaled(
    client: LanguageClient, workspace: Path
) -> None:
    (workspace / "big.png").write_bytes(grey16_png(6000, 6000, level=0x8000))
    pid = _server_pid(client)
    r = await asyncio.wait_for(call(client, READ, file_path="big.png"), timeout=45)
    assert r["ok"], r
    assert (r["original_width"], r["original_height"]) == (6000, 6000)
    assert r["width"] * r["height"] <= 1_150_000
    _assert_within_bound(pid)


async def test_a_notebook_output_too_large_to_decode_is_refused_in_its_entry(
    client: LanguageClient, workspace: Path
) -> None:
    small = grey16_png(40, 30)
    huge = grey16_png(9000, 9000)
    outputs = [
        {
            "output_type": "display_data",
            "data": {"image/png": base64.b64encode(png).decode(), "text/plain": ["<Figure>"]},
            "metadata": {},
        }
        for png in (huge, small)
    ]
    cell = {
        "cell_type": "code",
        "execution_count": 1,
        "id": "plot",
        "metadata": {},
        "outputs": outputs,
        "source": ["plot()\n"],
    }
    nb = {"cells": [cell], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    (workspace / "plots.ipynb").write_text(json.dumps(nb))
    pid = _server_pid(client)
    r = await asyncio.wait_for(
        call(client, READ, file_path="plots.ipynb", include_images=True), timeout=45
    )
    assert r["ok"], r
    first, second = r["images"]
    assert "memory bound" in first["error"] and "data" not in first
    assert second["media_type"] == "image/png" and (second["width"], second["height"]) == (40, 30)
    _assert_within_bound(pid)


@pytest.mark.slow
async def test_a_notebook_at_the_size_cap_is_read_within_the_bound(
    client: LanguageClient, workspace: Path
) -> None:
    blob = base64.b64encode(os.urandom(45 * 1024 * 1024)).decode()
    cell = {
        "cell_type": "code",
        "execution_count": 1,
        "id": "big",
        "metadata": {},
        "outputs": [{"output_type": "display_data", "data": {"image/png": blob}, "metadata": {}}],
        "source": ["plot()\n"],
    }
    nb = {"cells": [cell], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    (workspace / "heavy.ipynb").write_text(json.dumps(nb))
    del blob
    pid = _server_pid(client)
    r = await asyncio.wait_for(call(client, READ, file_path="heavy.ipynb"), timeout=60)
    assert r["ok"], r
    _assert_within_bound(pid)


async def test_a_notebook_of_300_000_small_cells_is_refused_before_parsing(
    client: LanguageClient, workspace: Path
) -> None:
    cell = '{"cell_type": "code", "execution_count": null, "metadata": {}, "outputs": [], '
    cells = ",".join(f'{cell}"id": "c{i}", "source": ["a = 1"]}}' for i in range(300_000))
    text = '{"cells": [' + cells + '], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}'
    (workspace / "many.ipynb").write_text(text)
    assert len(text) < 40 * 1024 * 1024
    del cells, text
    pid = _server_pid(client)
    started = time.monotonic()
    r = await asyncio.wait_for(call(client, READ, file_path="many.ipynb"), timeout=60)
    assert time.monotonic() - started < 10
    assert r["ok"] is False and r["error"] == "too_large", r
    assert r["reason"] == "memory_limit" and "300,000 cells" in r["message"]
    assert "--clear-output" in r["message"]
    _assert_within_bound(pid)

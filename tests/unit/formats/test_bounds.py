"""The bounds of decoding: what an image may cost before a pixel is decoded, a PDF page's
content cap, and the decoding process — its time and memory limits, its answers, and
that it never imports from the folder it runs in."""

from __future__ import annotations

import io
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from PIL import Image

from steadyhand.formats import image as image_fmt
from steadyhand.formats import pdf as pdf_fmt
from steadyhand.formats import sandbox
from steadyhand.protocol.errors import ErrorCode, ToolError
from tests.hostile_formats import grey16_png, shared_stream_pdf

ROOT = Path(__file__).resolve().parents[3]
BUDGET = image_fmt.Budget(1_150_000, 1568, 1024 * 1024)
MiB = 1024 * 1024


@given(
    st.sampled_from(["RGB", "L", "CMYK"]),
    st.integers(1, 60_000),
    st.integers(1, 60_000),
    st.integers(1, 4000),
    st.integers(1, 4000),
    st.integers(0, 200 * MiB),
)
def test_a_jpeg_is_decoded_at_a_reduction_that_fits(
    mode: str, w: int, h: int, tw: int, th: int, limit: int
) -> None:
    s = image_fmt.jpeg_scale(mode, w, h, tw, th, limit)
    at = {k: image_fmt.decoded_bytes(mode, -(-w // k), -(-h // k)) for k in (1, 2, 4, 8)}
    if s is None:
        assert at[8] > limit
        return
    assert s in (1, 2, 4, 8) and at[s] <= limit
    finer = [k for k in (1, 2, 4, 8) if k < s]
    # every finer reduction is over the memory limit, or needlessly large for the target
    for k in finer:
        assert at[k] > limit or (w // (2 * k) >= tw and h // (2 * k) >= th)


def test_the_decode_budget_leaves_room_for_the_file() -> None:
    assert image_fmt.decode_budget(0) == image_fmt.MAX_DECODE_BYTES
    assert image_fmt.decode_budget(60 * MiB) == image_fmt.DECODE_BYTES - 60 * MiB
    assert image_fmt.decode_budget(10**12) == 0
    assert image_fmt.DECODE_BYTES + 64 * MiB <= sandbox.MEMORY_BYTES


def test_an_image_over_the_bound_is_refused_from_its_header() -> None:
    with pytest.raises(ToolError) as exc:
        image_fmt.deliver("huge.png", grey16_png(9000, 9000), BUDGET)
    assert exc.value.code is ErrorCode.TOO_LARGE
    assert exc.value.fields["reason"] == "memory_limit"


def test_a_large_palette_image_is_reduced_before_it_is_converted() -> None:
    img = Image.new("P", (4000, 3000), 3)
    img.putpalette([0, 0, 0, 255, 0, 0, 0, 255, 0, 0, 0, 255] * 64)
    img.info["transparency"] = 3
    buf = io.BytesIO()
    img.save(buf, "PNG", transparency=3)
    out = image_fmt.deliver("p.png", buf.getvalue(), BUDGET)
    assert out.width * out.height <= BUDGET.max_pixels
    shown = Image.open(io.BytesIO(out.data))
    assert shown.mode in ("RGBA", "LA") and shown.getchannel("A").getextrema()[1] == 0


def test_pages_sharing_a_huge_content_stream_are_not_parsed() -> None:
    data = shared_stream_pdf(20, 8 * MiB)
    started = time.monotonic()
    count, pages = pdf_fmt.extract("s.pdf", data, "1-20", 20)
    assert time.monotonic() - started < 5
    assert count == 20 and [p.number for p in pages] == list(range(1, 21))
    assert all(p.content_bytes > pdf_fmt.MAX_PAGE_CONTENT and not p.text for p in pages)
    assert "drawing instructions" in pdf_fmt.render(pages[:1], count)


def test_a_page_text_is_cut_to_the_cap_and_keeps_its_length() -> None:
    data = shared_stream_pdf(1, 200_000)
    _, (page,) = pdf_fmt.extract("s.pdf", data, None, 20, text_cap=100)
    assert len(page.text) == 100 and page.length > 10_000
    assert pdf_fmt.PageText.from_wire(page.to_wire()) == page


# -- the decoding process ----------------------------------------------------------------


def test_a_refusal_in_the_decoding_process_reaches_the_caller() -> None:
    with pytest.raises(ToolError) as exc:
        sandbox.run("pdf", {"path": "x.pdf", "max_pages": 20, "text_cap": 100}, b"%PDF-1.4 junk")
    assert exc.value.code is ErrorCode.UNREADABLE and exc.value.fields["reason"] == "corrupt"


@pytest.mark.slow
def test_the_time_limit_stops_the_work() -> None:
    data = shared_stream_pdf(20, 3_900_000)
    params = {"path": "slow.pdf", "pages": "1-20", "max_pages": 20, "text_cap": 100}
    started = time.monotonic()
    with pytest.raises(sandbox.OverLimit) as exc:
        sandbox.run("pdf", params, data, seconds=2.0)
    assert time.monotonic() - started < 4
    assert exc.value.what == "time"
    assert exc.value.progress[0] == {"count": 20, "numbers": list(range(1, 21))}


@pytest.mark.slow
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="address-space limit: Linux")
def test_the_memory_limit_stops_the_work() -> None:
    data = shared_stream_pdf(3, 3_900_000)
    params = {"path": "big.pdf", "pages": "1-3", "max_pages": 20, "text_cap": 100}
    with pytest.raises(sandbox.OverLimit) as exc:
        sandbox.run("pdf", params, data, memory_bytes=128 * MiB)
    assert exc.value.what == "memory"


_PEAK = """
import resource, sys
from steadyhand.formats import sandbox
from steadyhand.protocol.errors import ToolError
from tests.hostile_formats import grey16_png, shared_stream_pdf

jobs = {
    "png": ("images", {"items": [{"path": "h.png", "size": 0}], "budget": [1150000, 1568, 1048576]},
            grey16_png(9000, 9000)),
    "png-ok": ("images", {"items": [{"path": "b.png", "size": 0}],
               "budget": [1150000, 1568, 1048576]}, grey16_png(6000, 6000)),
    "pdf": ("pdf", {"path": "s.pdf", "pages": "1-20", "max_pages": 20, "text_cap": 100000},
            shared_stream_pdf(20, 8 * 1024 * 1024)),
    "pdf-slow": ("pdf", {"path": "s.pdf", "pages": "1-20", "max_pages": 20, "text_cap": 100000},
                 shared_stream_pdf(20, 3_900_000)),
}
job, params, data = jobs[sys.argv[1]]
if job == "images":
    params["items"][0]["size"] = len(data)
try:
    sandbox.run(job, params, data, seconds=6.0)
except (sandbox.OverLimit, ToolError):
    pass
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
"""


@pytest.mark.slow
@pytest.mark.skipif(sys.platform == "win32", reason="no getrusage of children on Windows")
@pytest.mark.parametrize("job", ["png", "png-ok", "pdf", "pdf-slow"])
def test_the_decoding_process_stays_within_256_mib(job: str) -> None:
    """The peak resident memory of the decoding process, as the system counted it."""
    out = subprocess.run(
        [sys.executable, "-c", _PEAK, job],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    ).stdout
    peak_kib = int(out.split()[-1]) // (1024 if sys.platform == "darwin" else 1)
    assert peak_kib <= 256 * 1024, f"{job}: {peak_kib // 1024} MiB"


def test_the_decoding_process_never_imports_from_its_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    marker = tmp_path / "imported"
    for name in ("pypdf.py", "PIL.py", "json.py"):
        (tmp_path / name).write_text(
            textwrap.dedent(f"""
                open({str(marker)!r}, "w").write({name!r})
                raise SystemExit(3)
            """)
        )
    monkeypatch.chdir(tmp_path)
    data = shared_stream_pdf(1, 1000)
    params = {"path": "a.pdf", "max_pages": 20, "text_cap": 100}
    answer = sandbox.run("pdf", params, data)
    assert answer["count"] == 1 and not marker.exists()


def _notebook_text(cells: int, source_lines: int, output_bytes: int, outputs: int) -> str:
    import base64
    import json

    blob = base64.b64encode(b"\x00" * output_bytes).decode() if output_bytes else ""
    cell = {
        "cell_type": "code",
        "execution_count": 1,
        "metadata": {"tags": []},
        "outputs": [
            {"output_type": "display_data", "data": {"image/png": blob, "text/plain": ["x"]}}
        ]
        * outputs,
        "source": [f"x = {n}\n" for n in range(source_lines)],
    }
    nb = {
        "cells": [dict(cell, id=f"c{i}") for i in range(cells)],
        "metadata": {},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    return json.dumps(nb, indent=1)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("cells", "lines", "blob", "outputs"),
    [
        (20_000, 1, 0, 0),
        (50_000, 0, 0, 0),
        (5_000, 30, 0, 2),
        (2_000, 200, 0, 0),
        (200, 2, 0, 200),
        (2, 1, 8 * MiB, 1),
        (500, 5, 1000, 10),
    ],
)
def test_the_cost_of_a_notebook_is_not_underestimated(
    cells: int, lines: int, blob: int, outputs: int
) -> None:
    import tracemalloc

    from steadyhand.formats import notebook as nb_fmt

    text = _notebook_text(cells, lines, blob, outputs)
    found, cost = nb_fmt.parse_cost(text)
    assert found == cells
    tracemalloc.start()
    try:
        book = nb_fmt.parse(text)
        used = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    assert len(book.cells) == cells
    # the estimate covers what parsing keeps, plus the text itself
    assert cost >= used + len(text), (cost, used)

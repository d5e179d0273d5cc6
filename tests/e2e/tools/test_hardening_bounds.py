"""Every answer whose size a parameter controls is bounded: a window of lines (from disk,
through the streaming reader, or from an open buffer) stops at ``maxReadBytes`` with the
"to read more" hint; a notebook read cuts a cell too large for one answer and shows at most
so many outputs; a history listing shows at most so many versions, whatever ``limit`` asks.
Sizes are checked in bytes of the answer, never in time."""

from __future__ import annotations

import json
import re
from pathlib import Path

from pytest_lsp import LanguageClient

from steadyhand.protocol.commands import EDIT, HISTORY, READ, WRITE
from tests.conftest import call, client_with
from tests.editor import open_doc, settle

CAP = 256 * 1024  # maxReadBytes by default
#: What an answer carries besides the window's text (fields, the note), generously.
SLACK = 4096
HUGE = 1_000_000_000

editor = client_with(editor=True)
plain = client_with()


def _size(result: dict[str, object]) -> int:
    """Bytes of the answer's texts (as UTF-8, not JSON-escaped), and of its other fields
    as JSON."""
    texts = sum(len(v.encode()) for v in result.values() if isinstance(v, str))
    rest = {k: v for k, v in result.items() if not isinstance(v, str)}
    return texts + len(json.dumps(rest, ensure_ascii=False).encode())


def _next_offset(message: str) -> int:
    found = re.search(r"call read with offset=(\d+)", message)
    assert found, message[-500:]
    return int(found.group(1))


async def test_a_huge_limit_on_a_large_file_stops_at_the_byte_cap(
    plain: LanguageClient, workspace: Path
) -> None:
    f = workspace / "big.log"
    f.write_text("".join(f"{i:08d} " + "x" * 90 + "\n" for i in range(1, 40_001)))  # 4 MB
    first = await call(plain, READ, file_path="big.log", offset=1, limit=HUGE)
    assert first["ok"], first
    assert _size(first) <= CAP + SLACK, _size(first)
    n = first["num_lines"]
    assert 0 < n < 40_000 and first["total_lines"] == 40_000
    assert "limit of one read" in first["message"]
    assert _next_offset(first["message"]) == n + 1
    # the hint works, and a window read through the line index is bounded too
    second = await call(plain, READ, file_path="big.log", offset=n + 1, limit=HUGE)
    assert second["ok"] and second["start_line"] == n + 1, second
    assert _size(second) <= CAP + SLACK
    middle = await call(plain, READ, file_path="big.log", offset=20_000, limit=HUGE)
    assert _size(middle) <= CAP + SLACK and middle["start_line"] == 20_000
    # only the lines shown count as read: an edit just past them asks for them first
    unseen = 20_000 + middle["num_lines"] + 10
    r = await call(plain, EDIT, file_path="big.log", old_string=f"{unseen:08d} ", new_string="")
    assert r["error"] == "partial_view", r


async def test_a_huge_limit_on_a_small_file_of_short_lines(
    plain: LanguageClient, workspace: Path
) -> None:
    (workspace / "short.txt").write_text("ab\n" * 40_000)  # 120 KB; numbered, 400 KB
    r = await call(plain, READ, file_path="short.txt", offset=1, limit=HUGE)
    assert r["ok"] and _size(r) <= CAP + SLACK, _size(r)
    assert r["num_lines"] < 40_000
    assert _next_offset(r["message"]) == r["num_lines"] + 1


async def test_a_huge_limit_on_an_open_buffer(editor: LanguageClient, workspace: Path) -> None:
    f = workspace / "buffer.txt"
    f.write_text("")
    text = "é" * 50 + "\n"
    open_doc(editor, editor.editor, f, text * 40_000)  # type: ignore[attr-defined]
    await settle()
    r = await call(editor, READ, file_path="buffer.txt", offset=3, limit=HUGE)
    assert r["ok"] and r["source"] == "buffer", r
    assert _size(r) <= CAP + SLACK, _size(r)
    assert _next_offset(r["message"]) == 3 + r["num_lines"]


def _notebook(cells: list[dict[str, object]]) -> str:
    return json.dumps(
        {
            "cells": cells,
            "metadata": {"language_info": {"name": "python"}},
            "nbformat": 4,
            "nbformat_minor": 5,
        }
    )


async def test_a_notebook_cell_too_large_for_one_answer_is_cut(
    plain: LanguageClient, workspace: Path
) -> None:
    big = {
        "cell_type": "code",
        "id": "big",
        "source": "x = 1\n" * 400_000,  # 2.4 MB of source
        "metadata": {},
        "outputs": [],
        "execution_count": None,
    }
    (workspace / "n.ipynb").write_text(_notebook([big]))
    r = await call(plain, READ, file_path="n.ipynb", limit=HUGE)
    assert r["ok"] and r["type"] == "notebook", r
    assert _size(r) <= CAP + SLACK, _size(r)
    assert "cell cut here" in r["message"]


async def test_a_notebook_cell_with_many_outputs_is_bounded(
    plain: LanguageClient, workspace: Path
) -> None:
    outputs = [
        {"output_type": "stream", "name": "stdout", "text": f"line {i}\n"} for i in range(20_000)
    ]
    cell = {
        "cell_type": "code",
        "id": "loud",
        "source": "for i in range(20000): print(i)",
        "metadata": {},
        "outputs": outputs,
        "execution_count": 1,
    }
    (workspace / "n.ipynb").write_text(_notebook([cell]))
    r = await call(plain, READ, file_path="n.ipynb")
    assert r["ok"], r
    assert _size(r) <= CAP + SLACK, _size(r)
    assert "more outputs not shown" in r["message"]


async def test_a_history_listing_is_bounded_whatever_the_limit(
    plain: LanguageClient, workspace: Path
) -> None:
    (workspace / "h.txt").write_text("v0\n")
    await call(plain, READ, file_path="h.txt")
    for i in range(1, 121):
        r = await call(plain, WRITE, file_path="h.txt", content=f"v{i}\n")
        assert r["ok"], r
    listed = await call(plain, HISTORY, file_path="h.txt", limit=HUGE)
    assert listed["ok"], listed
    assert len(listed["versions"]) == 100
    assert "showing the newest 100" in listed["message"]


async def test_the_diff_of_a_large_change_is_cut_to_whole_hunks(
    plain: LanguageClient, workspace: Path
) -> None:
    """A long diff is left out unless asked for; asked for (include_diff), it holds at
    most maxReadBytes: its first whole hunks, with a count of those left out."""
    f = workspace / "many.txt"
    f.write_text(
        "".join(f"line {i}\n" + ("needle\n" if i % 10 == 0 else "") for i in range(60_000))
    )
    for offset in range(1, 66_001, 2000):  # see every line, window by window
        await call(plain, READ, file_path="many.txt", offset=offset, limit=2000)
    dry = await call(
        plain,
        EDIT,
        file_path="many.txt",
        old_string="needle",
        new_string="pin",
        replace_all=True,
        dry_run=True,
        include_diff=True,
    )
    assert dry["ok"] and dry["diff_cut"] > 0, {k: v for k, v in dry.items() if k != "diff"}
    assert _size(dry) <= 2 * CAP + SLACK  # the diff, and the same diff in the message
    assert dry["added"] == dry["removed"] == 6000
    r = await call(
        plain,
        EDIT,
        file_path="many.txt",
        old_string="needle",
        new_string="pin",
        replace_all=True,
        include_diff=True,
    )
    assert r["ok"] and r["diff_cut"] > 0 and _size(r) <= CAP + SLACK, r.get("diff_cut")
    assert r["diff"].startswith("--- ") and r["diff"].count("\n@@ ") >= 1
    assert "diff is cut" in r["message"]
    assert r["added"] == r["removed"] == 6000


small_reads = client_with({"maxReadTokens": 200})


async def test_a_pdf_page_too_large_for_one_answer_is_cut(
    small_reads: LanguageClient, workspace: Path
) -> None:
    from fpdf import FPDF

    pdf = FPDF()
    pdf.set_font("helvetica", size=6)
    pdf.add_page()
    for i in range(60):
        pdf.cell(text=f"line {i} of a page holding far more text than one read may answer")
        pdf.ln(3)
    (workspace / "dense.pdf").write_bytes(bytes(pdf.output()))
    r = await call(small_reads, READ, file_path="dense.pdf", pages="1")
    assert r["ok"] and r["type"] == "pdf", r
    assert "page cut here" in r["message"] and "line 0 of" in r["message"]
    assert len(r["message"]) < 4 * 200 + 400

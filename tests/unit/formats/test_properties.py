"""Properties of the pure parts: notebook cell splicing equals nbformat's own output, and
the streaming outline counts lines like the in-memory path, whatever the chunking."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import nbformat
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output, new_raw_cell

from steadyhand.formats import notebook as nb_fmt
from steadyhand.formats import outline as outline_fmt
from steadyhand.formats.pdf import parse_pages
from steadyhand.text.lines import split_lines, to_view
from steadyhand.text.splices import apply_splices

_text = st.text(
    alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\r"),
    max_size=40,
)
_kind = st.sampled_from(["code", "markdown", "raw"])
_MAKERS = {"code": new_code_cell, "markdown": new_markdown_cell, "raw": new_raw_cell}


def _cell(kind: str, source: str, ran: bool) -> Any:
    cell = _MAKERS[kind](source)
    if kind == "code" and ran:
        cell.execution_count = 7
        cell.outputs = [new_output("stream", name="stdout", text=source or "x")]
    return cell


@st.composite
def notebooks(draw: st.DrawFn) -> Any:
    specs = draw(st.lists(st.tuples(_kind, _text, st.booleans()), max_size=5))
    return new_notebook(cells=[_cell(k, s, r) for k, s, r in specs])


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    book=notebooks(),
    op=st.sampled_from(["replace", "insert", "delete"]),
    pick=st.integers(min_value=0, max_value=10),
    source=_text,
    kind=_kind,
    retype=st.booleans(),
    ascii_=st.booleans(),
)
def test_cell_edits_match_nbformat(
    book: Any, op: str, pick: int, source: str, kind: str, retype: bool, ascii_: bool
) -> None:
    def dump(b: Any) -> str:
        if ascii_:
            as_written = json.loads(nbformat.writes(b))  # sources split into lines
            return json.dumps(as_written, indent=1, sort_keys=True, ensure_ascii=True) + "\n"
        return nbformat.writes(b)

    if ascii_:
        book.metadata["title"] = "café"  # so the file shows how it escapes
    before = dump(book)
    parsed = nb_fmt.parse(before)
    n = len(parsed.cells)
    if op != "insert" and n == 0:
        return
    target = parsed.cells[pick % n] if n else None
    if op == "replace":
        assert target is not None
        new_type = kind if retype else None
        change = nb_fmt.replace_cell(parsed, target, source, new_type)
        i = target.index - 1
        old = book.cells[i]
        if new_type is not None and new_type != old.cell_type:
            fresh = _MAKERS[new_type](source, id=old.id)
            fresh.metadata = old.metadata
            book.cells[i] = fresh
        else:
            old.source = source
            if old.cell_type == "code":
                old.outputs = []
                old.execution_count = None
    elif op == "insert":
        after = None if (target is None or pick % 3 == 0) else target
        change = nb_fmt.insert_cell(parsed, after, source, kind)
        at = after.index if after is not None else 0
        book.cells.insert(at, _MAKERS[kind](source, id=change.cell_id))
    else:
        assert target is not None
        change = nb_fmt.delete_cell(parsed, target)
        del book.cells[target.index - 1]
    after_text = apply_splices(before, list(change.splices))
    assert after_text == dump(book)
    nbformat.validate(nbformat.reads(after_text, as_version=4))


@pytest.mark.parametrize(
    "spec,count,want",
    [("3", 5, [3]), ("2-4", 5, [2, 3, 4]), ("4-", 5, [4, 5]), ("5,1-2,2", 5, [5, 1, 2])],
)
def test_parse_pages(spec: str, count: int, want: list[int]) -> None:
    assert parse_pages(spec, count) == want


_lines_text = st.text(alphabet=st.sampled_from(list("ab#d \n\r\t")), max_size=300)


@settings(
    max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(text=_lines_text, chunk=st.integers(min_value=1, max_value=9))
def test_streaming_outline_matches_memory(
    text: str, chunk: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "f.md"
    path.write_bytes(text.encode())
    monkeypatch.setattr(outline_fmt, "CHUNK", chunk)
    streamed = outline_fmt.stream_outline(str(path))
    lines = split_lines(to_view(text))
    in_memory = outline_fmt.outline_of_lines(str(path), lines, len(text))
    assert streamed.total_lines == len(lines)
    assert streamed.head == in_memory.head
    assert streamed.entries == in_memory.entries

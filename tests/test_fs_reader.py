"""Ranged reads of large files: a second window of an unchanged file, served from the
line index the first pass left, equals a fresh pass."""

from __future__ import annotations

import os
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from steadyhand.fs import reader


def _fresh(path: str, offset: int, limit: int) -> reader.Window:
    with reader._INDEX_LOCK:
        reader._INDEXES.pop(path, None)
    return reader.stream_window(path, offset, limit)


_line = st.text(st.sampled_from("ab é"), max_size=30)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    lines=st.lists(_line, min_size=0, max_size=400),
    final_newline=st.booleans(),
    bom=st.booleans(),
    windows=st.lists(st.tuples(st.integers(1, 420), st.integers(1, 50)), min_size=1, max_size=5),
)
def test_indexed_windows_equal_a_fresh_pass(
    tmp_path: Path,
    monkeypatch: object,
    lines: list[str],
    final_newline: bool,
    bom: bool,
    windows: list[tuple[int, int]],
) -> None:
    monkeypatch.setattr(reader, "CHUNK", 64)  # type: ignore[attr-defined]
    text = "\n".join(lines) + ("\n" if final_newline and lines else "")
    f = tmp_path / "big.log"
    f.write_bytes((b"\xef\xbb\xbf" if bom else b"") + text.encode())
    path = str(f)
    _fresh(path, 1, 1)  # leaves the index behind
    for offset, limit in windows:
        with reader._INDEX_LOCK:
            assert path in reader._INDEXES
        indexed = reader.stream_window(path, offset, limit)
        fresh = _fresh(path, offset, limit)
        assert indexed.lines == fresh.lines
        assert (indexed.total_lines, indexed.hash) == (fresh.total_lines, fresh.hash)


def test_a_changed_file_is_read_again(tmp_path: Path) -> None:
    f = tmp_path / "big.log"
    f.write_bytes(b"one\ntwo\n")
    path = str(f)
    first = _fresh(path, 1, 10)
    f.write_bytes(b"one\ntwo\nthree\n")
    os.utime(f, ns=(first.st.st_atime_ns, first.st.st_mtime_ns))  # same time, new size
    again = reader.stream_window(path, 1, 10)
    assert again.lines == ["one", "two", "three"] and again.total_lines == 3


def test_files_with_carriage_returns_are_not_indexed(tmp_path: Path) -> None:
    f = tmp_path / "crlf.log"
    f.write_bytes(b"a\r\nb\r\n")
    _fresh(str(f), 1, 5)
    with reader._INDEX_LOCK:
        assert str(f) not in reader._INDEXES

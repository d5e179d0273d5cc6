"""Ranged reads of large files: a second window of an unchanged file, served from the
line index the first pass left, equals a fresh pass."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from steadyhand.formats import outline
from steadyhand.formats.outline import stream_outline
from steadyhand.fs import reader
from steadyhand.protocol.errors import ErrorCode, ToolError
from steadyhand.text.encoding import BinaryContent, decode
from steadyhand.text.lines import split_lines, to_view


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


def _as_decoded(data: bytes) -> list[str]:
    """The lines a whole read of ``data`` shows."""
    return split_lines(to_view(decode(data)[0]))


@pytest.mark.parametrize(
    "data",
    [
        b"caf\xe9 one\n" * 40,  # Latin-1 from the first line
        "café ✓\n".encode() * 40 + b"last \xff\n",  # UTF-8 until the last line
        "café\n".encode() * 40 + b"\xc3",  # ends inside a character
    ],
)
def test_large_files_that_are_not_utf8_read_as_latin1_like_small_ones(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, data: bytes
) -> None:
    monkeypatch.setattr(reader, "CHUNK", 16)
    monkeypatch.setattr(outline, "CHUNK", 16)
    f = tmp_path / "big.txt"
    f.write_bytes(data)
    whole = _as_decoded(data)
    assert decode(data)[1].label == "latin-1"
    fresh = _fresh(str(f), 2, 3)
    assert fresh.encoding.label == "latin-1" and fresh.lines == whole[1:4]
    indexed = reader.stream_window(str(f), 30, 2)  # from the index the pass left
    assert indexed.encoding.label == "latin-1" and indexed.lines == whole[29:31]
    ol = stream_outline(str(f))
    assert ol.encoding is not None and ol.encoding.label == "latin-1" and ol.hash == fresh.hash
    assert [text for text, _ in ol.head] == whole[:20] and ol.total_lines == len(whole)


def test_invalid_utf8_after_a_bom_is_binary_in_ranges_too(tmp_path: Path) -> None:
    f = tmp_path / "big.txt"
    f.write_bytes(b"\xef\xbb\xbfok\n" + b"x\xff\n")
    with pytest.raises(ToolError) as e:
        _fresh(str(f), 1, 1)
    assert e.value.code is ErrorCode.BINARY
    with pytest.raises(ToolError) as o:
        stream_outline(str(f))
    assert o.value.code is ErrorCode.BINARY


@pytest.mark.parametrize("bom", [b"\xff\xfe\x00\x00", b"\x00\x00\xfe\xff"])
def test_utf32_is_refused_as_not_supported(tmp_path: Path, bom: bytes) -> None:
    codec = "utf-32-le" if bom.startswith(b"\xff") else "utf-32-be"
    data = bom + "a\nb\n".encode(codec)
    with pytest.raises(BinaryContent, match="UTF-32"):
        decode(data)
    f = tmp_path / "u32.txt"
    f.write_bytes(data)
    for scan in (lambda: _fresh(str(f), 1, 1), lambda: stream_outline(str(f))):
        with pytest.raises(ToolError) as e:
            scan()
        assert e.value.code is ErrorCode.BINARY and "UTF-32" in e.value.message

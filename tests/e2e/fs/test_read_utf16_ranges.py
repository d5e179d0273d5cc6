"""Reading: ranged reads of large UTF-16 files (unit and end to end), and
the binary refusal that says what to do next."""

from __future__ import annotations

import codecs
from pathlib import Path

import pytest
from pytest_lsp import LanguageClient

from steadyhand.fs import reader
from steadyhand.protocol.commands import EDIT, READ, WRITE
from steadyhand.protocol.errors import ToolError
from steadyhand.state.hashing import content_hash
from steadyhand.text.lines import split_lines, to_view
from tests.conftest import call, client_with

TEXT = "".join(
    f"línea {i} “q” 🎉" + ("\r\n" if i % 3 else "\n") if i % 7 else f"r{i}\r" for i in range(1, 400)
)


def _utf16(text: str, codec: str) -> bytes:
    bom = codecs.BOM_UTF16_LE if codec == "utf-16-le" else codecs.BOM_UTF16_BE
    return bom + text.encode(codec)


@pytest.mark.parametrize("codec", ["utf-16-le", "utf-16-be"])
@pytest.mark.parametrize("chunk", [7, 64, 1 << 20])
@pytest.mark.parametrize("text", [TEXT, TEXT + "no newline at the end", "a\r", ""])
def test_utf16_window_matches_a_whole_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, codec: str, chunk: int, text: str
) -> None:
    """Chunks of any size (odd ones cut code units, surrogate pairs and CRLF) give the
    lines, count, hash and endings a whole decode gives."""
    monkeypatch.setattr(reader, "CHUNK", chunk)
    f = tmp_path / "u16.txt"
    data = _utf16(text, codec)
    f.write_bytes(data)
    want = split_lines(to_view(text)) if text else []
    for lo, n in [(1, 5), (2, 1), (100, 30), (len(want), 3), (len(want) + 5, 2)]:
        lo = max(lo, 1)
        win = reader.stream_window(str(f), lo, n)
        assert win.total_lines == len(want)
        assert win.lines == want[lo - 1 : lo - 1 + n]
        assert win.hash == content_hash(data)
        assert win.encoding.codec == codec and win.encoding.bom
        assert win.crlf == ("\r\n" in text)
        assert win.cr == ("\r" in text.replace("\r\n", ""))


@pytest.mark.parametrize(
    "body",
    [b"\x00d\x00", b"\x00\xd8\x41\x00"],  # an odd byte count; a lone high surrogate
    ids=["odd", "lone-surrogate"],
)
def test_invalid_utf16_window_is_binary_with_a_next_step(tmp_path: Path, body: bytes) -> None:
    f = tmp_path / "bad.txt"
    f.write_bytes(codecs.BOM_UTF16_LE + "ok\n".encode("utf-16-le") + body)
    with pytest.raises(ToolError) as exc:
        reader.stream_window(str(f), 1, 5)
    assert exc.value.code == "binary"
    assert "Leave it as it is" in exc.value.message


large = client_with({"maxReadBytes": 4000})


async def test_large_utf16_window_then_edit(large: LanguageClient, workspace: Path) -> None:
    """The whole read suggests a range; that range is served; an edit inside the window
    works and keeps the file UTF-16 with its BOM and CRLF endings."""
    f = workspace / "u16.txt"
    text = "".join(f"line {i}\r\n" for i in range(1, 1501))
    f.write_bytes(_utf16(text, "utf-16-le"))
    whole = await call(large, READ, file_path="u16.txt")
    assert whole["error"] == "too_large" and "offset=1" in whole["message"]
    first = await call(large, READ, file_path="u16.txt", offset=1, limit=200)
    assert first["ok"], first
    assert first["message"].startswith("     1\tline 1\n")
    assert (first["num_lines"], first["total_lines"]) == (200, 1500)
    assert (first["encoding"], first["line_ending"]) == ("utf-16-le", "crlf")
    # an edit outside the window asks for lines a read can now show
    far = await call(large, EDIT, file_path="u16.txt", old_string="line 995\n", new_string="x\n")
    assert far["error"] == "partial_view", far
    window = await call(large, READ, file_path="u16.txt", offset=990, limit=11)
    assert window["ok"] and "   995\tline 995\n" in window["message"], window
    e = await call(
        large, EDIT, file_path="u16.txt", old_string="line 995\n", new_string="LINE 995\n"
    )
    assert e["ok"], e
    raw = f.read_bytes()
    assert raw.startswith(codecs.BOM_UTF16_LE)
    assert raw[2:].decode("utf-16-le") == text.replace("line 995\r\n", "LINE 995\r\n")
    again = await call(large, READ, file_path="u16.txt", offset=994, limit=3)
    assert again["ok"] and "LINE 995" in again["message"], again


async def test_large_utf16_be_tail(large: LanguageClient, workspace: Path) -> None:
    f = workspace / "be.txt"
    text = "".join(f"z {i} 🎉\n" for i in range(1, 1001))
    f.write_bytes(_utf16(text, "utf-16-be"))
    r = await call(large, READ, file_path="be.txt", offset=999, limit=5)
    assert r["ok"], r
    assert r["message"].startswith("   999\tz 999 🎉\n  1000\tz 1000 🎉")
    assert (r["total_lines"], r["encoding"], r["line_ending"]) == (1000, "utf-16-be", "lf")


async def test_binary_refusal_names_a_next_step(large: LanguageClient, workspace: Path) -> None:
    """write on an unread binary says read first; read then says what to do, not a loop."""
    (workspace / "b.bin").write_bytes(b"\x00\x01binary")
    w = await call(large, WRITE, file_path="b.bin", content="text\n")
    assert w["error"] == "not_read"
    r = await call(large, READ, file_path="b.bin")
    assert r["error"] == "binary"
    assert "write cannot replace it" in r["message"]
    assert "ask the user" in r["message"]
    # and that is true: after the read, write still cannot replace it
    w = await call(large, WRITE, file_path="b.bin", content="text\n")
    assert w["ok"] is False and w["error"] in ("binary", "not_read"), w
    assert (workspace / "b.bin").read_bytes() == b"\x00\x01binary"

"""Ranged reads of large files: a second window of an unchanged file, served from the
line index the first pass left, equals a fresh pass."""

from __future__ import annotations

from pathlib import Path

from pytest_lsp import LanguageClient

from steadyhand.protocol.commands import EDIT, READ
from tests.conftest import call, client_with

small = client_with({"maxReadBytes": 1000})


async def test_a_large_latin1_file_is_edited_with_the_text_a_range_showed(
    small: LanguageClient, workspace: Path
) -> None:
    f = workspace / "big.txt"
    data = b"caf\xe9 line\n" * 100 + b"na\xefve end\n" + b"caf\xe9 line\n" * 100
    f.write_bytes(data)
    r = await call(small, READ, file_path="big.txt", offset=100, limit=3)
    assert r["ok"] and r["encoding"] == "latin-1", r
    assert "naïve end" in r["message"]
    e = await call(small, EDIT, file_path="big.txt", old_string="naïve end", new_string="naïf")
    assert e["ok"], e
    assert f.read_bytes() == data.replace(b"na\xefve end", b"na\xeff")


async def test_a_small_utf32_file_is_refused(small: LanguageClient, workspace: Path) -> None:
    (workspace / "u32.txt").write_bytes(b"\xff\xfe\x00\x00" + "hi\n".encode("utf-32-le"))
    r = await call(small, READ, file_path="u32.txt")
    assert r["ok"] is False and r["error"] == "binary" and "UTF-32" in r["message"], r

"""``steadyhand.info`` end to end: what it says of files, folders and open buffers, and
that it is confined and deny-checked as a read is, and records no read."""

from __future__ import annotations

import os
from pathlib import Path

from pytest_lsp import LanguageClient

from steadyhand.protocol.commands import EDIT, INFO
from tests.conftest import call, client_with
from tests.editor import open_doc, type_text

informer = client_with({"denyGlobs": ["*.key"]})
editor_client = client_with({"denyGlobs": ["*.key"]}, editor=True)


async def test_a_text_file(informer: LanguageClient, workspace: Path) -> None:
    f = workspace / "a.py"
    f.write_bytes(b"one\r\ntwo\r\nthree")
    os.utime(f, ns=(10**18, 10**18))
    result = await call(informer, INFO, file_path="a.py")
    assert result == {
        "ok": True,
        "message": result["message"],
        "path": str(f),
        "type": "file",
        "kind": "text",
        "size": 15,
        "lines": 3,
        "encoding": "utf-8",
        "line_ending": "crlf",
        "modified": "2001-09-09T01:46:40Z",
        "open": False,
    }
    assert result["message"] == (
        f"{f} is a text file of 15 bytes and 3 lines (UTF-8, CRLF line endings), last "
        "changed 2001-09-09 01:46:40 UTC."
    )


async def test_other_kinds_and_a_folder(informer: LanguageClient, workspace: Path) -> None:
    (workspace / "blob.dat").write_bytes(b"\x00\x01\x02\x03")
    (workspace / "u16.txt").write_bytes("é\nb\n".encode("utf-16"))
    (workspace / "pic.png").write_bytes(b"\x89PNG\r\n\x1a\n" + b"\x00" * 30)
    (workspace / "doc.pdf").write_bytes(b"%PDF-1.4\n")
    (workspace / "sub").mkdir()
    for name in ("a", "b", "c.key"):
        (workspace / "sub" / name).write_text("x\n")
    (workspace / "sub" / "inner").mkdir()
    binary = await call(informer, INFO, file_path="blob.dat")
    assert binary["kind"] == "binary" and "lines" not in binary and binary["size"] == 4
    utf16 = await call(informer, INFO, file_path="u16.txt")
    assert (utf16["encoding"], utf16["lines"]) == ("utf-16-le", 2)
    assert (await call(informer, INFO, file_path="pic.png"))["kind"] == "image"
    assert (await call(informer, INFO, file_path="doc.pdf"))["kind"] == "pdf"
    folder = await call(informer, INFO, file_path="sub")
    assert folder["type"] == "dir" and folder["entries"] == 3  # the denied one not counted
    assert "3 entries" in folder["message"]


async def test_confined_and_deny_checked_as_a_read_is(
    informer: LanguageClient, workspace: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("private\n")
    (workspace / "link.txt").symlink_to(outside)
    (workspace / "id.key").write_text("k\n")
    os.link(outside, workspace / "hard.txt")
    for path in (str(outside), "link.txt", "hard.txt"):
        refused = await call(informer, INFO, file_path=path)
        assert refused["error"] == "outside_workspace", (path, refused)
        assert "size" not in refused
    assert (await call(informer, INFO, file_path="id.key"))["error"] == "denied"
    missing = await call(informer, INFO, file_path="lnk.txt")
    assert missing["error"] == "not_found" and "link.txt" in missing["message"]


async def test_an_open_buffer_with_unsaved_typing(
    editor_client: LanguageClient, workspace: Path
) -> None:
    f = workspace / "a.txt"
    f.write_text("one\n")
    state = editor_client.editor  # type: ignore[attr-defined]
    uri = open_doc(editor_client, state, f)
    clean = await call(editor_client, INFO, file_path=str(f))
    assert (clean["open"], clean["unsaved"], clean["lines"]) == (True, False, 1)
    type_text(editor_client, state, uri, "one\ntwo\nthree\n")
    typed = await call(editor_client, INFO, file_path=str(f))
    assert (typed["open"], typed["unsaved"], typed["lines"], typed["size"]) == (True, True, 3, 4)
    assert "unsaved changes" in typed["message"]
    # info is no read: an edit still needs one.
    refused = await call(editor_client, EDIT, file_path=str(f), old_string="two", new_string="2")
    assert refused["error"] == "not_read"

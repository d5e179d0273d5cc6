"""Agent changes to documents open in the editor, checked against the editor's side of
the protocol: a whole-file write that changes a few separate lines reaches the editor as
one WorkspaceEdit holding one small text edit per changed place (so the text between
them, with its cursors, folds and marks, is left alone); ranges are counted in the
negotiated position encoding, worked out here independently of the server's own code;
and a file open under two names stays open (its buffer the truth) until both close."""

from __future__ import annotations

from pathlib import Path

import pytest_lsp
from lsprotocol import types
from pytest_lsp import LanguageClient

from steadyhand.protocol.commands import EDIT, READ, WRITE
from tests.conftest import call, init_params, server_config
from tests.editor import (
    EditorState,
    close_doc,
    editor_capabilities,
    install,
    open_doc,
    settle,
    type_text,
)


def _start(encodings: list[str] | None = None):  # type: ignore[no-untyped-def]
    @pytest_lsp.fixture(config=server_config())
    async def fixture(lsp_client: LanguageClient, workspace: Path):  # type: ignore[no-untyped-def]
        state = EditorState()
        if encodings:
            state.position_encoding = encodings[0]
        install(lsp_client, state)
        lsp_client.editor = state  # type: ignore[attr-defined]
        caps = editor_capabilities(encodings=encodings)
        await lsp_client.initialize_session(init_params(workspace, None, caps))
        yield
        await lsp_client.shutdown_session()

    return fixture


editor = _start()
utf8_editor = _start(["utf-8", "utf-16"])
utf32_editor = _start(["utf-32"])


def _edits(state: EditorState) -> list[types.TextEdit | types.AnnotatedTextEdit]:
    (params,) = state.applied
    (doc_edit,) = params.edit.document_changes or []
    assert isinstance(doc_edit, types.TextDocumentEdit)
    return [e for e in doc_edit.edits if isinstance(e, types.TextEdit | types.AnnotatedTextEdit)]


def _span(e: types.TextEdit | types.AnnotatedTextEdit) -> tuple[int, int, int, int, str]:
    r = e.range
    return (r.start.line, r.start.character, r.end.line, r.end.character, e.new_text)


async def test_write_changing_distant_lines_sends_one_small_edit_per_change(
    editor: LanguageClient, workspace: Path
) -> None:
    f = workspace / "long.txt"
    f.write_text("".join(f"line {i}\n" for i in range(200)))
    state: EditorState = editor.editor  # type: ignore[attr-defined]
    uri = open_doc(editor, state, f)
    await settle()
    await call(editor, READ, file_path="long.txt")
    new = f.read_text().replace("line 1\n", "LINE 1\n").replace("line 198\n", "line 198!\n")
    new = new.replace("line 100\n", "")
    r = await call(editor, WRITE, file_path="long.txt", content=new)
    assert r["ok"] and r["via"] == "workspaceEdit", r
    assert [_span(e) for e in _edits(state)] == [
        (1, 0, 1, 4, "LINE"),
        (100, 0, 101, 0, ""),
        (198, 8, 198, 8, "!"),
    ]
    assert state.buffers[uri].text == new == f.read_text()


async def test_write_in_a_crlf_buffer_keeps_each_edit_inside_its_line(
    editor: LanguageClient, workspace: Path
) -> None:
    f = workspace / "crlf.txt"
    f.write_bytes("".join(f"row {i}\r\n" for i in range(30)).encode())
    state: EditorState = editor.editor  # type: ignore[attr-defined]
    uri = open_doc(editor, state, f)
    await settle()
    await call(editor, READ, file_path="crlf.txt")
    new = f.read_bytes().decode().replace("row 3\r\n", "row 3b\r\n")
    new = new.replace("row 27\r\n", "ROW 27\r\n").replace("row 29\r\n", "row 29\r\nrow 30\r\n")
    r = await call(editor, WRITE, file_path="crlf.txt", content=new)
    assert r["ok"], r
    assert [_span(e) for e in _edits(state)] == [
        (3, 5, 3, 5, "b"),
        (27, 0, 27, 3, "ROW"),
        (30, 0, 30, 0, "row 30\r\n"),
    ]
    assert state.buffers[uri].text == new and f.read_bytes() == new.encode()


# "emoji 😀 and 漢字 and é here": the width of what comes before "here", per encoding
_LINE = "emoji \U0001f600 and \u6f22\u5b57 and e\u0301 here\n"
_BEFORE_HERE = _LINE.index("here")


def _width(text: str, encoding: str) -> int:
    if encoding == "utf-8":
        return len(text.encode("utf-8"))
    if encoding == "utf-16":
        return len(text.encode("utf-16-le")) // 2
    return len(text)


async def _positions_case(client: LanguageClient, workspace: Path, encoding: str) -> None:
    f = workspace / "uni.txt"
    f.write_text(_LINE + "second \U0001f600\U0001f600 line\n")
    state: EditorState = client.editor  # type: ignore[attr-defined]
    open_doc(client, state, f)
    await settle()
    await call(client, READ, file_path="uni.txt")
    r = await call(client, EDIT, file_path="uni.txt", old_string="here", new_string="there")
    assert r["ok"], r
    at = _width(_LINE[:_BEFORE_HERE], encoding)
    assert [_span(e) for e in _edits(state)] == [(0, at, 0, at, "t")]
    state.applied.clear()
    r = await call(client, EDIT, file_path="uni.txt", old_string="\U0001f600 line", new_string="x")
    assert r["ok"], r
    start = _width("second \U0001f600", encoding)
    end = _width("second \U0001f600\U0001f600 line", encoding)
    assert [_span(e) for e in _edits(state)] == [(1, start, 1, end, "x")]
    assert f.read_text() == _LINE.replace("here", "there") + "second \U0001f600x\n"


async def test_positions_are_utf16_code_units_by_default(
    editor: LanguageClient, workspace: Path
) -> None:
    await _positions_case(editor, workspace, "utf-16")


async def test_positions_are_utf8_bytes_when_the_client_prefers_them(
    utf8_editor: LanguageClient, workspace: Path
) -> None:
    await _positions_case(utf8_editor, workspace, "utf-8")


async def test_positions_are_code_points_when_the_client_offers_only_utf32(
    utf32_editor: LanguageClient, workspace: Path
) -> None:
    await _positions_case(utf32_editor, workspace, "utf-32")


async def test_a_file_open_under_two_names_stays_open_until_both_are_closed(
    editor: LanguageClient, workspace: Path
) -> None:
    f = workspace / "a.txt"
    f.write_text("one\n")
    (workspace / "link.txt").symlink_to(f)
    state: EditorState = editor.editor  # type: ignore[attr-defined]
    uri = open_doc(editor, state, f)
    await settle()
    type_text(editor, state, uri, "one\ntyped\n")
    link_uri = open_doc(editor, state, workspace / "link.txt", text="one\ntyped\n")
    await settle()
    close_doc(editor, state, link_uri)
    await settle()
    r = await call(editor, READ, file_path="a.txt")
    assert r["source"] == "buffer" and r["unsaved"] is True, r
    r = await call(editor, EDIT, file_path="a.txt", old_string="one", new_string="ONE")
    assert r["ok"] and r["via"] == "workspaceEdit" and r["on_disk"] is False, r
    assert state.buffers[uri].text == "ONE\ntyped\n"
    assert f.read_text() == "one\n"  # the user's typing is not saved behind their back
    close_doc(editor, state, uri)
    await settle()
    r = await call(editor, READ, file_path="a.txt")
    assert r["source"] == "disk", r


async def test_open_latin1_file_never_changes_encoding_behind_the_user(
    editor: LanguageClient, workspace: Path
) -> None:
    f = workspace / "old.txt"
    f.write_bytes("café\n".encode("latin-1"))
    state: EditorState = editor.editor  # type: ignore[attr-defined]
    uri = open_doc(editor, state, f, text="café\n")
    await settle()
    await call(editor, READ, file_path="old.txt")
    r = await call(editor, EDIT, file_path="old.txt", old_string="café", new_string="café €")
    assert r["ok"] is False and r["error"] == "io_error", r
    assert "latin-1" in r["message"].lower() and "'€'" in r["message"], r["message"]
    assert state.buffers[uri].text == "café\n" and state.applied == []
    assert f.read_bytes() == "café\n".encode("latin-1")
    ok = await call(editor, EDIT, file_path="old.txt", old_string="café", new_string="café!")
    assert ok["ok"], ok
    assert state.buffers[uri].text == "café!\n"

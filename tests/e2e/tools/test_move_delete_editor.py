"""Moves and deletions of documents the editor has open, over stdio with an editor-like
client (``tests/editor.py``): a ``RenameFile`` when the client takes it (the tab and the
unsaved typing follow, where the client says it carries typing), the disk and a note
when it does not, and never the user's typing saved or lost."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest_lsp
from lsprotocol import types
from pytest_lsp import LanguageClient

from steadyhand.protocol.commands import DELETE, EDIT, FILE_CHANGED, MOVE, READ, UNDO
from tests.conftest import call, init_params, server_config
from tests.editor import EditorState, editor_capabilities, install, open_doc, settle, type_text


def _editor(**caps: bool):  # type: ignore[no-untyped-def]
    """A fixture: an editor-like client with these resource operations."""
    rename_saves = caps.pop("rename_saves", False)

    @pytest_lsp.fixture(config=server_config())
    async def fixture(lsp_client: LanguageClient, workspace: Path):  # type: ignore[no-untyped-def]
        state = EditorState(rename_saves=rename_saves)
        install(lsp_client, state)
        lsp_client.editor = state  # type: ignore[attr-defined]
        opts = {"historyDir": str(workspace.parent / "state")}
        await lsp_client.initialize_session(
            init_params(workspace, opts, editor_capabilities(**caps))
        )
        yield
        await lsp_client.shutdown_session()

    return fixture


#: As VS Code: RenameFile and DeleteFile, and a rename carries unsaved typing.
vscode_like = _editor(rename=True, delete=True, keeps_unsaved=True)
#: As Neovim: RenameFile and DeleteFile, but a rename saves the buffer first.
nvim_like = _editor(rename=True, delete=True, rename_saves=True)
#: As eglot: no resource operations at all.
plain = _editor()


def _state(client: LanguageClient) -> EditorState:
    return client.editor  # type: ignore[attr-defined,no-any-return]


async def test_an_open_file_moves_with_its_tab_and_its_unsaved_typing(
    vscode_like: LanguageClient, workspace: Path
) -> None:
    state = _state(vscode_like)
    a = workspace / "a.txt"
    a.write_text("saved\n")
    uri = open_doc(vscode_like, state, a)
    assert (await call(vscode_like, READ, file_path="a.txt"))["ok"]
    type_text(vscode_like, state, uri, "saved\ntyped, not saved\n")
    await settle()
    moved = await call(vscode_like, MOVE, source_path="a.txt", destination_path="b/c.txt")
    assert moved["ok"] and moved["via"] == "workspaceEdit", moved
    rename = [
        dc
        for p in state.applied
        for dc in p.edit.document_changes or []
        if isinstance(dc, types.RenameFile)
    ]
    assert len(rename) == 1 and rename[0].old_uri == uri
    new_uri = (workspace / "b" / "c.txt").as_uri()
    assert uri not in state.buffers
    assert state.buffers[new_uri].text == "saved\ntyped, not saved\n"  # the typing followed
    assert (workspace / "b" / "c.txt").read_text() == "saved\n"  # ... and was not saved
    assert not a.exists()
    # the server sees the buffer under its new name, typing included
    read = await call(vscode_like, READ, file_path="b/c.txt")
    assert read["source"] == "buffer" and read["unsaved"] is True and "typed" in read["message"]


async def test_the_read_record_of_an_open_file_follows_the_move(
    vscode_like: LanguageClient, workspace: Path
) -> None:
    state = _state(vscode_like)
    (workspace / "pkg").mkdir()
    f = workspace / "pkg" / "m.py"
    f.write_text("x = 1\n")
    open_doc(vscode_like, state, f)
    assert (await call(vscode_like, READ, file_path=str(f)))["ok"]
    moved = await call(vscode_like, MOVE, source_path="pkg", destination_path="lib")
    assert moved["ok"] and moved["via"] == "workspaceEdit", moved
    edited = await call(vscode_like, EDIT, file_path="lib/m.py", old_string="1", new_string="2")
    assert edited["ok"], edited
    assert state.buffers[(workspace / "lib" / "m.py").as_uri()].text == "x = 2\n"
    # taken back: moved back by the editor, the tab with it, the edit since along
    back = await call(vscode_like, UNDO, id=moved["change_id"])
    assert back["ok"] and back["via"] == "workspaceEdit", back
    assert f.as_uri() in state.buffers and state.buffers[f.as_uri()].text == "x = 2\n"
    assert not (workspace / "lib").exists()


async def test_an_editor_that_saves_on_rename_never_gets_the_typing(
    nvim_like: LanguageClient, workspace: Path
) -> None:
    state = _state(nvim_like)
    a = workspace / "a.txt"
    a.write_text("saved\n")
    uri = open_doc(nvim_like, state, a)
    type_text(nvim_like, state, uri, "saved\ntyping\n")
    await settle()
    refused = await call(nvim_like, MOVE, source_path="a.txt", destination_path="b.txt")
    assert refused["error"] == "unsaved_changes" and "save" in refused["message"], refused
    assert a.read_text() == "saved\n" and not state.applied  # nothing sent, nothing saved
    # a clean buffer moves through the editor
    type_text(nvim_like, state, uri, "saved\n")
    await settle()
    moved = await call(nvim_like, MOVE, source_path="a.txt", destination_path="b.txt")
    assert moved["ok"] and moved["via"] == "workspaceEdit", moved
    assert (workspace / "b.txt").read_text() == "saved\n"


async def test_without_resource_operations_the_disk_moves_and_the_result_says_so(
    plain: LanguageClient, workspace: Path
) -> None:
    state = _state(plain)
    a = workspace / "a.txt"
    a.write_text("clean\n")
    uri = open_doc(plain, state, a)
    await settle()
    moved = await call(plain, MOVE, source_path="a.txt", destination_path="b.txt")
    assert moved["ok"] and moved["via"] == "disk", moved
    assert "still shows it under its old name" in moved["message"]
    assert (workspace / "b.txt").read_text() == "clean\n" and not state.applied
    c = workspace / "c.txt"
    c.write_text("c\n")
    curi = open_doc(plain, state, c)
    type_text(plain, state, curi, "c\ntyping\n")
    await settle()
    refused = await call(plain, MOVE, source_path="c.txt", destination_path="d.txt")
    assert refused["error"] == "unsaved_changes", refused
    assert c.exists() and not (workspace / "d.txt").exists()
    # a deletion of an open document needs DeleteFile: refused, nothing deleted
    assert (await call(plain, READ, file_path="b.txt"))["ok"]
    del uri
    gone = await call(plain, DELETE, file_path=str(workspace / "c.txt"), force=True)
    assert gone["error"] == "unsaved_changes", gone


async def test_deleting_an_open_document_closes_it_only_without_typing(
    vscode_like: LanguageClient, workspace: Path
) -> None:
    state = _state(vscode_like)
    d = workspace / "d"
    d.mkdir()
    (d / "open.txt").write_text("open\n")
    (d / "closed.txt").write_text("closed\n")
    uri = open_doc(vscode_like, state, d / "open.txt")
    type_text(vscode_like, state, uri, "open\ntyping\n")
    await settle()
    refused = await call(vscode_like, DELETE, file_path="d", recursive=True, force=True)
    assert refused["error"] == "unsaved_changes", refused
    assert (d / "open.txt").exists() and uri in state.buffers
    type_text(vscode_like, state, uri, "open\n")
    await settle()
    done = await call(vscode_like, DELETE, file_path="d", recursive=True, force=True)
    assert done["ok"] and done["via"] == "workspaceEdit", done
    assert not d.exists() and uri not in state.buffers
    deletes = [
        dc
        for p in state.applied
        for dc in p.edit.document_changes or []
        if isinstance(dc, types.DeleteFile)
    ]
    assert [dc.uri for dc in deletes] == [uri]
    back = await call(vscode_like, UNDO, id=done["change_id"])
    assert back["ok"] and (d / "open.txt").read_text() == "open\n", back
    assert (d / "closed.txt").read_text() == "closed\n"


async def test_a_move_is_never_reported_as_a_change_behind_the_agents_back(
    vscode_like: LanguageClient, workspace: Path
) -> None:
    state = _state(vscode_like)
    (workspace / "f").mkdir()
    for name in ("a.txt", "b.txt"):
        (workspace / "f" / name).write_text(f"{name}\n")
        assert (await call(vscode_like, READ, file_path=f"f/{name}"))["ok"]
    assert (await call(vscode_like, MOVE, source_path="f/a.txt", destination_path="g.txt"))["ok"]
    assert (await call(vscode_like, MOVE, source_path="f", destination_path="h"))["ok"]
    await asyncio.sleep(1.0)  # the watcher's events have come by now
    changed = [p for m, p in state.notifications if m == FILE_CHANGED]
    assert changed == [], changed
    # and the records are fresh where the files are now
    for path in ("g.txt", "h/b.txt"):
        r = await call(vscode_like, EDIT, file_path=path, old_string=".txt", new_string=".md")
        assert r["ok"], (path, r)

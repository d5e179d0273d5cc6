"""History around an editor: changes made in open buffers, and requests the client
cancels while their change is being applied."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import LanguageClient

from steadyhand.protocol.commands import CHECKPOINT, EDIT, HISTORY, READ, REWIND, UNDO, WRITE
from tests.conftest import call, client_with, init_params, server_config
from tests.editor import (
    EditorState,
    close_doc,
    editor_capabilities,
    install,
    open_doc,
    settle,
    type_text,
)

editor_client = client_with(editor=True)


async def _cancelled_halfway(client: LanguageClient, command: str, **params: Any) -> None:
    """Send ``command`` and cancel it while the server waits on the editor: after it has
    applied the change to the buffer and saved it, while a formatter may still run."""
    pending = set(client.protocol._request_futures)
    task = asyncio.ensure_future(
        client.workspace_execute_command_async(
            types.ExecuteCommandParams(command=command, arguments=[params])
        )
    )
    await asyncio.sleep(0.15)
    ids = set(client.protocol._request_futures) - pending
    assert ids, "the command was answered before it could be cancelled"
    for request_id in ids:
        client.protocol.notify("$/cancelRequest", types.CancelParams(id=request_id))
    with pytest.raises(Exception, match="cancel"):
        await task
    await settle(0.3)


async def test_a_change_cancelled_after_it_reached_the_buffer_is_recorded(
    editor_client: LanguageClient, workspace: Path
) -> None:
    state: EditorState = editor_client.editor  # type: ignore[attr-defined]
    f = workspace / "open.txt"
    f.write_text("first\nsecond\n")
    uri = open_doc(editor_client, state, f)
    await settle()
    await call(editor_client, READ, file_path=str(f))
    await _cancelled_halfway(
        editor_client, EDIT, file_path=str(f), old_string="second", new_string="2nd"
    )
    assert state.buffers[uri].text == "first\n2nd\n"

    listed = await call(editor_client, HISTORY, file_path=str(f))
    assert [v["tool"] for v in listed["versions"]] == ["edit"], listed
    undone = await call(editor_client, UNDO, file_path=str(f))
    assert undone["ok"], undone
    assert state.buffers[uri].text == "first\nsecond\n"


async def test_a_rewind_cancelled_halfway_still_restores_every_file(
    editor_client: LanguageClient, workspace: Path
) -> None:
    state: EditorState = editor_client.editor  # type: ignore[attr-defined]
    a, b = workspace / "a.txt", workspace / "b.txt"
    a.write_text("a0\n")
    b.write_text("b0\n")
    cp = await call(editor_client, CHECKPOINT, label="start")
    for f in (a, b):
        await call(editor_client, READ, file_path=str(f))
        assert (await call(editor_client, WRITE, file_path=str(f), content=f.name + " 1\n"))["ok"]
    open_doc(editor_client, state, a)  # restored through the editor, which takes a while
    await settle()

    await _cancelled_halfway(editor_client, REWIND, checkpoint=cp["checkpoint"])
    assert (a.read_text(), b.read_text()) == ("a0\n", "b0\n")
    for f in (a, b):
        listed = await call(editor_client, HISTORY, file_path=str(f))
        assert [v["tool"] for v in listed["versions"]] == ["rewind", "write"], listed


@pytest.mark.parametrize(
    "original",
    [
        "\ufeffhello\r\nworld\r\n".encode("utf-16-le"),
        "café\nworld\n".encode("latin-1"),
    ],
    ids=["utf-16", "latin-1"],
)
@pytest.mark.parametrize("gone", [False, True], ids=["there", "deleted"])
async def test_undo_of_a_change_made_in_a_buffer_restores_the_files_bytes(
    editor_client: LanguageClient, workspace: Path, original: bytes, gone: bool
) -> None:
    state: EditorState = editor_client.editor  # type: ignore[attr-defined]
    f = workspace / "enc.txt"
    f.write_bytes(b"")
    text = original.decode(_codec(original)).lstrip("\ufeff")
    uri = open_doc(editor_client, state, f, text=text)
    f.write_bytes(original)  # the buffer shows the file's text; the file is not UTF-8
    await settle()
    assert (await call(editor_client, READ, file_path=str(f)))["ok"]
    r = await call(editor_client, EDIT, file_path=str(f), old_string="world", new_string="there")
    assert r["ok"], r
    close_doc(editor_client, state, uri)  # this editor saved it as UTF-8
    await settle()
    if gone:
        f.unlink()

    undone = await call(editor_client, UNDO, file_path=str(f), force=gone)
    assert undone["ok"], undone
    assert f.read_bytes() == original


def _codec(data: bytes) -> str:
    return "utf-16" if data.startswith(b"\xff\xfe") else "latin-1"


@pytest_lsp.fixture(config=server_config())
async def deleting_editor(lsp_client: LanguageClient, workspace: Path):  # type: ignore[no-untyped-def]
    state = EditorState()
    install(lsp_client, state)
    lsp_client.editor = state  # type: ignore[attr-defined]
    opts = {"historyDir": str(workspace.parent / "state")}
    await lsp_client.initialize_session(
        init_params(workspace, opts, editor_capabilities(delete=True))
    )
    yield
    await lsp_client.shutdown_session()


async def test_undo_never_deletes_an_open_file_whose_disk_or_buffer_is_not_in_history(
    deleting_editor: LanguageClient, workspace: Path
) -> None:
    state: EditorState = deleting_editor.editor  # type: ignore[attr-defined]
    f = workspace / "made.txt"
    assert (await call(deleting_editor, WRITE, file_path=str(f), content="made\n"))["ok"]
    uri = open_doc(deleting_editor, state, f)
    await settle()
    f.write_text("written by another program\n")  # the clean buffer still shows "made"
    r = await call(deleting_editor, UNDO, file_path=str(f))
    assert r["ok"] is False and r["error"] == "stale", r
    assert f.read_text() == "written by another program\n"
    # unsaved typing in the buffer is never deleted either, even with force
    g = workspace / "typed.txt"
    assert (await call(deleting_editor, WRITE, file_path=str(g), content="v1\n"))["ok"]
    guri = open_doc(deleting_editor, state, g)
    await settle()
    type_text(deleting_editor, state, guri, "v1\nmore typing\n")
    await settle()
    r2 = await call(deleting_editor, UNDO, file_path=str(g), force=True)
    assert r2["ok"] is False and r2["error"] == "stale", r2
    assert g.exists() and state.buffers[guri].text == "v1\nmore typing\n"
    # a clean buffer over an unchanged file is deleted, buffer and all
    h = workspace / "clean.txt"
    assert (await call(deleting_editor, WRITE, file_path=str(h), content="c\n"))["ok"]
    huri = open_doc(deleting_editor, state, h)
    await settle()
    r3 = await call(deleting_editor, UNDO, file_path=str(h))
    assert r3["ok"] and r3["type"] == "delete", r3
    assert not h.exists() and huri not in state.buffers
    assert uri in state.buffers


async def test_rewind_says_which_files_it_restored_in_the_buffer_only(
    editor_client: LanguageClient, workspace: Path
) -> None:
    state: EditorState = editor_client.editor  # type: ignore[attr-defined]
    b = workspace / "b.txt"
    b.write_text("b orig\n")
    await call(editor_client, READ, file_path=str(b), session="A")
    cp = await call(editor_client, CHECKPOINT, session="A")
    r = await call(
        editor_client, EDIT, file_path=str(b), old_string="orig", new_string="agent", session="A"
    )
    assert r["ok"], r
    uri = open_doc(editor_client, state, b)
    await settle()
    b.write_text("b agent\nexternal\n")  # another program, behind the clean buffer
    await settle(0.3)
    out = await call(editor_client, REWIND, session="A", checkpoint=cp["checkpoint"])
    assert out["restored"] == [str(b)] and out["not_on_disk"] == [str(b)], out
    assert "in the editor's buffer only" in out["message"], out["message"]
    assert b.read_text() == "b agent\nexternal\n"  # the other program's text is kept
    assert state.buffers[uri].text == "b orig\n"

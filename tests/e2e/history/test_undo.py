"""File history and undo, end to end through the real server over stdio."""

from __future__ import annotations

import asyncio
from pathlib import Path

from pytest_lsp import LanguageClient

from steadyhand.protocol.commands import EDIT, HISTORY, READ, UNDO, WRITE
from tests.conftest import call, client_with
from tests.editor import EditorState, open_doc, settle

client = client_with()
editor_client = client_with(editor=True)


async def test_undo_restores_the_version_before_and_is_itself_undoable(
    client: LanguageClient, workspace: Path
) -> None:
    f = workspace / "a.txt"
    f.write_text("alpha\nbeta\n")
    assert (await call(client, READ, file_path=str(f)))["ok"]
    edited = await call(client, EDIT, file_path=str(f), old_string="beta", new_string="gamma")
    assert edited["ok"], edited
    assert f.read_text() == "alpha\ngamma\n"

    undone = await call(client, UNDO, file_path=str(f))
    assert undone["ok"], undone
    assert f.read_text() == "alpha\nbeta\n"
    assert "Restored" in undone["message"] and "undo again" in undone["message"]
    assert undone["added"] == 1 and undone["removed"] == 1

    # The undo was recorded like any change: undoing it brings the edit back.
    redone = await call(client, UNDO, file_path=str(f))
    assert redone["ok"], redone
    assert f.read_text() == "alpha\ngamma\n"

    # The session can keep editing after an undo without reading again.
    again = await call(client, EDIT, file_path=str(f), old_string="alpha", new_string="ALPHA")
    assert again["ok"], again

    hist = await call(client, HISTORY, file_path=str(f))
    assert hist["ok"]
    tools = [v["tool"] for v in hist["versions"]]
    assert tools == ["edit", "undo", "undo", "edit"]
    newest = hist["versions"][0]
    assert newest["current"] is True and newest["restorable"] is True
    assert newest["session"] == "default" and newest["existed_before"] is True
    assert newest["added"] == 1 and newest["removed"] == 1
    assert all(not v["current"] for v in hist["versions"][1:])
    assert "newest first" in hist["message"]


async def test_undo_after_an_external_change_is_refused_and_nothing_is_lost(
    client: LanguageClient, workspace: Path
) -> None:
    f = workspace / "notes.md"
    f.write_text("draft one\n")
    await call(client, READ, file_path=str(f))
    r = await call(client, WRITE, file_path=str(f), content="agent version\n")
    assert r["ok"], r
    f.write_text("the user's own work\n")  # changed behind the agent's back

    refused = await call(client, UNDO, file_path=str(f))
    assert refused["ok"] is False and refused["error"] == "stale"
    assert "force: true" in refused["message"]
    assert f.read_text() == "the user's own work\n"

    forced = await call(client, UNDO, file_path=str(f), force=True)
    assert forced["ok"], forced
    assert f.read_text() == "draft one\n"

    # What the forced undo replaced is in history: undoing the undo brings it back exactly.
    back = await call(client, UNDO, file_path=str(f))
    assert back["ok"], back
    assert f.read_text() == "the user's own work\n"


async def test_undo_of_a_creation_deletes_the_file_only_if_untouched(
    client: LanguageClient, workspace: Path
) -> None:
    f = workspace / "pkg" / "new.py"
    made = await call(client, WRITE, file_path=str(f), content="print('hi')\n")
    assert made["ok"], made
    f.write_text("print('edited by the user')\n")

    refused = await call(client, UNDO, file_path=str(f))
    assert refused["ok"] is False and refused["error"] == "stale"
    assert f.exists() and "user" in f.read_text()

    f.write_text("print('hi')\n")  # back to exactly what was created
    deleted = await call(client, UNDO, file_path=str(f))
    assert deleted["ok"], deleted
    assert deleted["type"] == "delete" and not f.exists()

    # Undoing the deletion brings the file back.
    back = await call(client, UNDO, file_path=str(f))
    assert back["ok"], back
    assert f.read_text() == "print('hi')\n"


async def test_undo_by_session_refuses_when_another_session_changed_it_since(
    client: LanguageClient, workspace: Path
) -> None:
    f = workspace / "shared.txt"
    f.write_text("one\ntwo\nthree\n")
    for s in ("a", "b"):
        assert (await call(client, READ, file_path=str(f), session=s))["ok"]
    ra = await call(client, EDIT, file_path=str(f), old_string="one", new_string="ONE", session="a")
    assert ra["ok"], ra
    await call(client, READ, file_path=str(f), session="b")
    rb = await call(
        client, EDIT, file_path=str(f), old_string="three", new_string="THREE", session="b"
    )
    assert rb["ok"], rb

    refused = await call(client, UNDO, file_path=str(f), session="a")
    assert refused["ok"] is False and refused["error"] == "stale"
    assert f.read_text() == "ONE\ntwo\nTHREE\n"

    only_a = await call(client, HISTORY, file_path=str(f), session="a")
    assert [v["session"] for v in only_a["versions"]] == ["a"]

    # b's own undo is fine: its change is the latest.
    ub = await call(client, UNDO, file_path=str(f), session="b")
    assert ub["ok"], ub
    assert f.read_text() == "ONE\ntwo\nthree\n"


async def test_nothing_to_undo(client: LanguageClient, workspace: Path) -> None:
    f = workspace / "untouched.txt"
    f.write_text("x\n")
    hist = await call(client, HISTORY, file_path=str(f))
    assert hist["ok"] and hist["versions"] == []
    r = await call(client, UNDO, file_path=str(f))
    assert r["ok"] is False and r["error"] == "no_history"
    assert f.read_text() == "x\n"


async def test_history_is_kept_in_the_configured_folder(
    client: LanguageClient, workspace: Path
) -> None:
    f = workspace / "k.txt"
    f.write_text("before\n")
    await call(client, READ, file_path=str(f))
    await call(client, WRITE, file_path=str(f), content="after\n")
    state = workspace.parent / "state"
    stores = [p for p in state.iterdir() if p.is_dir()]
    assert len(stores) == 1 and stores[0].name.startswith("ws-")
    index = stores[0] / "index.jsonl"
    # The entry is appended just after the answer is sent: give it a moment.
    for _ in range(200):
        if index.exists() and index.read_text().count("\n") == 1:
            break
        await asyncio.sleep(0.01)
    assert index.read_text().count("\n") == 1
    # the text before and the text after the change, one blob each
    blobs = [b for b in (stores[0] / "blobs").rglob("*") if b.is_file()]
    assert len(blobs) == 2, blobs
    assert stores[0].stat().st_mode & 0o077 == 0  # private: versions may hold secrets


async def test_undo_of_an_open_document_goes_through_the_editor(
    editor_client: LanguageClient, workspace: Path
) -> None:
    f = workspace / "open.txt"
    f.write_text("first\nsecond\n")
    state: EditorState = editor_client.editor  # type: ignore[attr-defined]
    uri = open_doc(editor_client, state, f)
    await settle()
    await call(editor_client, READ, file_path=str(f))
    r = await call(editor_client, EDIT, file_path=str(f), old_string="second", new_string="2nd")
    assert r["ok"], r
    assert state.buffers[uri].text == "first\n2nd\n"
    edits_before = len(state.applied)

    undone = await call(editor_client, UNDO, file_path=str(f))
    assert undone["ok"], undone
    assert undone["via"] == "workspaceEdit"
    assert len(state.applied) == edits_before + 1
    assert state.buffers[uri].text == "first\nsecond\n"


async def test_undo_restores_the_exact_bytes_of_a_utf16_crlf_file(
    client: LanguageClient, workspace: Path
) -> None:
    f = workspace / "win.txt"
    original = "\ufeffline one\r\nline two\r\n".encode("utf-16-le")
    f.write_bytes(original)
    await call(client, READ, file_path=str(f))
    r = await call(client, EDIT, file_path=str(f), old_string="two", new_string="2")
    assert r["ok"], r
    assert f.read_bytes() != original
    undone = await call(client, UNDO, file_path=str(f))
    assert undone["ok"], undone
    assert f.read_bytes() == original

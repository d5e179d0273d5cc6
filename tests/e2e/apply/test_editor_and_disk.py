"""Changes behind the agent's back and open editor buffers: the watcher never reads a
large file whole, a disk change behind a clean open buffer is reported and never written
over, a buffer is written in the file's own line endings, a large CRLF file read by range
is not falsely stale once opened, a save answer that saved nothing is not reported as
saved, an applyEdit error carries its reason, an atomic save by another program is a
modification, a client without applyEdit is never sent one, another program bringing
back the text Steadyhand wrote is reported, a disk written or deleted while an edit is
applied is kept, and the client's own file events are registered for and acted on."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

import pytest_lsp
from lsprotocol import types
from pygls.exceptions import JsonRpcInternalError
from pytest_lsp import LanguageClient
from pytest_lsp.client import captured_exception_key

from steadyhand.protocol.commands import EDIT, FILE_CHANGED, PING, READ, SAVE_DOCUMENTS
from steadyhand.watch import external as external_mod
from tests.conftest import call, init_params, server_config
from tests.editor import (
    EditorState,
    _apply_text_edits,
    _did_change,
    editor_capabilities,
    install,
    open_doc,
    settle,
    type_text,
)


def _start(
    *,
    save_request: bool = True,
    options: dict[str, object] | None = None,
    caps: types.ClientCapabilities | None = None,
    handlers: Any = None,
):  # type: ignore[no-untyped-def]
    @pytest_lsp.fixture(config=server_config())
    async def fixture(lsp_client: LanguageClient, workspace: Path):  # type: ignore[no-untyped-def]
        state = EditorState()
        install(lsp_client, state)
        if handlers is not None:
            for method in ("workspace/applyEdit", SAVE_DOCUMENTS):
                lsp_client.protocol.fm._features.pop(method, None)
            handlers(lsp_client, state)
        lsp_client.editor = state  # type: ignore[attr-defined]
        capabilities = caps or editor_capabilities(save_request=save_request)
        await lsp_client.initialize_session(init_params(workspace, options, capabilities))
        yield
        await lsp_client.shutdown_session()

    return fixture


async def _wait_watching(client: LanguageClient) -> None:
    for _ in range(100):
        if (await call(client, PING))["watcher"]["state"] == "watching":
            return
        await asyncio.sleep(0.05)
    raise AssertionError("the watcher did not start")


async def _notices(state: EditorState, n: int = 1, wait: float = 3.0) -> list[Any]:
    for _ in range(int(wait / 0.05)):
        if len(state.notifications) >= n:
            break
        await asyncio.sleep(0.05)
    return [p for m, p in state.notifications if m == FILE_CHANGED]


def _save_null(client: LanguageClient, state: EditorState) -> None:
    """An editor that applies edits but answers a save request with null, saving nothing."""

    @client.feature(types.WORKSPACE_APPLY_EDIT)
    def apply_edit(params: types.ApplyWorkspaceEditParams) -> types.ApplyWorkspaceEditResult:
        for dc in params.edit.document_changes or []:
            assert isinstance(dc, types.TextDocumentEdit)
            buf = state.buffers[dc.text_document.uri]
            buf.text = _apply_text_edits(buf.text, list(dc.edits), "utf-16")
            buf.version += 1
            _did_change(client, dc.text_document.uri, buf)
        return types.ApplyWorkspaceEditResult(applied=True)

    @client.feature(SAVE_DOCUMENTS)
    def save(params: Any) -> None:
        return None


def _apply_raises(client: LanguageClient, state: EditorState) -> None:
    @client.feature(types.WORKSPACE_APPLY_EDIT)
    def apply_edit(params: types.ApplyWorkspaceEditParams) -> types.ApplyWorkspaceEditResult:
        raise JsonRpcInternalError("editor exploded")


def _no_handlers(client: LanguageClient, state: EditorState) -> None:
    pass


editor = _start()
plain_editor = _start(save_request=False)
always_plain = _start(save_request=False, options={"saveAfterEdit": "always"})
always_saving = _start(options={"saveAfterEdit": "always"})
null_saver = _start(handlers=_save_null)
raising_editor = _start(handlers=_apply_raises)
no_apply_edit = _start(
    caps=types.ClientCapabilities(workspace=types.WorkspaceClientCapabilities(apply_edit=False)),
    handlers=_no_handlers,
)
plain_linked = _start(save_request=False, options={"allowHardLinks": True})
no_apply_edit_linked = _start(
    caps=types.ClientCapabilities(workspace=types.WorkspaceClientCapabilities(apply_edit=False)),
    handlers=_no_handlers,
    options={"allowHardLinks": True},
)


# -- 1. the watcher never reads a large file whole ------------------------------------


async def test_append_to_large_tracked_file_is_reported_from_its_size(
    plain_editor: LanguageClient, workspace: Path
) -> None:
    f = workspace / "big.log"
    f.write_bytes(b"2024-01-01 INFO something happened\n" * 150_000)  # ~5.3 MB
    assert f.stat().st_size > external_mod.WATCH_HASH_MAX_BYTES
    r = await call(plain_editor, READ, file_path="big.log", offset=10, limit=5)
    assert r["ok"], r
    await _wait_watching(plain_editor)
    with open(f, "ab") as out:
        out.write(b"appended\n")
    notes = await _notices(plain_editor.editor)  # type: ignore[attr-defined]
    assert [(os.path.basename(n.path), n.kind) for n in notes] == [("big.log", "modified")]
    # marked once: further appends find every record already changed and are not looked at
    with open(f, "ab") as out:
        out.write(b"appended again\n")
    await asyncio.sleep(0.5)
    assert len(await _notices(plain_editor.editor, wait=0)) == 1  # type: ignore[attr-defined]


# -- 2. the disk changes behind a clean open buffer ----------------------------------


async def test_disk_change_behind_open_buffer_is_reported_and_named(
    plain_editor: LanguageClient, workspace: Path
) -> None:
    f = workspace / "a.txt"
    f.write_text("one\ntwo\n")
    state: EditorState = plain_editor.editor  # type: ignore[attr-defined]
    open_doc(plain_editor, state, f)
    await settle()
    await call(plain_editor, READ, file_path="a.txt")
    await _wait_watching(plain_editor)
    f.write_text("one\ntwo\nfrom git checkout\n")
    notes = await _notices(state)
    assert [(n.kind, n.open) for n in notes] == [("modified", True)]
    r = await call(plain_editor, EDIT, file_path="a.txt", old_string="one", new_string="ONE")
    assert r["ok"] and r["on_disk"] is False, r
    assert "changed on disk behind the editor" in r["message"]
    assert "unsaved changes of the user's" not in r["message"]
    assert f.read_text() == "one\ntwo\nfrom git checkout\n"


async def test_deletion_behind_open_buffer_is_reported_and_named(
    plain_editor: LanguageClient, workspace: Path
) -> None:
    f = workspace / "a.txt"
    f.write_text("one\n")
    state: EditorState = plain_editor.editor  # type: ignore[attr-defined]
    open_doc(plain_editor, state, f)
    await settle()
    await call(plain_editor, READ, file_path="a.txt")
    await _wait_watching(plain_editor)
    f.unlink()
    notes = await _notices(state)
    assert [(n.kind, n.open) for n in notes] == [("deleted", True)]
    r = await call(plain_editor, EDIT, file_path="a.txt", old_string="one", new_string="two")
    assert r["ok"] and r["on_disk"] is False, r
    assert "deleted from disk behind the editor" in r["message"]
    assert not f.exists()


async def test_always_never_overwrites_a_disk_change_behind_the_buffer(
    always_plain: LanguageClient, workspace: Path
) -> None:
    f = workspace / "a.txt"
    f.write_text("one\ntwo\n")
    state: EditorState = always_plain.editor  # type: ignore[attr-defined]
    open_doc(always_plain, state, f)
    await settle()
    await call(always_plain, READ, file_path="a.txt")
    f.write_text("one\ntwo\nthree from git pull\n")
    r = await call(always_plain, EDIT, file_path="a.txt", old_string="one", new_string="ONE")
    assert r["ok"] and r["on_disk"] is False, r
    assert "changed on disk behind the editor" in r["message"]
    assert f.read_text() == "one\ntwo\nthree from git pull\n"


async def test_always_with_save_request_does_not_save_over_a_disk_change(
    always_saving: LanguageClient, workspace: Path
) -> None:
    f = workspace / "a.txt"
    f.write_text("one\n")
    state: EditorState = always_saving.editor  # type: ignore[attr-defined]
    open_doc(always_saving, state, f)
    await settle()
    await call(always_saving, READ, file_path="a.txt")
    f.write_text("one\nother\n")
    r = await call(always_saving, EDIT, file_path="a.txt", old_string="one", new_string="ONE")
    assert r["on_disk"] is False and state.saves == []
    assert f.read_text() == "one\nother\n"


async def test_user_typing_is_still_named_as_such(
    plain_editor: LanguageClient, workspace: Path
) -> None:
    f = workspace / "a.txt"
    f.write_text("one\ntwo\n")
    state: EditorState = plain_editor.editor  # type: ignore[attr-defined]
    uri = open_doc(plain_editor, state, f)
    await settle()
    type_text(plain_editor, state, uri, "one\ntwo\nthree\n")
    await settle()
    await call(plain_editor, READ, file_path="a.txt")
    r = await call(plain_editor, EDIT, file_path="a.txt", old_string="one", new_string="ONE")
    assert r["on_disk"] is False
    assert "unsaved changes of the user's" in r["message"]
    assert f.read_text() == "one\ntwo\n"


async def test_editor_saving_its_buffer_is_not_a_change_behind_it(
    plain_editor: LanguageClient, workspace: Path
) -> None:
    f = workspace / "a.txt"
    f.write_text("one\n")
    state: EditorState = plain_editor.editor  # type: ignore[attr-defined]
    uri = open_doc(plain_editor, state, f)
    await settle()
    await call(plain_editor, READ, file_path="a.txt")
    await _wait_watching(plain_editor)
    type_text(plain_editor, state, uri, "one\ntwo\n")
    await settle()
    f.write_text("one\ntwo\n")  # the editor saves the buffer
    plain_editor.text_document_did_save(
        types.DidSaveTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri))
    )
    await asyncio.sleep(0.6)
    assert await _notices(state, wait=0) == []


# -- 3. a buffer written in the file's own line endings ------------------------------


async def test_lf_buffer_of_crlf_file_is_written_with_crlf(
    plain_editor: LanguageClient, workspace: Path
) -> None:
    f = workspace / "c.txt"
    f.write_bytes(b"a\r\nb\r\nc\r\n")
    open_doc(plain_editor, plain_editor.editor, f, text="a\nb\nc\n")  # type: ignore[attr-defined]
    await settle()
    r0 = await call(plain_editor, READ, file_path="c.txt")
    assert r0["unsaved"] is False
    r = await call(plain_editor, EDIT, file_path="c.txt", old_string="b", new_string="B")
    assert r["ok"] and r["on_disk"] is True, r
    assert f.read_bytes() == b"a\r\nB\r\nc\r\n"


async def test_bom_crlf_file_keeps_its_bom_and_endings(
    plain_editor: LanguageClient, workspace: Path
) -> None:
    f = workspace / "bom.txt"
    f.write_bytes(b"\xef\xbb\xbfa\r\nb\r\n")
    open_doc(plain_editor, plain_editor.editor, f, text="a\nb\n")  # type: ignore[attr-defined]
    await settle()
    await call(plain_editor, READ, file_path="bom.txt")
    r = await call(plain_editor, EDIT, file_path="bom.txt", old_string="a", new_string="A")
    assert r["ok"] and r["on_disk"] is True, r
    assert f.read_bytes() == b"\xef\xbb\xbfA\r\nb\r\n"


async def test_buffer_edit_never_merges_a_lone_cr_with_an_lf(
    plain_editor: LanguageClient, workspace: Path
) -> None:
    f = workspace / "cr.txt"
    f.write_bytes(b"a\rX\nb\n")
    state = plain_editor.editor  # type: ignore[attr-defined]
    uri = open_doc(plain_editor, state, f)
    await settle()
    await call(plain_editor, READ, file_path="cr.txt")
    r = await call(plain_editor, EDIT, file_path="cr.txt", old_string="X", new_string="")
    assert r["ok"] and r["via"] == "workspaceEdit", r
    assert state.buffers[uri].text == "a\r\r\nb\n"


# -- 4. a large CRLF file read by range, then opened unchanged -------------------------


async def test_large_crlf_file_read_by_range_is_not_stale_once_opened(
    plain_editor: LanguageClient, workspace: Path
) -> None:
    f = workspace / "big.txt"
    f.write_bytes("".join(f"line {i}\r\n" for i in range(40000)).encode())
    r0 = await call(plain_editor, READ, file_path="big.txt", offset=1, limit=10)
    assert r0["ok"], r0
    open_doc(plain_editor, plain_editor.editor, f)  # type: ignore[attr-defined]
    await settle()
    r = await call(
        plain_editor, EDIT, file_path="big.txt", old_string="line 3\n", new_string="LINE 3\n"
    )
    assert r["ok"], r
    assert f.read_bytes().startswith(b"line 0\r\nline 1\r\nline 2\r\nLINE 3\r\nline 4\r\n")


# -- 5. a save answer that saved nothing ---------------------------------------------


async def test_save_answer_without_a_save_is_not_reported_saved(
    null_saver: LanguageClient, workspace: Path
) -> None:
    f = workspace / "a.txt"
    f.write_text("one\n")
    open_doc(null_saver, null_saver.editor, f)  # type: ignore[attr-defined]
    await settle()
    await call(null_saver, READ, file_path="a.txt")
    r = await call(null_saver, EDIT, file_path="a.txt", old_string="one", new_string="two")
    assert r["ok"] and r["on_disk"] is False, r
    assert "Saved to disk" not in r["message"]
    assert "without saying it saved it" in r["message"]
    assert f.read_text() == "one\n"


# -- 6. an applyEdit error's reason; an atomic save by another program ---------------


async def test_apply_edit_error_carries_its_reason(
    raising_editor: LanguageClient, workspace: Path
) -> None:
    f = workspace / "a.txt"
    f.write_text("one\n")
    open_doc(raising_editor, raising_editor.editor, f)  # type: ignore[attr-defined]
    await settle()
    await call(raising_editor, READ, file_path="a.txt")
    r = await call(raising_editor, EDIT, file_path="a.txt", old_string="one", new_string="x")
    # the client's handler failing is this test's point, not a fault of the test
    item = raising_editor._pytest_item  # type: ignore[attr-defined]
    item.stash[captured_exception_key] = None
    assert r["error"] == "edit_rejected", r
    assert "editor exploded" in r["reason"]
    assert f.read_text() == "one\n"


async def test_atomic_save_by_another_program_is_a_modification(
    editor: LanguageClient, workspace: Path
) -> None:
    for name in ("a.txt", "b.txt"):
        (workspace / name).write_text("x\n")
        await call(editor, READ, file_path=name)
    await _wait_watching(editor)
    os.rename(workspace / "a.txt", workspace / "renamed.txt")
    tmp = workspace / "tmp"
    tmp.write_text("y\n")
    os.rename(tmp, workspace / "b.txt")
    notes = await _notices(editor.editor, 2)  # type: ignore[attr-defined]
    assert sorted((os.path.basename(n.path), n.kind) for n in notes) == [
        ("a.txt", "deleted"),
        ("b.txt", "modified"),
    ]


# -- 7. a client without workspace.applyEdit -----------------------------------------


async def test_no_apply_edit_clean_buffer_is_written_to_disk(
    no_apply_edit: LanguageClient, workspace: Path
) -> None:
    f = workspace / "a.txt"
    f.write_text("one\n")
    open_doc(no_apply_edit, no_apply_edit.editor, f)  # type: ignore[attr-defined]
    await settle()
    await call(no_apply_edit, READ, file_path="a.txt")
    r = await call(no_apply_edit, EDIT, file_path="a.txt", old_string="one", new_string="two")
    assert r["ok"] and r["on_disk"] is True, r
    assert "applyEdit" in r["message"]
    assert f.read_text() == "two\n"


async def test_no_apply_edit_unsaved_buffer_is_refused_with_what_to_do(
    no_apply_edit: LanguageClient, workspace: Path
) -> None:
    f = workspace / "a.txt"
    f.write_text("one\n")
    state: EditorState = no_apply_edit.editor  # type: ignore[attr-defined]
    uri = open_doc(no_apply_edit, state, f)
    await settle()
    type_text(no_apply_edit, state, uri, "one\ntyped\n")
    await settle()
    await call(no_apply_edit, READ, file_path="a.txt")
    r = await call(no_apply_edit, EDIT, file_path="a.txt", old_string="one", new_string="two")
    assert r["error"] == "edit_rejected", r
    assert "workspace.applyEdit" in r["message"]
    assert "save or close the file" in r["message"]
    assert f.read_text() == "one\n"


# -- 8. another program bringing back the text Steadyhand wrote ----------------------


async def test_text_brought_back_by_another_program_after_a_change_is_reported(
    plain_editor: LanguageClient, workspace: Path
) -> None:
    f = workspace / "a.txt"
    f.write_text("one\n")
    await call(plain_editor, READ, file_path="a.txt")
    r = await call(plain_editor, EDIT, file_path="a.txt", old_string="one", new_string="two")
    assert r["ok"] and r["via"] == "disk", r
    await _wait_watching(plain_editor)
    state: EditorState = plain_editor.editor  # type: ignore[attr-defined]
    f.write_text("three\n")
    assert len(await _notices(state)) == 1
    r = await call(plain_editor, READ, file_path="a.txt")
    assert "three" in r["message"], r
    f.write_text("two\n")  # another program's undo: the text the agent wrote, once more
    notes = await _notices(state, 2)
    assert [(os.path.basename(n.path), n.kind) for n in notes] == [
        ("a.txt", "modified"),
        ("a.txt", "modified"),
    ]


# -- 9. another program writing or deleting the file while an edit is applied ---------


async def test_a_disk_written_during_the_edit_is_not_saved_over_by_the_editor(
    editor: LanguageClient, workspace: Path
) -> None:
    f = workspace / "a.txt"
    f.write_text("one\n")
    state: EditorState = editor.editor  # type: ignore[attr-defined]
    uri = open_doc(editor, state, f)
    await settle()
    await call(editor, READ, file_path="a.txt")
    state.during_edit = lambda: f.write_text("one\nfrom git pull\n")
    r = await call(editor, EDIT, file_path="a.txt", old_string="one", new_string="ONE")
    assert r["ok"] and r["on_disk"] is False, r
    assert "changed by someone else" in r["message"]
    assert state.saves == []
    assert f.read_text() == "one\nfrom git pull\n"
    assert state.buffers[uri].text == "ONE\n"


async def test_a_file_deleted_during_the_edit_is_not_written_back(
    plain_editor: LanguageClient, workspace: Path
) -> None:
    f = workspace / "a.txt"
    f.write_text("one\n")
    state: EditorState = plain_editor.editor  # type: ignore[attr-defined]
    uri = open_doc(plain_editor, state, f)
    await settle()
    await call(plain_editor, READ, file_path="a.txt")
    state.during_edit = f.unlink
    r = await call(plain_editor, EDIT, file_path="a.txt", old_string="one", new_string="ONE")
    assert r["ok"] and r["on_disk"] is False, r
    assert "deleted" in r["message"]
    assert not f.exists()
    assert state.buffers[uri].text == "ONE\n"


# -- 10. the client's file events ------------------------------------------------------


def _file_events_editor(options: dict[str, object] | None):  # type: ignore[no-untyped-def]
    @pytest_lsp.fixture(config=server_config())
    async def fixture(lsp_client: LanguageClient, workspace: Path):  # type: ignore[no-untyped-def]
        state = EditorState()
        install(lsp_client, state)
        registrations: list[types.Registration] = []

        @lsp_client.feature(types.CLIENT_REGISTER_CAPABILITY)
        def register(params: types.RegistrationParams) -> None:
            registrations.extend(params.registrations)

        lsp_client.editor = state  # type: ignore[attr-defined]
        lsp_client.registrations = registrations  # type: ignore[attr-defined]
        caps = editor_capabilities()
        assert caps.workspace is not None
        caps.workspace.did_change_watched_files = types.DidChangeWatchedFilesClientCapabilities(
            dynamic_registration=True
        )
        await lsp_client.initialize_session(init_params(workspace, options, caps))
        yield
        await lsp_client.shutdown_session()

    return fixture


file_events_editor = _file_events_editor(None)
file_events_only = _file_events_editor({"watch": False})


async def test_file_events_are_registered_for_and_nothing_is_watched_before_a_read(
    file_events_editor: LanguageClient,
) -> None:
    for _ in range(40):
        if file_events_editor.registrations:  # type: ignore[attr-defined]
            break
        await asyncio.sleep(0.05)
    regs: list[types.Registration] = file_events_editor.registrations  # type: ignore[attr-defined]
    assert [r.method for r in regs] == [types.WORKSPACE_DID_CHANGE_WATCHED_FILES]
    ping = await call(file_events_editor, PING)
    assert ping["watcher"]["state"] == "idle", ping


async def test_a_client_file_event_marks_every_session_and_is_reported(
    file_events_only: LanguageClient, workspace: Path
) -> None:
    f = workspace / "a.txt"
    f.write_text("one\n")
    for session in ("default", "other"):
        await call(file_events_only, READ, file_path="a.txt", session=session)
    f.write_text("two\n")
    file_events_only.workspace_did_change_watched_files(
        types.DidChangeWatchedFilesParams(
            changes=[types.FileEvent(uri=f.as_uri(), type=types.FileChangeType.Changed)]
        )
    )
    notes = await _notices(file_events_only.editor)  # type: ignore[attr-defined]
    assert [(os.path.basename(n.path), n.kind) for n in notes] == [("a.txt", "modified")]
    f.write_text("one\n")  # back to what both sessions read: still no stub for either
    for session in ("default", "other"):
        r = await call(file_events_only, READ, file_path="a.txt", session=session)
        assert r["type"] == "text" and "one" in r["message"], r


# -- an editor that never answers an edit ----------------------------------------------


_ANSWER = asyncio.Event()


def _never_answers(client: LanguageClient, state: EditorState) -> None:
    @client.feature(types.WORKSPACE_APPLY_EDIT)
    async def apply_edit(params: types.ApplyWorkspaceEditParams) -> types.ApplyWorkspaceEditResult:
        await _ANSWER.wait()  # only once the test is over
        return types.ApplyWorkspaceEditResult(applied=False)


silent_editor = _start(handlers=_never_answers, options={"applyEditTimeoutMs": 300})


async def test_an_edit_the_editor_never_answers_is_refused_and_frees_the_file(
    silent_editor: LanguageClient, workspace: Path
) -> None:
    f = workspace / "s.txt"
    f.write_text("one\n")
    open_doc(silent_editor, silent_editor.editor, f)  # type: ignore[attr-defined]
    await settle()
    await call(silent_editor, READ, file_path="s.txt")
    r = await asyncio.wait_for(
        call(silent_editor, EDIT, file_path="s.txt", old_string="one", new_string="two"), 30
    )
    assert r["ok"] is False and r["error"] == "edit_rejected", r
    assert r["reason"] == "no answer from the editor" and "Read the file again" in r["message"]
    assert f.read_text() == "one\n"
    # the file is not left locked: the next call on it is answered too
    again = await asyncio.wait_for(
        call(silent_editor, EDIT, file_path="s.txt", old_string="one", new_string="three"), 30
    )
    assert again["error"] == "edit_rejected", again
    _ANSWER.set()  # let the held answers go before the client shuts down
    await settle()


# -- the editor's own writes keep the allowHardLinks setting ---------------------------


async def test_buffer_written_behind_the_editor_keeps_allow_hard_links(
    plain_linked: LanguageClient, workspace: Path
) -> None:
    # The client cannot save on request, so the server writes the buffer's text itself:
    # with allowHardLinks on, a file with a second name is written like any other.
    f = workspace / "a.txt"
    f.write_text("one\n")
    (workspace / "twin.txt").hardlink_to(f)
    open_doc(plain_linked, plain_linked.editor, f)  # type: ignore[attr-defined]
    await settle()
    assert (await call(plain_linked, READ, file_path="a.txt"))["ok"]
    r = await call(plain_linked, EDIT, file_path="a.txt", old_string="one", new_string="two")
    assert r["ok"] and r["on_disk"] is True, r
    assert f.read_text() == "two\n"


async def test_write_for_a_client_without_apply_edit_keeps_allow_hard_links(
    no_apply_edit_linked: LanguageClient, workspace: Path
) -> None:
    f = workspace / "a.txt"
    f.write_text("one\n")
    (workspace / "twin.txt").hardlink_to(f)
    open_doc(no_apply_edit_linked, no_apply_edit_linked.editor, f)  # type: ignore[attr-defined]
    await settle()
    assert (await call(no_apply_edit_linked, READ, file_path="a.txt"))["ok"]
    r = await call(
        no_apply_edit_linked, EDIT, file_path="a.txt", old_string="one", new_string="two"
    )
    assert r["ok"] and r["on_disk"] is True, r
    assert f.read_text() == "two\n"

"""End to end with an editor-like client: open buffers are the truth, edits go through
versioned WorkspaceEdits, disk follows per saveAfterEdit, and the watcher catches changes
made behind the agent's back."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import LanguageClient

from steadyhand.protocol.commands import EDIT, NOTEBOOK_EDIT, READ, UNDO, WRITE
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


def _start(
    save_request: bool = True,
    document_changes: bool = True,
    encodings: list[str] | None = None,
    options: dict[str, object] | None = None,
):  # type: ignore[no-untyped-def]
    @pytest_lsp.fixture(config=server_config())
    async def fixture(lsp_client: LanguageClient, workspace: Path):  # type: ignore[no-untyped-def]
        state = EditorState()
        if encodings:
            state.position_encoding = encodings[0]
        install(lsp_client, state)
        lsp_client.editor = state  # type: ignore[attr-defined]
        await lsp_client.initialize_session(
            init_params(
                workspace,
                options,
                editor_capabilities(
                    save_request=save_request,
                    document_changes=document_changes,
                    encodings=encodings,
                ),
            )
        )
        yield
        await lsp_client.shutdown_session()

    return fixture


editor = _start()
plain_editor = _start(save_request=False)
old_editor = _start(save_request=False, document_changes=False)
utf8_editor = _start(encodings=["utf-8"])
utf32_editor = _start(encodings=["utf-32"])
never_save = _start(options={"saveAfterEdit": "never"})
always_save = _start(options={"saveAfterEdit": "always"})


def state_of(client: LanguageClient) -> EditorState:
    return client.editor  # type: ignore[attr-defined,no-any-return]


async def test_read_returns_buffer_with_unsaved_flag(
    editor: LanguageClient, workspace: Path
) -> None:
    f = workspace / "a.txt"
    f.write_text("disk text\n")
    st = state_of(editor)
    uri = open_doc(editor, st, f)
    type_text(editor, st, uri, "buffer text\n")
    await settle()
    r = await call(editor, READ, file_path="a.txt")
    assert r["ok"] and r["source"] == "buffer" and r["unsaved"] is True
    assert "buffer text" in r["message"] and "disk text" not in r["message"]


async def test_edit_open_doc_is_one_minimal_versioned_edit_and_saves_when_clean(
    editor: LanguageClient, workspace: Path
) -> None:
    f = workspace / "m.py"
    f.write_text("".join(f"x{i} = {i}\n" for i in range(50)))
    st = state_of(editor)
    uri = open_doc(editor, st, f)
    await settle()
    await call(editor, READ, file_path="m.py")
    r = await call(editor, EDIT, file_path="m.py", old_string="x25 = 25", new_string="x25 = 'x'")
    assert r["ok"], r
    assert r["via"] == "workspaceEdit" and r["on_disk"] is True
    (params,) = st.applied
    (doc_edit,) = params.edit.document_changes or []
    assert isinstance(doc_edit, types.TextDocumentEdit)
    assert doc_edit.text_document.version == 1  # the version the check validated
    (te,) = doc_edit.edits
    assert te.range.start.line == 25 and te.range.end.line == 25  # minimal range
    assert te.new_text == "'x'"
    assert (
        params.edit.change_annotations
        and not next(iter(params.edit.change_annotations.values())).needs_confirmation
    )
    assert st.buffers[uri].text.count("x25 = 'x'") == 1
    assert st.saves == [[uri]]  # saved through the client because the buffer was clean
    assert f.read_text() == st.buffers[uri].text
    # the agent can edit again without re-reading
    r2 = await call(editor, EDIT, file_path="m.py", old_string="x1 = 1\n", new_string="x1 = 11\n")
    assert r2["ok"], r2


async def test_user_typing_makes_agent_edit_stale_and_buffer_intact(
    editor: LanguageClient, workspace: Path
) -> None:
    f = workspace / "t.txt"
    f.write_text("alpha\nbeta\n")
    st = state_of(editor)
    uri = open_doc(editor, st, f)
    await settle()
    await call(editor, READ, file_path="t.txt")
    type_text(editor, st, uri, "alpha\nbeta\ngamma typed by user\n")
    await settle()
    r = await call(editor, EDIT, file_path="t.txt", old_string="alpha", new_string="ALPHA")
    assert r["error"] == "stale" and "+gamma typed by user" in r["diff"]
    assert st.buffers[uri].text == "alpha\nbeta\ngamma typed by user\n"
    assert st.applied == [] and f.read_text() == "alpha\nbeta\n"


async def test_unsaved_user_changes_are_never_saved(
    editor: LanguageClient, workspace: Path
) -> None:
    f = workspace / "u.txt"
    f.write_text("one\ntwo\n")
    st = state_of(editor)
    uri = open_doc(editor, st, f)
    type_text(editor, st, uri, "one\ntwo\nuser draft\n")
    await settle()
    await call(editor, READ, file_path="u.txt")
    r = await call(editor, EDIT, file_path="u.txt", old_string="one", new_string="ONE")
    assert r["ok"] and r["on_disk"] is False and "not saved" in r["message"]
    assert st.saves == []
    assert f.read_text() == "one\ntwo\n"  # the user's draft was not saved behind their back
    assert st.buffers[uri].text == "ONE\ntwo\nuser draft\n"


async def test_version_moved_between_check_and_apply_is_edit_rejected(
    editor: LanguageClient, workspace: Path
) -> None:
    f = workspace / "v.txt"
    f.write_text("keep\n")
    st = state_of(editor)
    uri = open_doc(editor, st, f)
    await settle()
    await call(editor, READ, file_path="v.txt")
    # The editor's buffer moves on without telling the server (a race): same text, new version.
    st.buffers[uri].version += 5
    r = await call(editor, EDIT, file_path="v.txt", old_string="keep", new_string="changed")
    assert r["ok"] is False and r["error"] == "edit_rejected" and "version" in r["message"]
    assert st.buffers[uri].text == "keep\n" and f.read_text() == "keep\n"
    assert st.refused == 1


async def test_format_on_save_becomes_the_new_baseline(
    editor: LanguageClient, workspace: Path
) -> None:
    f = workspace / "fmt.py"
    f.write_text("a=1\n")
    st = state_of(editor)
    st.formatter = lambda text: text.replace("=", " = ").replace("  ", " ")
    open_doc(editor, st, f)
    await settle()
    await call(editor, READ, file_path="fmt.py")
    r = await call(editor, EDIT, file_path="fmt.py", old_string="a=1", new_string="a=1\nb=2")
    assert r["ok"] and "format-on-save" in r["message"], r
    assert f.read_text() == "a = 1\nb = 2\n"
    # the diff is what the file went through, formatter included
    assert r["diff"].endswith("@@ -1 +1,2 @@\n-a=1\n+a = 1\n+b = 2\n"), r["diff"]
    assert (r["added"], r["removed"]) == (2, 1), r
    r2 = await call(editor, EDIT, file_path="fmt.py", old_string="b = 2", new_string="b = 3")
    assert r2["ok"], r2


async def test_without_save_request_server_writes_buffer_text(
    plain_editor: LanguageClient, workspace: Path
) -> None:
    f = workspace / "p.txt"
    f.write_bytes(b"l1\r\nl2\r\n")
    st = state_of(plain_editor)
    uri = open_doc(plain_editor, st, f)
    await settle()
    await call(plain_editor, READ, file_path="p.txt")
    r = await call(plain_editor, EDIT, file_path="p.txt", old_string="l2", new_string="L2")
    assert r["ok"] and r["on_disk"] is True
    assert f.read_bytes() == b"l1\r\nL2\r\n" == st.buffers[uri].text.encode()


async def test_mixed_endings_in_an_open_document_agree_with_the_disk(
    plain_editor: LanguageClient, workspace: Path
) -> None:
    """Edits and notebook edits of an open document with mixed line endings: the editor's
    buffer ends up exactly as the disk would (lines left as they were keep their endings),
    so the change is confirmed, not reported as rejected."""
    st = state_of(plain_editor)
    f = workspace / "m.txt"
    f.write_bytes(b"a\r\nb\r\nc\nd\r\n")
    uri = open_doc(plain_editor, st, f)
    await settle()
    await call(plain_editor, READ, file_path="m.txt")
    r = await call(
        plain_editor, EDIT, file_path="m.txt", old_string="b\nc\nd", new_string="b\nc\nD"
    )
    assert r["ok"] and r["via"] == "workspaceEdit", r
    assert st.buffers[uri].text.encode() == f.read_bytes() == b"a\r\nb\r\nc\nD\r\n"
    nb = workspace / "m.ipynb"
    nb.write_bytes(
        b'{\r\n "cells": [\r\n  {\r\n   "cell_type": "markdown",\r\n   "id": "c1",\r\n'
        b'   "metadata": {},\r\n   "source": [\n    "line one\\n",\n    "line two"\n   ]\r\n'
        b'  }\r\n ],\r\n "metadata": {},\r\n "nbformat": 4,\r\n "nbformat_minor": 5\r\n}\r\n'
    )
    nb_uri = open_doc(plain_editor, st, nb)
    await settle()
    await call(plain_editor, READ, file_path="m.ipynb")
    e = await call(
        plain_editor,
        NOTEBOOK_EDIT,
        file_path="m.ipynb",
        cell_id="c1",
        new_source="line one\nline TWO",
    )
    assert e["ok"], e
    assert st.buffers[nb_uri].text.encode() == nb.read_bytes()
    assert b'"line TWO"\n   ]\r\n' in nb.read_bytes()


async def test_without_save_request_a_disk_written_meanwhile_is_not_overwritten(
    plain_editor: LanguageClient, workspace: Path
) -> None:
    """The server writes the buffer to disk itself only over the file as the change found
    it: another program's write during the edit is kept, and the result says so."""
    f = workspace / "p.txt"
    f.write_bytes(b"l1\nl2\n")
    st = state_of(plain_editor)
    uri = open_doc(plain_editor, st, f)
    await settle()
    await call(plain_editor, READ, file_path="p.txt")
    st.during_edit = lambda: f.write_bytes(b"l1\nl2\nfrom git\n")
    r = await call(plain_editor, EDIT, file_path="p.txt", old_string="l2", new_string="L2")
    assert r["ok"] and r["on_disk"] is False, r
    assert "changed by someone else" in r["message"]
    assert f.read_bytes() == b"l1\nl2\nfrom git\n"
    assert st.buffers[uri].text == "l1\nL2\n"


async def test_client_without_document_changes_gets_changes(
    old_editor: LanguageClient, workspace: Path
) -> None:
    f = workspace / "o.txt"
    f.write_text("old\n")
    st = state_of(old_editor)
    uri = open_doc(old_editor, st, f)
    await settle()
    await call(old_editor, READ, file_path="o.txt")
    r = await call(old_editor, EDIT, file_path="o.txt", old_string="old", new_string="new")
    assert r["ok"], r
    (params,) = st.applied
    assert params.edit.document_changes is None and uri in (params.edit.changes or {})


async def test_write_open_doc_minimal_edit(editor: LanguageClient, workspace: Path) -> None:
    f = workspace / "w.txt"
    f.write_text("a\nb\nc\n")
    st = state_of(editor)
    uri = open_doc(editor, st, f)
    await settle()
    await call(editor, READ, file_path="w.txt")
    r = await call(editor, WRITE, file_path="w.txt", content="a\nB\nc\n")
    assert r["ok"] and r["type"] == "update", r
    (params,) = st.applied
    (doc_edit,) = params.edit.document_changes or []
    (te,) = doc_edit.edits  # type: ignore[union-attr]
    assert te.range.start.line == 1 and te.new_text == "B"
    assert st.buffers[uri].text == "a\nB\nc\n" == f.read_text()


async def _unicode_case(client: LanguageClient, workspace: Path) -> None:
    f = workspace / "uni.txt"
    text = "emoji 😀 and 漢字 and e\u0301 here\nsecond 😀😀 line\n"
    f.write_text(text)
    st = state_of(client)
    uri = open_doc(client, st, f)
    await settle()
    await call(client, READ, file_path="uni.txt")
    r = await call(client, EDIT, file_path="uni.txt", old_string="here", new_string="there")
    assert r["ok"], r
    r2 = await call(client, EDIT, file_path="uni.txt", old_string="😀 line", new_string="🙂 line")
    assert r2["ok"], r2
    expected = "emoji 😀 and 漢字 and e\u0301 there\nsecond 😀🙂 line\n"
    assert st.buffers[uri].text == expected
    assert f.read_text() == expected


async def test_utf16_positions(editor: LanguageClient, workspace: Path) -> None:
    await _unicode_case(editor, workspace)


async def test_utf8_positions(utf8_editor: LanguageClient, workspace: Path) -> None:
    await _unicode_case(utf8_editor, workspace)


async def test_utf32_positions(utf32_editor: LanguageClient, workspace: Path) -> None:
    await _unicode_case(utf32_editor, workspace)


async def test_form_feed_and_line_separator_lines(editor: LanguageClient, workspace: Path) -> None:
    f = workspace / "ff.txt"
    text = "page1\x0cstill line 1\nline2 \u2028 same line\nline3 target\n"
    f.write_bytes(text.encode())
    st = state_of(editor)
    uri = open_doc(editor, st, f)
    await settle()
    r = await call(editor, READ, file_path="ff.txt")
    assert r["total_lines"] == 3, r
    e = await call(editor, EDIT, file_path="ff.txt", old_string="target", new_string="TARGET")
    assert e["ok"], e
    assert st.buffers[uri].text == text.replace("target", "TARGET")


async def test_save_never_and_always(never_save: LanguageClient, workspace: Path) -> None:
    f = workspace / "n.txt"
    f.write_text("n\n")
    st = state_of(never_save)
    uri = open_doc(never_save, st, f)
    await settle()
    await call(never_save, READ, file_path="n.txt")
    r = await call(never_save, EDIT, file_path="n.txt", old_string="n", new_string="N")
    assert r["ok"] and r["on_disk"] is False and f.read_text() == "n\n"
    assert st.buffers[uri].text == "N\n"


async def test_save_always_saves_even_with_user_changes(
    always_save: LanguageClient, workspace: Path
) -> None:
    f = workspace / "a.txt"
    f.write_text("a\n")
    st = state_of(always_save)
    uri = open_doc(always_save, st, f)
    type_text(always_save, st, uri, "a\nuser\n")
    await settle()
    await call(always_save, READ, file_path="a.txt")
    r = await call(always_save, EDIT, file_path="a.txt", old_string="a\n", new_string="A\n")
    assert r["ok"] and r["on_disk"] is True and f.read_text() == "A\nuser\n"


async def test_closed_file_goes_to_disk_directly(editor: LanguageClient, workspace: Path) -> None:
    f = workspace / "closed.txt"
    f.write_text("c\n")
    st = state_of(editor)
    uri = open_doc(editor, st, f)
    await settle()
    await call(editor, READ, file_path="closed.txt")
    close_doc(editor, st, uri)
    await settle()
    r = await call(editor, EDIT, file_path="closed.txt", old_string="c", new_string="C")
    assert r["ok"] and r["via"] == "disk" and st.applied == []
    assert f.read_text() == "C\n"
    c = await call(editor, WRITE, file_path="brand/new.txt", content="n\n")
    assert c["ok"] and st.applied == [] and (workspace / "brand/new.txt").read_text() == "n\n"


@pytest.mark.slow
async def test_watcher_marks_stale_and_notifies(editor: LanguageClient, workspace: Path) -> None:
    f = workspace / "watched.txt"
    f.write_text("v1\n")
    st = state_of(editor)
    first = await call(editor, READ, file_path="watched.txt")
    assert first["type"] == "text"
    await asyncio.sleep(0.5)  # the watcher starts in the background
    f.write_text("v2\n")
    for _ in range(50):
        if st.notifications:
            break
        await asyncio.sleep(0.1)
    assert st.notifications, "no steadyhand/fileChanged notification"
    _, params = st.notifications[0]
    path = params.path if hasattr(params, "path") else params["path"]
    assert path == str(f.resolve())
    again = await call(editor, READ, file_path="watched.txt")
    assert again["type"] == "text" and "v2" in again["message"]
    # the server's own writes are not reported
    st.notifications.clear()
    e = await call(editor, EDIT, file_path="watched.txt", old_string="v2", new_string="v3")
    assert e["ok"]
    await asyncio.sleep(1.0)
    assert st.notifications == []


@pytest_lsp.fixture(config=server_config())
async def skipping_editor(lsp_client: LanguageClient, workspace: Path):  # type: ignore[no-untyped-def]
    """Like Neovim 0.7: the user types just as the edit arrives; the editor then skips the
    outdated versioned edit (or applies unversioned `changes` at shifted positions) and
    still answers ``applied: true``."""
    state = EditorState()

    @lsp_client.feature(types.WORKSPACE_APPLY_EDIT)
    def apply_edit(params: types.ApplyWorkspaceEditParams) -> types.ApplyWorkspaceEditResult:
        state.applied.append(params)
        for uri, buf in state.buffers.items():
            type_text(lsp_client, state, uri, "typed just now\n" + buf.text)
        return types.ApplyWorkspaceEditResult(applied=True)

    lsp_client.editor = state  # type: ignore[attr-defined]
    await lsp_client.initialize_session(
        init_params(workspace, None, editor_capabilities(save_request=False))
    )
    yield
    await lsp_client.shutdown_session()


async def test_applied_but_not_in_buffer_is_rejected_and_not_saved(
    skipping_editor: LanguageClient, workspace: Path
) -> None:
    f = workspace / "r.txt"
    f.write_text("keep me\n")
    st = state_of(skipping_editor)
    uri = open_doc(skipping_editor, st, f)
    await settle()
    await call(skipping_editor, READ, file_path="r.txt")
    r = await call(skipping_editor, EDIT, file_path="r.txt", old_string="keep", new_string="lose")
    assert r["ok"] is False and r["error"] == "edit_rejected", r
    assert "does not show the change" in r["message"]
    assert len(st.applied) == 1
    assert f.read_text() == "keep me\n"  # the agent's text never reached the disk
    assert st.buffers[uri].text == "typed just now\nkeep me\n"
    again = await call(skipping_editor, EDIT, file_path="r.txt", old_string="keep", new_string="x")
    assert again["error"] == "stale" and "+typed just now" in again["diff"]


async def test_typing_right_after_an_agent_edit_is_never_saved(
    editor: LanguageClient, workspace: Path
) -> None:
    """The editor confirms the edit and the user types at once: nothing is saved (it
    would write their typing), and the result says the disk is unchanged. The typing is
    caught by the server before it asks for a save, or, when its report arrives a moment
    after that check, by the editor, which saves no version newer than the edit's."""
    f = workspace / "s.txt"
    f.write_text("alpha\nbeta\n")
    st = state_of(editor)
    uri = open_doc(editor, st, f)
    await settle()
    await call(editor, READ, file_path="s.txt")
    st.typed_after_edit = "user typing\n"
    r = await call(editor, EDIT, file_path="s.txt", old_string="alpha", new_string="ALPHA")
    assert r["ok"] and r["on_disk"] is False, r
    if st.saves:
        assert "did not save it (the document changed)" in r["message"], r["message"]
    else:
        assert "the user may be typing" in r["message"], r["message"]
    assert f.read_text() == "alpha\nbeta\n"
    assert st.buffers[uri].text == "ALPHA\nbeta\nuser typing\n"
    # the agent's view is the text it made: the typing makes its next edit stale
    again = await call(editor, EDIT, file_path="s.txt", old_string="beta", new_string="B")
    assert again["error"] == "stale", again


@pytest.mark.slow
async def test_an_edit_the_editor_has_not_reported_yet_saves_no_typing(
    editor: LanguageClient, workspace: Path
) -> None:
    """The user keeps typing, so the editor holds its report of the new text back (as
    VS Code's client does) past the server's wait. The save request then names no version,
    and the editor saves nothing newer than what the agent's edit left: the typing is not
    saved, and the result says the disk is unchanged."""
    f = workspace / "h.txt"
    f.write_text("alpha\nbeta\n")
    st = state_of(editor)
    uri = open_doc(editor, st, f)
    await settle()
    await call(editor, READ, file_path="h.txt")
    st.typed_after_edit, st.held_report_s = "user typing\n", 2.0
    r = await call(editor, EDIT, file_path="h.txt", old_string="alpha", new_string="ALPHA")
    assert r["ok"] and r["via"] == "workspaceEdit" and r["on_disk"] is False, r
    assert "did not save it (the document changed)" in r["message"], r["message"]
    await settle(2.2)  # the held report arrives
    assert f.read_text() == "alpha\nbeta\n"
    assert st.buffers[uri].text == "ALPHA\nbeta\nuser typing\n"
    again = await call(editor, EDIT, file_path="h.txt", old_string="beta", new_string="B")
    assert again["error"] == "stale" and "+user typing" in again["diff"], again


async def test_typing_as_the_save_arrives_is_never_saved(
    editor: LanguageClient, workspace: Path
) -> None:
    """The save request names the version right after the edit; the editor, where the
    user typed meanwhile, does not save, and the result says the disk is unchanged."""
    f = workspace / "t.txt"
    f.write_text("alpha\nbeta\n")
    st = state_of(editor)
    open_doc(editor, st, f)
    await settle()
    await call(editor, READ, file_path="t.txt")
    st.typed_on_save = "typed\n"
    r = await call(editor, EDIT, file_path="t.txt", old_string="alpha", new_string="ALPHA")
    assert r["ok"] and r["on_disk"] is False, r
    assert "did not save" in r["message"]
    assert len(st.saves) == 1 and f.read_text() == "alpha\nbeta\n"


async def test_a_document_closed_mid_change_is_not_written_from_its_buffer(
    editor: LanguageClient, workspace: Path
) -> None:
    """The user closes the tab (discarding unsaved typing) while a change to a big buffer
    is being made: the change, made from the buffer, is refused, and the disk keeps what
    it had (no discarded typing brought back)."""
    f = workspace / "big.txt"
    disk = "head line\n" + "".join(f"filler line number {i:07d}\n" for i in range(40000))
    f.write_text(disk)
    st = state_of(editor)
    uri = open_doc(editor, st, f)
    type_text(editor, st, uri, disk + "USER DRAFT, never saved\n")
    await settle()
    assert (await call(editor, READ, file_path="big.txt", offset=1, limit=5))["ok"]
    task = asyncio.ensure_future(
        call(editor, EDIT, file_path="big.txt", old_string="head line", new_string="HEAD LINE")
    )
    await asyncio.sleep(0)
    close_doc(editor, st, uri)
    r = await task
    assert r["ok"] is False and r["error"] in ("stale", "edit_rejected"), r
    assert f.read_text() == disk


async def test_watcher_sees_folders_swapped_or_renamed_away(
    editor: LanguageClient, workspace: Path
) -> None:
    """Tracked files under a folder swapped for a new one, or renamed away, are reported:
    the folder's events make the server check what it tracks under it."""
    st = state_of(editor)
    for name, text in (("d/f.txt", "old content\n"), ("e/g.txt", "g old\n")):
        (workspace / name).parent.mkdir()
        (workspace / name).write_text(text)
        assert (await call(editor, READ, file_path=name))["ok"]
    probe = workspace / "probe.txt"
    probe.write_text("0")
    await call(editor, READ, file_path="probe.txt")
    for i in range(100):  # the watcher starts in the background
        probe.write_text(str(i + 1))
        await asyncio.sleep(0.05)
        if st.notifications:
            break
    st.notifications.clear()
    (workspace / "d").rename(workspace / "d.bak")
    (workspace / "d").mkdir()
    (workspace / "d" / "f.txt").write_text("new content\n")
    (workspace / "e").rename(workspace / "e2")
    want = {
        (str((workspace / "d" / "f.txt").resolve()), "modified"),
        (str((workspace / "e" / "g.txt").resolve()), "deleted"),
    }
    seen: set[tuple[str, str]] = set()
    for _ in range(50):
        seen = {
            (
                p.path if hasattr(p, "path") else p["path"],
                p.kind if hasattr(p, "kind") else p["kind"],
            )
            for _, p in st.notifications
        }
        if want <= seen:
            break
        await asyncio.sleep(0.1)
    assert want <= seen, seen


@pytest_lsp.fixture(config=server_config({"STEADYHAND_FAULTS": "rename:EIO:2"}))
async def failing_delete(lsp_client: LanguageClient, workspace: Path):  # type: ignore[no-untyped-def]
    """An editor-like client whose server fails its second rename: the first is the link
    that names a new file, the second the move aside that starts a checked delete."""
    state = EditorState()
    install(lsp_client, state)
    lsp_client.editor = state  # type: ignore[attr-defined]
    opts = {"historyDir": str(workspace.parent / "state")}
    await lsp_client.initialize_session(init_params(workspace, opts, editor_capabilities()))
    yield
    await lsp_client.shutdown_session()


async def test_a_failed_undo_of_a_creation_leaves_later_deletions_reported(
    failing_delete: LanguageClient, workspace: Path
) -> None:
    """An undo whose deletion fails keeps the file, and does not count a later deletion
    by someone else as its own: that one is reported like any other."""
    st = state_of(failing_delete)
    made = await call(failing_delete, WRITE, file_path="new.txt", content="agent text\n")
    assert made["ok"], made
    undo = await call(failing_delete, UNDO, file_path="new.txt")
    assert undo["ok"] is False and undo["error"] == "io_error", undo
    f = workspace / "new.txt"
    assert f.read_text() == "agent text\n"
    await call(failing_delete, READ, file_path="new.txt")
    await asyncio.sleep(0.3)  # the watcher starts in the background
    f.unlink()
    for _ in range(50):
        if st.notifications:
            break
        await asyncio.sleep(0.1)
    kinds = [p.kind if hasattr(p, "kind") else p["kind"] for _, p in st.notifications]
    assert "deleted" in kinds, st.notifications

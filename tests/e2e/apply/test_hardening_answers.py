"""The client's answers to the server's own requests are read strictly: only
``applied: true`` applies an edit, only a ``saved`` list that names the document saves it,
and an answer of any other shape is a refusal at once — it never holds the file's lock,
never waits for the timeout, and never gets the text saved."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from pytest_lsp import LanguageClient

from steadyhand.protocol.commands import EDIT, READ, SAVE_DOCUMENTS
from tests.conftest import call, client_with
from tests.editor import open_doc, settle
from tests.torture.harness import Server

#: Answers to workspace/applyEdit that LSP does not allow.
MALFORMED_APPLY = {
    "empty object": {},
    "applied as a string": {"applied": "no"},
    "applied as a number": {"applied": 1},
    "null": None,
    "a list": [],
    "a string": "yes",
}

confirming = client_with({"confirmEdits": True}, editor=True)
# The timeout is far longer than any test waits: an answer must not need it.
patient = client_with({"applyEditTimeoutMs": 600_000}, editor=True)


async def _edit_open_file(client: LanguageClient, workspace: Path) -> tuple[Path, dict[str, Any]]:
    f = workspace / "a.txt"
    f.write_text("one\n")
    open_doc(client, client.editor, f)  # type: ignore[attr-defined]
    await settle()
    assert (await call(client, READ, file_path="a.txt"))["ok"]
    r = await asyncio.wait_for(
        call(client, EDIT, file_path="a.txt", old_string="one", new_string="two"), 30
    )
    return f, r


@pytest.mark.parametrize("answer", list(MALFORMED_APPLY), ids=list(MALFORMED_APPLY))
async def test_a_malformed_apply_answer_is_refused_and_frees_the_file(
    confirming: LanguageClient, workspace: Path, answer: str
) -> None:
    confirming.editor.apply_answer = lambda: MALFORMED_APPLY[answer]  # type: ignore[attr-defined]
    f, r = await _edit_open_file(confirming, workspace)
    assert not r["ok"] and r["error"] == "edit_rejected", r
    assert r["reason"].startswith("malformed answer"), r
    assert f.read_text() == "one\n"  # not saved
    # The file's lock was let go: the next edit, answered as LSP says, goes through.
    confirming.editor.apply_answer = None  # type: ignore[attr-defined]
    again = await asyncio.wait_for(
        call(confirming, EDIT, file_path="a.txt", old_string="one", new_string="three"), 30
    )
    assert again["ok"], again
    assert f.read_text() == "three\n"


async def test_a_malformed_apply_answer_does_not_wait_for_the_timeout(
    patient: LanguageClient, workspace: Path
) -> None:
    patient.editor.apply_answer = lambda: {}  # type: ignore[attr-defined]
    f, r = await _edit_open_file(patient, workspace)
    assert not r["ok"] and r["error"] == "edit_rejected", r
    assert "malformed" in r["reason"] and "within" not in r["message"], r
    assert f.read_text() == "one\n"


@pytest.mark.parametrize(
    "answer",
    [{"saved": "all"}, {"results": []}, None, ["file:///a.txt"], {"saved": [1]}],
    ids=["saved a string", "no saved list", "null", "a list", "saved not URIs"],
)
async def test_a_malformed_save_answer_counts_as_not_saved(
    patient: LanguageClient, workspace: Path, answer: Any
) -> None:
    patient.editor.save_answer = lambda: answer  # type: ignore[attr-defined]
    _, r = await _edit_open_file(patient, workspace)
    assert r["ok"] and r["on_disk"] is False, r
    assert "without saying it saved it" in r["message"], r
    assert "Saved to disk" not in r["message"]


async def test_a_save_answer_from_a_lua_client_with_nothing_saved(
    patient: LanguageClient, workspace: Path
) -> None:
    """An empty list encoded as an empty object (Lua) is a list all the same."""
    patient.editor.save_answer = lambda: {"saved": {}, "results": {}}  # type: ignore[attr-defined]
    _, r = await _edit_open_file(patient, workspace)
    assert r["ok"] and r["on_disk"] is False, r
    assert "did not save it (no reason given)" in r["message"], r


# -- answers whose envelope is malformed (neither result nor error, a bad error) ------


async def _report(server: Server, params: dict[str, Any]) -> None:
    """Send the didChange an editor sends once it applied the edit in ``params``."""
    change = params["edit"]["documentChanges"][0]
    uri, version = change["textDocument"]["uri"], change["textDocument"]["version"]
    text = Path(uri.removeprefix("file://")).read_text()
    for edit in change["edits"]:
        assert edit["range"]["start"] == {"line": 0, "character": 0}
        text = edit["newText"] + text[edit["range"]["end"]["character"] :]
    await server.notify(
        "textDocument/didChange",
        {
            "textDocument": {"uri": uri, "version": version + 1},
            "contentChanges": [{"text": text}],
        },
    )


_CAPS = {
    "workspace": {"applyEdit": True, "workspaceEdit": {"documentChanges": True}},
    "experimental": {"steadyhand": {"saveDocuments": True}},
}


async def _raw_server(tmp_path: Path, answers: dict[str, Any]) -> tuple[Server, Path]:
    """A server with ``a.txt`` open and read; the client answers each request of the
    server's with ``answers[method]`` (the answer's members besides ``jsonrpc`` and
    ``id``), and reports an applied edit as an editor does."""
    ws = tmp_path / "ws"
    ws.mkdir()
    f = ws / "a.txt"
    f.write_text("one\n")
    server = await Server.start(ws, state_dir=tmp_path / "state", initialize=False)

    async def answer(msg: dict[str, Any]) -> dict[str, Any]:
        reply: dict[str, Any] = answers.get(msg["method"], {"result": None})
        if msg["method"] == "workspace/applyEdit" and reply.get("result") == {"applied": True}:
            await _report(server, msg["params"])
        return reply

    server.on_request = answer
    init = {
        "processId": None,
        "rootUri": ws.as_uri(),
        "workspaceFolders": [{"uri": ws.as_uri(), "name": "ws"}],
        "capabilities": _CAPS,
        "initializationOptions": {"applyEditTimeoutMs": 600_000},
    }
    await server.request("initialize", init)
    await server.notify("initialized", {})
    doc = {"uri": f.as_uri(), "languageId": "plaintext", "version": 1, "text": "one\n"}
    await server.notify("textDocument/didOpen", {"textDocument": doc})
    assert (await server.call(READ, file_path="a.txt"))["ok"]
    return server, f


@pytest.mark.parametrize(
    "reply",
    [{}, {"error": "refused"}, {"error": {"code": "x"}}],
    ids=["neither result nor error", "error a string", "error of the wrong shape"],
)
async def test_an_apply_answer_with_a_malformed_envelope_is_refused_at_once(
    tmp_path: Path, reply: dict[str, Any]
) -> None:
    server, f = await _raw_server(tmp_path, {"workspace/applyEdit": reply})
    try:
        r = await server.call(EDIT, file_path="a.txt", old_string="one", new_string="two")
        assert not r["ok"] and r["error"] == "edit_rejected", r
        assert "malformed" in r["reason"], r
        assert f.read_text() == "one\n"
        # nothing is left waiting: the next call on the file is answered too
        again = await server.call(EDIT, file_path="a.txt", old_string="one", new_string="two")
        assert again["error"] == "edit_rejected", again
    finally:
        await server.stop()


async def test_a_save_answer_with_a_malformed_envelope_is_not_saved_at_once(
    tmp_path: Path,
) -> None:
    answers = {
        "workspace/applyEdit": {"result": {"applied": True}},
        SAVE_DOCUMENTS: {},  # neither result nor error
    }
    server, f = await _raw_server(tmp_path, answers)
    try:
        r = await server.call(EDIT, file_path="a.txt", old_string="one", new_string="two")
        assert r["ok"] and r["on_disk"] is False, r
        assert "without saying it saved it" in r["message"], r
        assert f.read_text() == "one\n"
    finally:
        await server.stop()

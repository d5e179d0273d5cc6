"""Paths and protocol messages: trailing slashes, lone surrogates,
refusals that name a next step, unknown commands, and session.fork's checks."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from pygls.exceptions import JsonRpcInvalidParams
from pytest_lsp import LanguageClient

from steadyhand.protocol.commands import EDIT, READ, WRITE
from steadyhand.protocol.commands import SESSION_CLOSE as CLOSE
from steadyhand.protocol.commands import SESSION_FORK as FORK
from tests.conftest import call, call_raw

# -- trailing slash --------------------------------------------------------------------


async def test_trailing_slash_end_to_end(client: LanguageClient, workspace: Path) -> None:
    w = await call(client, WRITE, file_path="newdir/", content="x\n")
    assert w["error"] == "invalid_path", w
    e = await call(client, EDIT, file_path="other/", old_string="", new_string="y\n")
    assert e["error"] == "invalid_path", e
    assert not (workspace / "newdir").exists() and not (workspace / "other").exists()
    (workspace / "plain.txt").write_text("p\n")
    r = await call(client, READ, file_path="plain.txt/")
    assert r["error"] == "invalid_path", r
    (workspace / "d").mkdir()
    for res in (
        await call(client, WRITE, file_path="d/", content="x\n"),
        await call(client, READ, file_path="d/"),
    ):
        assert res["error"] == "is_directory", res
    assert sorted(os.listdir(workspace / "d")) == []


async def test_lone_surrogate_end_to_end(client: LanguageClient, workspace: Path) -> None:
    w = await call(client, WRITE, file_path="z\udc80.txt", content="x")
    assert w["error"] == "invalid_path", w
    r = await call(client, READ, file_path="x\udc80.txt")
    assert r["error"] == "invalid_path", r
    assert "\udc80" not in r["message"] and "\udc80" not in r.get("path", "")
    assert os.listdir(workspace) == []


async def test_unknown_command_end_to_end(client: LanguageClient) -> None:
    with pytest.raises(JsonRpcInvalidParams) as exc:
        await call_raw(client, "steadyhand.Read", [{"file_path": "a.txt"}])
    assert "Did you mean `steadyhand.read`?" in str(exc.value)
    assert exc.value.data == {"field": "command", "suggestion": READ}
    for args in ([{"session": "x", "parent_session": "default"}],
                 [{"session": "x", "parentSession": "default"}]):  # fmt: skip
        with pytest.raises(JsonRpcInvalidParams) as exc:
            await call_raw(client, FORK, args)
        assert "Did you mean `parent`?" in str(exc.value)


async def test_fork_refuses_an_unknown_parent_and_a_taken_name(
    client: LanguageClient, workspace: Path
) -> None:
    (workspace / "a.txt").write_text("a\n")
    (workspace / "b.txt").write_text("b\n")
    await call(client, READ, file_path="a.txt")
    kid = await call(client, FORK, session="kid", parent="default")
    assert kid["ok"] and kid["files"] == 1
    await call(client, READ, file_path="b.txt", session="kid")
    again = await call(client, FORK, session="kid", parent="default")
    assert again["ok"] is False and again["error"] == "session_exists", again
    assert "close that session first" in again["message"]
    # kid kept its records: it may still edit b.txt
    e = await call(client, EDIT, file_path="b.txt", old_string="b", new_string="B", session="kid")
    assert e["ok"], e
    typo = await call(client, FORK, session="kid2", parent="defualt")
    assert typo["ok"] is False and typo["error"] == "not_found", typo
    assert "Did you mean 'default'?" in typo["message"] and "'kid'" in typo["message"]
    onto_default = await call(client, FORK, session="default", parent="kid")
    assert onto_default["error"] == "session_exists"
    # closing frees the name
    await call(client, CLOSE, session="kid")
    fresh = await call(client, FORK, session="kid", parent="default")
    assert fresh["ok"], fresh


async def test_fork_from_default_before_any_call(client: LanguageClient) -> None:
    r = await call(client, FORK, session="helper")
    assert r["ok"] and r["files"] == 0, r

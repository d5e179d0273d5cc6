"""Paths and protocol messages: trailing slashes, lone surrogates,
refusals that name a next step, unknown commands, and session.fork's checks."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from pygls.exceptions import JsonRpcInvalidParams
from pytest_lsp import LanguageClient

from steadyhand.dispatch import closest_command
from steadyhand.paths.resolve import Roots, names_folder, resolve
from steadyhand.protocol.commands import ALL_COMMANDS
from steadyhand.protocol.errors import ToolError
from steadyhand.protocol.params import suggest
from steadyhand.protocol.results import failure
from tests.conftest import call, call_raw

READ, EDIT, WRITE = "steadyhand.read", "steadyhand.edit", "steadyhand.write"
FORK, CLOSE = "steadyhand.session.fork", "steadyhand.session.close"


def _roots(ws: Path) -> Roots:
    return Roots.of([str(ws)], (), ())


def _refusal(file_path: str, ws: Path) -> ToolError:
    with pytest.raises(ToolError) as exc:
        resolve(file_path, _roots(ws))
    return exc.value


# -- trailing slash --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "folder"),
    [("a/", True), ("a/b/", True), ("a/.", True), ("a", False), ("a.txt", False),
     ("/", False), ("./", False), ("file:///x/y/", True), ("file:///x/y", False)],
)  # fmt: skip
def test_names_folder(path: str, folder: bool) -> None:
    assert names_folder(path) is folder


def test_trailing_slash_on_a_file_or_nothing_is_invalid_path(tmp_path: Path) -> None:
    (tmp_path / "plain.txt").write_text("p\n")
    for name in ("plain.txt/", "newdir/", str(tmp_path / "newdir") + "/"):
        err = _refusal(name, tmp_path)
        assert err.code == "invalid_path"
        assert "ends with '/', which names a folder" in err.message
        assert "Drop the slash" in err.message
    (tmp_path / "d").mkdir()
    assert resolve("d/", _roots(tmp_path)).path == str(tmp_path.resolve() / "d")


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


# -- lone surrogates -------------------------------------------------------------------


@pytest.mark.parametrize("s", ["\udc80", "\udcff", "\ud800", "\udfff"])
def test_lone_surrogate_is_invalid_path_and_never_echoed_raw(tmp_path: Path, s: str) -> None:
    err = _refusal(f"x{s}.txt", tmp_path)
    assert err.code == "invalid_path"
    result = failure(err, f"x{s}.txt")
    # a strict encoder (and so a strict parser on the other end) accepts the reply
    encoded = json.dumps(result, ensure_ascii=False).encode("utf-8")
    assert f"\\\\u{ord(s):04x}".encode() in encoded
    assert "lone surrogate" in err.message


async def test_lone_surrogate_end_to_end(client: LanguageClient, workspace: Path) -> None:
    w = await call(client, WRITE, file_path="z\udc80.txt", content="x")
    assert w["error"] == "invalid_path", w
    r = await call(client, READ, file_path="x\udc80.txt")
    assert r["error"] == "invalid_path", r
    assert "\udc80" not in r["message"] and "\udc80" not in r.get("path", "")
    assert os.listdir(workspace) == []


# -- refusals with a next step ---------------------------------------------------------


def test_refusals_name_a_next_step(tmp_path: Path) -> None:
    os.symlink("loop2", tmp_path / "loop1")
    os.symlink("loop1", tmp_path / "loop2")
    loop = _refusal("loop1", tmp_path)
    assert loop.code == "invalid_path" and "fix the link" in loop.message
    (tmp_path / "plain.txt").write_text("p\n")
    part = _refusal("plain.txt/x.txt", tmp_path)
    assert part.code == "invalid_path" and "drop what follows its name" in part.message
    os.mkfifo(tmp_path / "pipe")
    fifo = _refusal("pipe", tmp_path)
    assert fifo.code == "not_regular_file" and "work on a regular file" in fifo.message


# -- unknown commands and parameter hints ----------------------------------------------


@pytest.mark.parametrize(
    ("name", "meant"),
    [
        ("steadyhand.Read", "steadyhand.read"),
        ("Steadyhand.Write", "steadyhand.write"),
        ("STEADYHAND.multiedit", "steadyhand.multiEdit"),
        ("steadyhand.READ", "steadyhand.read"),
        ("read", "steadyhand.read"),
        ("steadyhand.view", "steadyhand.read"),
        ("steadyhand.multi_edit", "steadyhand.multiEdit"),
        ("steadyhand.reed", "steadyhand.read"),
        ("steadyhand.session_fork", "steadyhand.session.fork"),
        ("steadyhand.zzzzzz", None),
    ],
)
def test_closest_command(name: str, meant: str | None) -> None:
    assert closest_command(name, list(ALL_COMMANDS)) == meant


@pytest.mark.parametrize("key", ["parent_session", "parentSession", "parent_name", "from"])
def test_fork_parent_slips_suggest_parent(key: str) -> None:
    assert suggest(key, ["session", "parent", "read_only"]) == "parent"


async def test_unknown_command_end_to_end(client: LanguageClient) -> None:
    with pytest.raises(JsonRpcInvalidParams) as exc:
        await call_raw(client, "steadyhand.Read", [{"file_path": "a.txt"}])
    assert "Did you mean `steadyhand.read`?" in str(exc.value)
    assert exc.value.data == {"field": "command", "suggestion": "steadyhand.read"}
    for args in ([{"session": "x", "parent_session": "default"}],
                 [{"session": "x", "parentSession": "default"}]):  # fmt: skip
        with pytest.raises(JsonRpcInvalidParams) as exc:
            await call_raw(client, FORK, args)
        assert "Did you mean `parent`?" in str(exc.value)


# -- session.fork ----------------------------------------------------------------------


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

"""Paths and protocol messages: trailing slashes, lone surrogates,
refusals that name a next step, unknown commands, and session.fork's checks."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from steadyhand.lsp.dispatch import closest_command
from steadyhand.paths.resolve import Roots, names_folder, resolve
from steadyhand.protocol.commands import ALL_COMMANDS, MULTI_EDIT, READ, WRITE
from steadyhand.protocol.commands import SESSION_FORK as FORK
from steadyhand.protocol.errors import ToolError
from steadyhand.protocol.params import suggest
from steadyhand.protocol.results import failure


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
        ("steadyhand.Read", READ),
        ("Steadyhand.Write", WRITE),
        ("STEADYHAND.multiedit", MULTI_EDIT),
        ("steadyhand.READ", READ),
        ("read", READ),
        ("steadyhand.view", READ),
        ("steadyhand.multi_edit", MULTI_EDIT),
        ("steadyhand.reed", READ),
        ("steadyhand.session_fork", FORK),
        ("steadyhand.zzzzzz", None),
    ],
)
def test_closest_command(name: str, meant: str | None) -> None:
    assert closest_command(name, list(ALL_COMMANDS)) == meant


@pytest.mark.parametrize("key", ["parent_session", "parentSession", "parent_name", "from"])
def test_fork_parent_slips_suggest_parent(key: str) -> None:
    assert suggest(key, ["session", "parent", "read_only"]) == "parent"


# -- session.fork ----------------------------------------------------------------------

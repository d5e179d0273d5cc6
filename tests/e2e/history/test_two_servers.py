"""Two real servers on one workspace and one history folder (two editor windows): each
has a session ``default``, and history keeps them apart — a rewind in one takes back only
its own session's changes, the files the other server changed since are skipped."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest_asyncio
from pytest_lsp import LanguageClient

from steadyhand.protocol.commands import CHANGES, CHECKPOINT, EDIT, READ, REWIND, UNDO
from tests.conftest import call, client_with, init_params, server_config

#: Server A: the usual fixture (its history folder is ``state`` beside the workspace).
client = client_with()


@pytest_asyncio.fixture
async def other(workspace: Path) -> AsyncIterator[LanguageClient]:
    """Server B: a second ``steadyhand serve`` over stdio, same workspace, same history."""
    b = await server_config().start()
    assert isinstance(b, LanguageClient)
    opts = {"historyDir": str(workspace.parent / "state")}
    await b.initialize_session(init_params(workspace, opts))
    yield b
    await b.shutdown_session()
    await b.stop()


async def _edit(server: LanguageClient, f: Path, old: str, new: str) -> None:
    out = await call(server, EDIT, file_path=str(f), old_string=old, new_string=new)
    assert out["ok"], out


async def test_a_rewind_takes_back_only_its_own_servers_work(
    client: LanguageClient, other: LanguageClient, workspace: Path
) -> None:
    a, b = client, other
    shared, mine, theirs = (workspace / f"{n}.txt" for n in ("shared", "mine", "theirs"))
    for f in (shared, mine, theirs):
        f.write_text(f"{f.stem} first\n{f.stem} second\n")
        for server in (a, b):
            assert (await call(server, READ, file_path=str(f)))["ok"]
    cp = await call(b, CHECKPOINT, label="before")
    assert cp["ok"], cp
    await _edit(b, shared, "shared first", "B's edit")
    await _edit(b, mine, "mine first", "B's edit")
    assert (await call(a, READ, file_path=str(shared)))["ok"]
    await _edit(a, shared, "shared second", "A's edit")
    await _edit(a, theirs, "theirs second", "A's edit")
    # A server writes a change's index line just after its answer; a look at A's history
    # makes sure it is there (else B would skip the file only as changed since its edit)
    assert (await call(a, CHANGES))["ok"]

    out = await call(b, REWIND, checkpoint=cp["checkpoint"])
    assert out["ok"], out
    assert out["restored"] == [str(mine)], out
    assert [s["path"] for s in out["skipped"]] == [str(shared)], out
    assert "of another server" in out["skipped"][0]["reason"]
    assert f"skipped {shared}" in out["message"]
    assert shared.read_text() == "B's edit\nA's edit\n"  # A's edit is left
    assert theirs.read_text() == "theirs first\nA's edit\n"  # never B's to take back
    assert mine.read_text() == "mine first\nmine second\n"

    # the listing keeps the short name and says which changes were the other server's
    listed = await call(b, CHANGES)
    by_server = {(c["path"], c["tool"], c["other_server"]) for c in listed["changes"]}
    assert (str(theirs), "edit", True) in by_server and (str(mine), "rewind", False) in by_server
    assert {c["session"] for c in listed["changes"]} == {"default"}
    # nor is A's checkpoint, or A's last change, B's session's to take back
    a_cp = await call(a, CHECKPOINT, label="before")
    refused = await call(b, REWIND, checkpoint=a_cp["checkpoint"])
    assert refused["ok"] is False and "another server" in refused["message"], refused
    not_mine = await call(b, UNDO, file_path=str(theirs), session="default")
    assert not_mine["ok"] is False and not_mine["error"] == "no_history", not_mine
    assert theirs.read_text() == "theirs first\nA's edit\n"

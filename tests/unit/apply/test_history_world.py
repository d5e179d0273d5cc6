"""Undo and rewind never lose content, whatever happens around them: content too large to
keep, a history folder that fails, a file that is no longer text, another server
compacting the shared index, a request cancelled halfway."""

from __future__ import annotations

import asyncio
import contextlib
import errno
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from steadyhand.apply.disk import DiskWorld
from steadyhand.apply.guarded import GuardedWorld
from steadyhand.apply.history import HistoryWorld, configure
from steadyhand.config import Settings
from steadyhand.context import ToolContext
from steadyhand.fs.syscalls import Syscalls
from steadyhand.history import store as store_module
from steadyhand.history.store import HistoryStore
from steadyhand.paths.resolve import Roots
from steadyhand.protocol.errors import ToolError
from steadyhand.protocol.params import (
    CheckpointParams,
    HistoryParams,
    ReadParams,
    RewindParams,
    UndoParams,
    WriteParams,
)
from steadyhand.protocol.results import failure
from steadyhand.runtime.tasks import run_to_end
from steadyhand.state.content_store import ContentStore
from steadyhand.state.file_state import SessionRegistry
from steadyhand.tools import checkpoint as checkpoint_tool
from steadyhand.tools import history as history_tool
from steadyhand.tools import read as read_tool
from steadyhand.tools import undo as undo_tool
from steadyhand.tools import write as write_tool

Result = dict[str, Any]


def _ctx(ws: Path, state: Path, **settings: Any) -> ToolContext:
    """A server's tools on ``ws``, over the disk, guarded and recorded as the server does."""
    s = Settings(history_dir=str(state), **settings)
    sys = Syscalls()
    ctx = ToolContext(
        settings=s,
        roots=Roots.of([str(ws)], (), ()),
        sessions=SessionRegistry(s.max_tracked_files),
        store=ContentStore(s.content_store_bytes, s.content_store_max_file_bytes),
        syscalls=sys,
        world=DiskWorld(sys, fsync=False),
    )
    ctx.world = GuardedWorld(HistoryWorld(ctx.world, ctx), ctx)
    configure(ctx, [str(ws)])
    return ctx


async def _run(call: Callable[[], Awaitable[Result] | Result]) -> Result:
    try:
        out = call()
        return await out if asyncio.iscoroutine(out) else out  # type: ignore[misc, no-any-return]
    except ToolError as err:
        return failure(err)


async def read(ctx: ToolContext, f: Path, session: str = "default") -> Result:
    return await _run(lambda: read_tool.read(ctx, ReadParams(str(f), session=session)))


async def write(ctx: ToolContext, f: Path, text: str, session: str = "default") -> Result:
    return await _run(lambda: write_tool.write(ctx, WriteParams(str(f), text, session=session)))


async def undo(ctx: ToolContext, f: Path, force: bool = False) -> Result:
    return await _run(lambda: undo_tool.undo(ctx, UndoParams(str(f), None, force)))


async def history(ctx: ToolContext, f: Path) -> Result:
    return await _run(lambda: history_tool.history(ctx, HistoryParams(str(f))))


async def checkpoint(ctx: ToolContext, session: str = "default") -> Result:
    return await _run(lambda: checkpoint_tool.checkpoint(ctx, CheckpointParams(session)))


async def rewind(ctx: ToolContext, cp: str, session: str = "default") -> Result:
    return await _run(lambda: checkpoint_tool.rewind(ctx, RewindParams(cp, session)))


def _store(ctx: ToolContext) -> HistoryStore:
    """The store of the workspace folder (changes to its files are recorded there)."""
    assert ctx.history is not None
    return ctx.history.stores[0]


# -- content that cannot be kept -----------------------------------------------------


async def test_a_forced_undo_is_refused_when_what_it_replaces_is_too_large_to_keep(
    tmp_path: Path,
) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    ctx = _ctx(ws, tmp_path / "state", history_max_file_bytes=200)
    f = ws / "notes.md"
    f.write_text("draft\n")
    await read(ctx, f)
    assert (await write(ctx, f, "agent version\n"))["ok"]
    users = "".join(f"the user's own line {i}\n" for i in range(20))  # over 200 bytes
    f.write_text(users)

    forced = await undo(ctx, f, force=True)
    assert forced["ok"] is False and forced["error"] == "too_large", forced
    assert "historyMaxFileBytes" in forced["message"] and "Nothing was changed" in forced["message"]
    assert f.read_text() == users


async def test_undo_of_a_creation_is_refused_when_the_file_cannot_be_kept(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    ctx = _ctx(ws, tmp_path / "state", history_max_file_bytes=200)
    f = ws / "new.txt"
    assert (await write(ctx, f, "created\n"))["ok"]
    grown = "x" * 300 + "\n"
    f.write_text(grown)

    forced = await undo(ctx, f, force=True)
    assert forced["ok"] is False and forced["error"] == "too_large", forced
    assert f.read_text() == grown


async def test_an_undo_is_refused_when_the_history_folder_fails(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    ctx = _ctx(ws, tmp_path / "state")
    f = ws / "a.txt"
    f.write_text("one\n")
    await read(ctx, f)
    assert (await write(ctx, f, "two\n"))["ok"]
    f.write_text("the user's three\n")

    def full(*args: object, **kwargs: object) -> str:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(_store(ctx), "put_text", full)
    forced = await undo(ctx, f, force=True)
    assert forced["ok"] is False and forced["error"] == "io_error", forced
    assert "No space left" in forced["message"] and "retry" in forced["message"]
    assert f.read_text() == "the user's three\n"


async def test_a_history_folder_that_cannot_be_used_is_an_io_error(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("")
    ctx = _ctx(ws, blocker)
    f = ws / "a.txt"
    f.write_text("x\n")
    await read(ctx, f)
    assert (await write(ctx, f, "y\n"))["ok"]  # history never blocks work
    for result in (await history(ctx, f), await undo(ctx, f), await checkpoint(ctx)):
        assert result["ok"] is False and result["error"] == "io_error", result
        assert "historyDir" in result["message"]
    assert f.read_text() == "y\n"


# -- files that are no longer text ----------------------------------------------------


async def test_rewind_skips_a_file_that_is_no_longer_text_and_restores_the_others(
    tmp_path: Path,
) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    ctx = _ctx(ws, tmp_path / "state")
    a, b = ws / "a.txt", ws / "b.txt"
    a.write_text("a0\n")
    b.write_text("b0\n")
    cp = await checkpoint(ctx)
    for f in (a, b):
        await read(ctx, f)
        assert (await write(ctx, f, f.name + " 1\n"))["ok"]
    b.write_bytes(b"\x00\x01binary now")  # a build replaced it

    r = await rewind(ctx, cp["checkpoint"])
    assert r["ok"], r
    assert r["restored"] == [str(a)] and a.read_text() == "a0\n"
    assert [s["path"] for s in r["skipped"]] == [str(b)]
    assert "binary" in r["skipped"][0]["reason"]
    assert b.read_bytes() == b"\x00\x01binary now"

    listed = await history(ctx, b)
    assert listed["ok"], listed
    assert [v["tool"] for v in listed["versions"]] == ["write"]
    assert listed["versions"][0]["current"] is False
    assert "binary" in listed["message"]

    refused = await undo(ctx, b, force=True)
    assert refused["ok"] is False and refused["error"] == "binary", refused
    assert "move it aside" in refused["message"]
    assert b.read_bytes() == b"\x00\x01binary now"


# -- another server compacting the shared index ------------------------------------------


async def _rewind_while_another_server_writes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, keep: int
) -> tuple[Result, Path]:
    """Session s changes f after a checkpoint; while its rewind waits for the file's lock,
    a second server on the same workspace appends enough to compact the index."""
    monkeypatch.setattr(store_module, "MAX_ENTRIES", 12)
    monkeypatch.setattr(store_module, "KEEP_ENTRIES", keep)
    ws = tmp_path / "ws"
    ws.mkdir()
    a = _ctx(ws, tmp_path / "state")
    b = _ctx(ws, tmp_path / "state")
    f, other = ws / "f.txt", ws / "o.txt"
    f.write_text("v0\n")
    other.write_text("x\n")
    for i in range(4):
        await read(a, other, "t")
        await write(a, other, f"o{i}\n", "t")
    cp = await checkpoint(a, "s")
    await read(a, f, "s")
    await write(a, f, "v1\n", "s")
    await write(a, f, "v2\n", "s")
    _store(a).flush()
    hold = a.locks.hold

    @contextlib.asynccontextmanager
    async def busy_meanwhile(path: str) -> AsyncIterator[None]:
        for i in range(6):
            await read(b, other, "t")
            await write(b, other, f"b{i}\n", "t")
            _store(b).flush()
        async with hold(path):
            yield

    monkeypatch.setattr(a.locks, "hold", busy_meanwhile)
    return await rewind(a, cp["checkpoint"], "s"), f


async def test_rewind_finds_its_checkpoint_again_after_another_server_compacted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    r, f = await _rewind_while_another_server_writes(tmp_path, monkeypatch, keep=12)
    assert r["ok"], r
    assert r["restored"] == [str(f)]
    assert f.read_text() == "v0\n"


async def test_rewind_to_a_checkpoint_compacted_away_meanwhile_changes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    r, f = await _rewind_while_another_server_writes(tmp_path, monkeypatch, keep=8)
    assert r["ok"] is False and r["error"] == "no_history", r
    assert "no longer in the history" in r["message"]
    assert f.read_text() == "v2\n"


# -- cancellation ---------------------------------------------------------------------


async def test_work_run_to_its_end_finishes_when_its_caller_is_cancelled() -> None:
    steps: list[str] = []

    async def change() -> str:
        steps.append("applied")
        await asyncio.sleep(0.05)
        steps.append("recorded")
        return "done"

    caller = asyncio.ensure_future(run_to_end(change()))
    await asyncio.sleep(0.01)
    caller.cancel()
    await asyncio.sleep(0)
    assert not caller.done()  # it waits for the work, holding its locks meanwhile
    with pytest.raises(asyncio.CancelledError):
        await caller
    assert steps == ["applied", "recorded"]


def test_work_that_never_waits_runs_at_once() -> None:
    async def change() -> str:
        return "done"

    step = run_to_end(change())
    with pytest.raises(StopIteration) as finished:  # no task, no turn of the event loop
        step.send(None)
    assert finished.value.value == "done"

"""Steadyhand's own change can always be taken back: a change whose text reads back as a
binary file (a NUL) is refused up front by every tool, and one that got to the disk
anyway (made before that check, or through another way in) is undone and rewound."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from steadyhand.apply.disk import DiskWorld
from steadyhand.apply.guarded import GuardedWorld
from steadyhand.apply.history import HistoryWorld, configure
from steadyhand.config import Settings
from steadyhand.context import ToolContext
from steadyhand.fs.syscalls import Syscalls
from steadyhand.paths.resolve import Roots
from steadyhand.protocol.errors import ToolError
from steadyhand.protocol.params import (
    CheckpointParams,
    EditParams,
    HistoryParams,
    ReadParams,
    RewindParams,
    UndoParams,
)
from steadyhand.protocol.results import failure
from steadyhand.state.content_store import ContentStore
from steadyhand.state.file_state import SessionRegistry
from steadyhand.text.encoding import UTF8
from steadyhand.tools import checkpoint as checkpoint_tool
from steadyhand.tools import edit as edit_tool
from steadyhand.tools import history as history_tool
from steadyhand.tools import read as read_tool
from steadyhand.tools import undo as undo_tool
from steadyhand.tools.mutation import commit
from steadyhand.world import Change

Result = dict[str, Any]


def _ctx(ws: Path, state: Path) -> ToolContext:
    s = Settings(history_dir=str(state))
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


async def _run(coro: Any) -> Result:
    try:
        out = await coro if hasattr(coro, "__await__") else coro
        return out  # type: ignore[no-any-return]
    except ToolError as err:
        return failure(err)


async def _own_binary_change(ctx: ToolContext, f: Path) -> None:
    """What an edit inserting a NUL did before it was refused up front: committed
    through the world like any change (guarded, kept in history)."""
    assert (await _run(read_tool.read(ctx, ReadParams(str(f)))))["ok"]
    before = ctx.snapshot(str(f))
    text = before.raw.replace("beta", "be\x00ta")
    change = Change(str(f), before, text, text.encode(), UTF8, "edit", session="default")
    await commit(ctx, change)
    assert f.read_bytes() == b"alpha\nbe\x00ta\n"


async def test_an_edit_adding_a_nul_is_refused_up_front(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    ctx = _ctx(ws, tmp_path / "state")
    f = ws / "f.txt"
    f.write_text("alpha\nbeta\n")
    assert (await _run(read_tool.read(ctx, ReadParams(str(f)))))["ok"]
    r = await _run(edit_tool.edit(ctx, EditParams(str(f), "beta", "be\x00ta")))
    assert r["ok"] is False and r["error"] == "binary" and "NUL" in r["message"], r
    assert "\\0" in r["message"]  # how to write it instead
    assert f.read_bytes() == b"alpha\nbeta\n"


async def test_undo_takes_back_its_own_change_that_left_a_binary_file(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    ctx = _ctx(ws, tmp_path / "state")
    f = ws / "f.txt"
    f.write_text("alpha\nbeta\n")
    await _own_binary_change(ctx, f)
    listed = await _run(history_tool.history(ctx, HistoryParams(str(f))))
    assert listed["ok"] and listed["versions"][0]["current"] is True, listed
    u = await _run(undo_tool.undo(ctx, UndoParams(str(f))))
    assert u["ok"], u
    assert f.read_bytes() == b"alpha\nbeta\n"
    redo = await _run(undo_tool.undo(ctx, UndoParams(str(f))))  # and the undo is undone
    assert redo["ok"], redo
    assert f.read_bytes() == b"alpha\nbe\x00ta\n"


async def test_rewind_takes_back_its_own_change_that_left_a_binary_file(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    ctx = _ctx(ws, tmp_path / "state")
    f = ws / "f.txt"
    f.write_text("alpha\nbeta\n")
    cp = checkpoint_tool.checkpoint(ctx, CheckpointParams("default"))
    await _own_binary_change(ctx, f)
    r = await _run(checkpoint_tool.rewind(ctx, RewindParams(cp["checkpoint"], "default")))
    assert r["ok"] and r["restored"] == [str(f)], r
    assert f.read_bytes() == b"alpha\nbeta\n"


async def test_someone_elses_binary_file_is_still_refused(tmp_path: Path) -> None:
    """Only the bytes Steadyhand's change left are taken as its text: another binary
    content (a build's output) is not replaced without force, as before."""
    ws = tmp_path / "ws"
    ws.mkdir()
    ctx = _ctx(ws, tmp_path / "state")
    f = ws / "f.txt"
    f.write_text("alpha\nbeta\n")
    await _own_binary_change(ctx, f)
    f.write_bytes(b"\x00\x01built")
    u = await _run(undo_tool.undo(ctx, UndoParams(str(f))))
    assert u["ok"] is False and u["error"] == "binary", u
    assert f.read_bytes() == b"\x00\x01built"

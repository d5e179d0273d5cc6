"""Disk faults at every use of every call of the write path, not only the first.

The server's own tools run in this process on a :class:`FaultPlan` (the I/O seam the
server uses, ``steadyhand.fs.syscalls``). For each operation (an edit, a whole-file
write, a creation in new folders, a creation through a named temp file) the sweep fails
the 1st, 2nd, ... use of each call with ENOSPC, EACCES, EROFS and EIO (and makes each
``write`` short), until that call is not used that many times. Every case:

- a call before the commit: ``io_error`` carrying the injected errno, the original
  byte-for-byte intact with its mode, no file left over, the session's record unchanged
  (a repeated read is "unchanged"), and the same operation, asked again, works;
- a call after the commit (``fchown``, the removal of the displaced copy, syncing the
  folder) or a short write: the operation succeeds with exactly the new bytes.
"""

from __future__ import annotations

import asyncio
import errno
import os
import stat
from collections import Counter
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from steadyhand.apply.disk import DiskWorld
from steadyhand.config import Settings
from steadyhand.context import ToolContext
from steadyhand.fs.atomic import TEMP_PATTERN
from steadyhand.fs.syscalls import WRITE_PATH_CALLS, Fault, FaultPlan
from steadyhand.paths.resolve import Roots
from steadyhand.protocol.errors import ToolError
from steadyhand.protocol.params import EditParams, ReadParams, WriteParams
from steadyhand.protocol.results import failure
from steadyhand.state.content_store import ContentStore
from steadyhand.state.file_state import SessionRegistry
from steadyhand.tools import edit as edit_tool
from steadyhand.tools import read as read_tool
from steadyhand.tools import write as write_tool
from tests.torture.harness import record

ERRNOS = (errno.ENOSPC, errno.EACCES, errno.EROFS, errno.EIO)
#: Calls whose failure comes after the new bytes are in place (or is of an optional step):
#: the write succeeds.
AFTER_COMMIT = frozenset({"fchown", "unlink", "fsync_dir"})
ORIGINAL = b"alpha\r\nbeta \xe2\x80\x9cquoted\xe2\x80\x9d\r\ngamma\r\n"
MODE = 0o640
NEW_FILE = "n/m/new.txt"

Op = Callable[[ToolContext, str], Awaitable[dict[str, Any]]]


async def _answer(call: Awaitable[dict[str, Any]]) -> dict[str, Any]:
    """The tool's result object, as the server would answer it (a refusal included)."""
    try:
        return dict(await call)
    except ToolError as err:
        return dict(failure(err))


async def _read(ctx: ToolContext, path: str) -> dict[str, Any]:
    return await _answer(read_tool.read(ctx, ReadParams(file_path=path)))


async def _edit(ctx: ToolContext, ws: str) -> dict[str, Any]:
    return await _answer(edit_tool.edit(ctx, EditParams(os.path.join(ws, "f.txt"), "beta", "BETA")))


async def _write(ctx: ToolContext, ws: str) -> dict[str, Any]:
    params = WriteParams(file_path=os.path.join(ws, "f.txt"), content="whole\n" * 5000)
    return await _answer(write_tool.write(ctx, params))


async def _create(ctx: ToolContext, ws: str) -> dict[str, Any]:
    params = WriteParams(file_path=os.path.join(ws, NEW_FILE), content="new\n")
    return await _answer(write_tool.write(ctx, params))


#: name -> (the operation, what the target holds after it, faults planned before the
#: swept one: the named-temp creation first finds no anonymous files on this system).
OPS: dict[str, tuple[Op, str, bytes, list[Fault]]] = {
    "edit": (_edit, "f.txt", ORIGINAL.replace(b"beta", b"BETA"), []),
    "write": (_write, "f.txt", b"whole\n" * 5000, []),
    "create": (_create, NEW_FILE, b"new\n", []),
    "create (named temp)": (_create, NEW_FILE, b"new\n", [Fault("open", errno.EOPNOTSUPP, 1)]),
}


def _context(ws: Path, plan: FaultPlan) -> ToolContext:
    settings = Settings()
    return ToolContext(
        settings=settings,
        roots=Roots.of([str(ws)], (), ()),
        sessions=SessionRegistry(settings.max_tracked_files),
        store=ContentStore(settings.content_store_bytes, settings.content_store_max_file_bytes),
        syscalls=plan,
        world=DiskWorld(plan, fsync=True),
    )


def _tree(ws: Path) -> list[str]:
    return sorted(str(p.relative_to(ws)) for p in ws.rglob("*"))


async def _settle() -> None:
    """Let the jobs a tool left for after its answer run (removing a displaced copy)."""
    for _ in range(3):
        await asyncio.sleep(0)


async def _case(root: Path, op_name: str, fault: Fault) -> tuple[str, dict[str, Any]]:
    """Run one operation with ``fault`` planned; check the outcome; ("skip", ...) when
    the operation never made that many uses of the call."""
    op, target_name, new_bytes, before = OPS[op_name]
    ws = root / f"ws{len(list(root.iterdir()))}"
    ws.mkdir()
    f = ws / "f.txt"
    f.write_bytes(ORIGINAL)
    f.chmod(MODE)
    plan = FaultPlan([])
    ctx = _context(ws, plan)
    first = await _read(ctx, str(f))
    assert first["ok"], first
    session = ctx.sessions.get("default")
    record_before = session.peek(str(f))
    tree_before = _tree(ws)
    planned = [Fault(x.call, x.error, x.at) for x in before]
    plan.faults = [*planned, fault]
    r = await op(ctx, str(ws))
    await _settle()
    plan.faults = []
    label = f"{op_name}: {fault.call} #{fault.at} {errno.errorcode.get(fault.error, 'short')}"
    if fault.seen < fault.at:  # the call is not used that many times
        assert r["ok"], (label, r)
        return "skip", r
    target = ws / target_name
    if r["ok"]:
        # only a failure after the commit, or a short write, may be absorbed
        assert fault.call in AFTER_COMMIT or fault.error == 0, (label, r)
        assert target.read_bytes() == new_bytes, label
        assert stat.S_IMODE(target.stat().st_mode) == (MODE if target == f else _new_mode()), label
        left = [p for p in f.parent.iterdir() if TEMP_PATTERN.match(p.name)]
        if fault.call == "unlink" and left:  # the displaced old copy whose removal failed
            assert [p.read_bytes() for p in left] == [ORIGINAL], label
            for p in left:
                p.unlink()
        assert _tree(ws) == sorted({*tree_before, *_parents(target_name)}), label
        return "absorbed", r
    assert fault.call not in AFTER_COMMIT, (label, r)
    assert r["error"] == "io_error" and r["errno"] == fault.error, (label, r)
    assert "exactly as it was" in str(r["message"]), (label, r)
    # the original, byte for byte, with its mode; nothing left over, no new folder
    assert f.read_bytes() == ORIGINAL, label
    assert stat.S_IMODE(f.stat().st_mode) == MODE, label
    assert _tree(ws) == tree_before, (label, _tree(ws))
    # the session's record is what it was, and a repeated read says so
    assert session.peek(str(f)) == record_before, label
    assert session.peek(str(target)) == (record_before if target == f else None), label
    again = await _read(ctx, str(f))
    assert again["ok"] and again["type"] == "file_unchanged", (label, again)
    # the next call works: the same operation, with nothing planned to fail
    plan.faults = [Fault(x.call, x.error, x.at) for x in before]
    retry = await op(ctx, str(ws))
    await _settle()
    assert retry["ok"], (label, retry)
    assert target.read_bytes() == new_bytes, label
    return "io_error", r


def _new_mode() -> int:
    mask = os.umask(0o22)
    os.umask(mask)
    return 0o666 & ~mask


def _parents(name: str) -> list[str]:
    parts = name.split("/")
    return ["/".join(parts[: i + 1]) for i in range(len(parts))]


async def test_a_fault_at_every_use_of_every_call(tmp_path: Path) -> None:
    counts: Counter[str] = Counter()
    swept: dict[str, set[str]] = {}
    for op_name in OPS:
        root = tmp_path / op_name.replace(" ", "-").replace("(", "").replace(")", "")
        root.mkdir()
        for call in WRITE_PATH_CALLS:
            at = 1
            while True:
                kinds = [*ERRNOS, 0] if call == "write" else list(ERRNOS)
                outcomes = [await _case(root, op_name, Fault(call, e, at)) for e in kinds]
                if all(kind == "skip" for kind, _ in outcomes):
                    break
                assert all(kind != "skip" for kind, _ in outcomes), (op_name, call, at)
                for kind, _ in outcomes:
                    counts[kind] += 1
                swept.setdefault(op_name, set()).add(call)
                at += 1
    # every step a write cannot do without was hit, for every operation
    for op_name, calls in swept.items():
        assert {"open", "write", "fchmod", "fsync", "close", "rename"} <= calls, (op_name, calls)
        assert "open_dir" in calls, (op_name, calls)
    assert {"mkdir"} <= swept["create"] and {"unlink", "fchown"} <= swept["edit"]
    record(
        "disk faults (every use)",
        faults=counts["io_error"] + counts["absorbed"],
        io_errors=counts["io_error"],
        absorbed_after_commit=counts["absorbed"],
        losses=0,
    )
    assert counts["io_error"] > 0

"""A zygote for crash trials: forks a writer per trial and SIGKILLs it at a random moment.

Run as ``python crash_child.py`` with JSON lines on stdin, one per trial::

    {"target": "/ws/link.txt", "kind": "small"|"big", "delay": 0.004, "start": 7}

The forked writer runs Steadyhand's own tools (read, then edit and write, through the
disk world with fsync, exactly as the server does) on ``target``, version after version
from ``start``, reporting ``b i t`` (``t``: the monotonic clock, ns) before and ``d i`` after each
version on a pipe. The
zygote kills it after ``delay`` seconds and answers with one JSON line:
``{"begun": i, "done": j, "pid": p, "lead": s, ...}`` (``lead``: seconds from the fork to
the first version begun). Importing the server's code once and
forking keeps a trial at a few milliseconds, so thousands of kills fit in a test run.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
import time
from typing import Any

from steadyhand.apply.disk import DiskWorld
from steadyhand.config import Settings
from steadyhand.context import ToolContext
from steadyhand.fs.atomic import TempJournal, use_journal
from steadyhand.fs.state_dir import state_dir
from steadyhand.fs.syscalls import Syscalls
from steadyhand.paths.resolve import Roots
from steadyhand.protocol.params import EditParams, ReadParams, WriteParams
from steadyhand.state.content_store import ContentStore
from steadyhand.state.file_state import SessionRegistry
from steadyhand.tools import edit as edit_tool
from steadyhand.tools import read as read_tool
from steadyhand.tools import write as write_tool
from steadyhand.tools.records import full_range, record_for

BIG_LINES = 2_000  # lines of 1 kB: about 2 MB


def body(kind: str, i: int) -> str:
    """The text after the marker line of version ``i`` (a whole-file write's content)."""
    if kind == "big":
        fill = f"{i:08d} " + "lorem ipsum dolor sit amet, consectetur adipiscing elit " * 18
        return "".join(f"{n:06d} {fill}\n" for n in range(BIG_LINES))
    return "".join(f"line {n} of version {i}\n" for n in range(40))


def is_write(i: int) -> bool:
    """Version ``i`` is made by the write tool (else by an edit of the marker line)."""
    return i % 3 == 0


def content(kind: str, i: int) -> str:
    """The exact text of version ``i``."""
    last_write = i - i % 3
    return f"marker: {i}\n" + body(kind, last_write)


def _context(workspace: str) -> ToolContext:
    settings = Settings(
        max_read_bytes=64 << 20, max_read_tokens=1 << 30, default_read_lines=1 << 20
    )
    syscalls = Syscalls()
    return ToolContext(
        settings=settings,
        roots=Roots.of([workspace], (), ()),
        sessions=SessionRegistry(settings.max_tracked_files),
        store=ContentStore(settings.content_store_bytes, settings.content_store_max_file_bytes),
        syscalls=syscalls,
        world=DiskWorld(syscalls, fsync=True),
    )


async def _writer(ctx: ToolContext, spec: dict[str, Any], out: int) -> None:
    target, kind, i = spec["target"], spec["kind"], int(spec["start"])
    if kind == "small":
        r = await read_tool.read(ctx, ReadParams(file_path=target))
        assert r["ok"], r
    else:
        # What a full read records, without rendering 2.5 MB for nobody (the read
        # tool's output is not under test here, the write path is).
        snap = ctx.snapshot(ctx.resolve(target).path)
        ctx.sessions.get("default").put(record_for(snap, full_range(snap), None))
    while True:
        i += 1
        os.write(out, b"b %d %d\n" % (i, time.monotonic_ns()))
        if is_write(i):
            r = await write_tool.write(ctx, WriteParams(file_path=target, content=content(kind, i)))
        else:
            old, new = f"marker: {i - 1}\n", f"marker: {i}\n"
            r = await edit_tool.edit(ctx, EditParams(target, old, new))
        if not r["ok"]:
            os.write(out, b"e %s\n" % json.dumps(r).encode())
            return
        os.write(out, b"d %d\n" % i)


def _trial(spec: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    rfd, wfd = os.pipe()
    forked = time.monotonic_ns()
    pid = os.fork()
    if pid == 0:  # the writer
        os.close(rfd)
        try:
            asyncio.run(_writer(ctx, spec, wfd))
        finally:
            os._exit(0)
    os.close(wfd)
    time.sleep(float(spec["delay"]))
    os.kill(pid, signal.SIGKILL)
    _, status = os.waitpid(pid, 0)
    chunks = []
    while chunk := os.read(rfd, 65536):
        chunks.append(chunk)
    os.close(rfd)
    begun = done = int(spec["start"])
    error = None
    lead: float | None = None  # seconds from the fork to the first version begun
    for line in b"".join(chunks).decode().splitlines():
        tag, _, value = line.partition(" ")
        if tag == "b":
            number, _, when = value.partition(" ")
            begun = int(number)
            if lead is None:
                lead = (int(when) - forked) / 1e9
        elif tag == "d":
            done = int(value)
        elif tag == "e":
            error = value
    return {
        "begun": begun,
        "done": done,
        "pid": pid,
        "killed": os.WIFSIGNALED(status),
        "error": error,
        "lead": lead,
    }


def main() -> None:
    workspace = sys.argv[1]
    use_journal(TempJournal(os.path.join(state_dir(), "temps")))
    ctx = _context(workspace)
    for line in sys.stdin:
        spec = json.loads(line)
        print(json.dumps(_trial(spec, ctx)), flush=True)


if __name__ == "__main__":
    main()

"""Where an operation's time goes, stage by stage, measured in-process.

Usage::

    .venv/bin/python bench/stages.py                     # every row, fsync off and on
    .venv/bin/python bench/stages.py --calls 400 --rows edit1k,write --syntax

The server's own context (:func:`steadyhand.apply.stack.build_world`, the disk without an
editor) runs the benchmark's operations (``bench/run.py``'s rows, on its generated
files) through the command table, as ``steadyhand serve`` does once a request is parsed:
the request's JSON read with orjson, its parameters checked, the tool run, its answer
written as JSON, with the C allocator tuned as the server tunes it (without, the big
rows fault in fresh pages the server would not). The functions each stage consists of
are wrapped with timers; time is
given to the innermost stage running (exclusive time), and what no stage claims is the
tool's own work and the answer. A stage's time is this thread's CPU time (a busy
machine's other work does not inflate it), but for the syncs, whose time is the wall
clock waited. Each stage's median over the calls is shown, in µs, and the median of the
whole call (wall clock, then CPU time); the stages' medians need not add up exactly.

Stages: *protocol* (the request's JSON, its parameters, the answer's JSON: in-process,
without the pipe, which ``bench/run.py``'s trivial round trip measures), *resolve and
checks* (the path, the writable check, what is at the path, the read record), *read and
hash* (the file read back, hashed, compared with what the session saw), *plan* (finding
the places, the new text, encoding it), *diff* (the result's diff or changed lines, the
snippet), *credentials* (the scan of added lines), *syntax check*, *history* (keeping the
replaced text), *write* (the atomic write's system calls and checks), *syncs* (time the
call waited for ``fsync``; with the overlap, less than the syncs took: their own time on
their thread is shown beside), *answer* (the session's record, the message, the result).
Work left until after the answer (the history entry, removing the old copy, remembering
the text written) is timed apart: it delays no answer, only the next call if one comes
at once.

The files live in a folder of their own under ``--dir`` (default: the system's temp
folder, on a real disk: fsync there costs what it costs the benchmark).
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import gc
import os
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import orjson

import workload

STAGES = (
    "protocol",
    "resolve and checks",
    "read and hash",
    "plan",
    "diff",
    "credentials",
    "syntax check",
    "history",
    "write",
    "syncs",
    "answer",
)
ROWS = ("read1k", "edit1k", "edit10k", "multi1k", "multi10k", "write1k", "write10k", "create")
LABELS = {
    "read1k": "read 1k lines",
    "edit1k": "one-line edit, 1k lines",
    "edit10k": "one-line edit, 10k lines",
    "multi1k": "multi-edit (3 edits), 1k lines",
    "multi10k": "multi-edit (3 edits), 10k lines",
    "write1k": "write 1k lines (every 10th changed)",
    "write10k": "write 10k lines (every 10th changed)",
    "create": "create (100 lines)",
}


class Clock:
    """Exclusive time per stage: the innermost stage running gets the time, this
    thread's CPU time (what a busy machine does not inflate), and for the syncs the wall
    time waited."""

    def __init__(self) -> None:
        self.stack: list[str] = []
        self.spent: dict[str, int] = defaultdict(int)
        self.mark = time.thread_time_ns()
        self.wall = time.perf_counter_ns()
        self.synced_ns = 0  # time the syncs took on their own thread

    def _flush(self) -> None:
        now, wall = time.thread_time_ns(), time.perf_counter_ns()
        stage = self.stack[-1] if self.stack else "answer"
        self.spent[stage] += (wall - self.wall) if stage == "syncs" else (now - self.mark)
        self.mark, self.wall = now, wall

    def enter(self, stage: str) -> None:
        self._flush()
        self.stack.append(stage)

    def leave(self) -> None:
        self._flush()
        self.stack.pop()

    def reset(self) -> None:
        self.stack.clear()
        self.spent = defaultdict(int)
        self.synced_ns = 0
        self.mark, self.wall = time.thread_time_ns(), time.perf_counter_ns()


CLOCK = Clock()


def _wrap(owner: Any, name: str, stage: str) -> None:
    """Time ``owner.name`` (a function, method or coroutine function) as ``stage``."""
    real = getattr(owner, name)
    if asyncio.iscoroutinefunction(real):

        @functools.wraps(real)
        async def timed_async(*args: Any, **kwargs: Any) -> Any:
            CLOCK.enter(stage)
            try:
                return await real(*args, **kwargs)
            finally:
                CLOCK.leave()

        setattr(owner, name, timed_async)
        return

    @functools.wraps(real)
    def timed(*args: Any, **kwargs: Any) -> Any:
        CLOCK.enter(stage)
        try:
            return real(*args, **kwargs)
        finally:
            CLOCK.leave()

    setattr(owner, name, timed)


def _instrument() -> None:
    """Wrap the functions of each stage, where they are looked up."""
    from steadyhand import context
    from steadyhand.apply import disk, guarded, history
    from steadyhand.fs import syncer, syscalls
    from steadyhand.tools import create, edit, edit_plan, multi_edit, mutation, write

    resolve_and_checks = [
        (context.ToolContext, "resolve"),
        (mutation, "check_writable"),
        (guarded, "check_writable"),
        (mutation, "_look"),
        (mutation.Target, "require_read"),
    ]
    read_and_hash = [(context.ToolContext, "snapshot"), (mutation, "check_fresh")]
    plan = [
        (edit, "plan_one_async"),
        (multi_edit, "plan_on_base"),
        (multi_edit, "plan_all"),
        (edit, "shown_lines"),
        (multi_edit, "shown_lines"),
        (edit_plan, "apply_splices"),
        (edit_plan, "raw_splices"),
        (edit_plan, "shown_after"),
        (edit_plan, "ending_stats_spliced"),
        (mutation, "encode"),
        (mutation, "refuse_binary"),
        (write, "ending_stats"),
    ]
    diff = [
        (edit_plan, "splices_diff"),
        (edit_plan, "changed_snippet"),
        (edit_plan, "changed_span"),
        (write, "whole_change"),
        (create, "whole_change"),
        (mutation, "diff_fields"),
    ]
    for owner, name in resolve_and_checks:
        _wrap(owner, name, "resolve and checks")
    for owner, name in read_and_hash:
        _wrap(owner, name, "read and hash")
    for owner, name in plan:
        _wrap(owner, name, "plan")
    for owner, name in diff:
        _wrap(owner, name, "diff")
    _wrap(guarded, "check_secrets", "credentials")
    _wrap(guarded, "check_syntax", "syntax check")
    _wrap(history, "_keep", "history")
    _wrap(history, "_disk_label", "history")
    _wrap(disk.DiskWorld, "stage", "write")
    _wrap(disk.DiskWorld, "apply", "write")
    _wrap(syncer.Sync, "wait", "syncs")
    _wrap(syncer, "start", "syncs")
    # the syncs' own time, on whichever thread makes them
    for name in ("fsync", "fsync_dir"):
        real = getattr(syscalls.Syscalls, name)

        def synced(self: Any, fd: int, _real: Any = real) -> None:
            t0 = time.perf_counter_ns()
            try:
                _real(self, fd)
            finally:
                CLOCK.synced_ns += time.perf_counter_ns() - t0

        setattr(syscalls.Syscalls, name, synced)


class Bench:
    """One tool context, built as the server builds its own, on files of its own."""

    def __init__(self, root: Path, *, fsync: bool, syntax: bool) -> None:
        from steadyhand.apply.history import configure
        from steadyhand.apply.stack import build_world
        from steadyhand.config import Settings
        from steadyhand.paths.resolve import Roots

        self.root = root
        root.mkdir(parents=True)
        settings = Settings(
            history_dir=str(root / ".state"),
            fsync=fsync,
            syntax_check="warn" if syntax else "off",
        )
        self.ctx = build_world(settings).ctx
        self.ctx.roots = Roots.of([str(root)], (), ())
        configure(self.ctx, [str(root)])
        self.loop = asyncio.new_event_loop()

    def call(self, command: str, arguments: dict[str, Any]) -> Timed:
        """One request as the server takes it: its JSON read, its parameters checked, the
        tool run at once (:func:`steadyhand.runtime.tasks.run_now`, as the LSP lane runs
        it: a task only if it waits), its answer written as JSON; then the work left
        for after the answer."""
        request = orjson.dumps(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "workspace/executeCommand",
                "params": {"command": command, "arguments": [arguments]},
            }
        )
        timed = self.loop.run_until_complete(_serve(self.ctx, request))
        t0, c0 = time.perf_counter_ns(), time.thread_time_ns()
        self.loop.run_until_complete(_turns(4))  # what runs after the answer
        timed.after, timed.after_cpu = time.perf_counter_ns() - t0, time.thread_time_ns() - c0
        if not timed.result.get("ok"):
            raise SystemExit(f"{command} failed: {timed.result.get('message')}")
        return timed


class Timed:
    """One call: its result, its wall and CPU time to the answer, and after it (ns)."""

    def __init__(self, result: dict[str, Any], wall: int, cpu: int) -> None:
        self.result = result
        self.wall = wall
        self.cpu = cpu
        self.after = 0
        self.after_cpu = 0


async def _serve(ctx: Any, request: bytes) -> Timed:
    from steadyhand.runtime.tasks import run_now
    from steadyhand.tools.table import COMMANDS, parse, run

    loop = asyncio.get_running_loop()
    ended: asyncio.Future[asyncio.Future[Any]] = loop.create_future()
    CLOCK.reset()
    t0, c0 = time.perf_counter_ns(), time.thread_time_ns()
    CLOCK.enter("protocol")
    body = orjson.loads(request)["params"]
    cmd = COMMANDS[body["command"]]
    params = parse(cmd, body["arguments"])
    CLOCK.leave()
    run_now(run(ctx, cmd, params), ended.set_result)
    outcome = await ended if not ended.done() else ended.result()
    result = (await outcome) if not outcome.done() else outcome.result()
    CLOCK.enter("protocol")
    orjson.dumps({"jsonrpc": "2.0", "id": 1, "result": result})
    CLOCK.leave()
    wall, cpu = time.perf_counter_ns() - t0, time.thread_time_ns() - c0
    CLOCK._flush()
    return Timed(result, wall, cpu)


async def _turns(n: int) -> None:
    for _ in range(n):
        await asyncio.sleep(0)


def _operations(b: Bench) -> dict[str, Callable[[int], Timed]]:
    """Each row's call, repeatable (edits flip back and forth, writes alternate)."""
    r = b.root
    ops: dict[str, Callable[[int], Timed]] = {}
    for n in (1000, 10_000):
        (r / f"f{n}.py").write_text(workload.source_text(n))
        (r / f"m{n}.py").write_text(workload.source_text(n))
        (r / f"w{n}.py").write_text(workload.source_text(n))
        k, pair = workload.edit_pair(n)
        window = {} if n <= 1000 else {"offset": k - 3, "limit": 7}
        b.call("steadyhand.read", {"file_path": str(r / f"f{n}.py"), **window})
        ks = [k for k, _ in workload.multi_edit_pairs(n)]
        for k2 in ks if n > 1000 else [0]:
            around = {} if n <= 1000 else {"offset": k2 - 3, "limit": 7}
            b.call("steadyhand.read", {"file_path": str(r / f"m{n}.py"), **around})
        # a write replaces the whole file: the agent has read all of it (in windows)
        for start in range(1, n + 1, 2000):
            b.call(
                "steadyhand.read",
                {"file_path": str(r / f"w{n}.py"), "offset": start, "limit": 2000},
            )

        def edit(i: int, n: int = n, pair: workload.EditPair = pair) -> Any:
            old, new = (pair.a, pair.b) if i % 2 == 0 else (pair.b, pair.a)
            return b.call(
                "steadyhand.edit",
                {"file_path": str(r / f"f{n}.py"), "old_string": old, "new_string": new},
            )

        pairs = [p for _, p in workload.multi_edit_pairs(n)]

        def multi(i: int, n: int = n, pairs: list[workload.EditPair] = pairs) -> Any:
            edits = [
                {"old_string": p.a, "new_string": p.b}
                if i % 2 == 0
                else {"old_string": p.b, "new_string": p.a}
                for p in pairs
            ]
            path = str(r / f"m{n}.py")
            return b.call("steadyhand.multiEdit", {"file_path": path, "edits": edits})

        versions = [workload.source_text(n, variant=1), workload.source_text(n)]

        def write(i: int, n: int = n, versions: list[str] = versions) -> Any:
            return b.call(
                "steadyhand.write",
                {"file_path": str(r / f"w{n}.py"), "content": versions[i % 2]},
            )

        ops[f"edit{n // 1000}k"] = edit
        ops[f"multi{n // 1000}k"] = multi
        ops[f"write{n // 1000}k"] = write
    reads = [
        {"file_path": str(r / "f1000.py")},
        {"file_path": str(r / "f1000.py"), "offset": 1, "limit": 2000},
    ]
    ops["read1k"] = lambda i: b.call("steadyhand.read", reads[i % 2])
    small = workload.source_text(100)
    (r / "create").mkdir()
    ops["create"] = lambda i: b.call(
        "steadyhand.write", {"file_path": str(r / "create" / f"new{i}.py"), "content": small}
    )
    return ops


def measure(
    rows: list[str], calls: int, warmup: int, *, fsync: bool, syntax: bool, where: Path
) -> dict[str, dict[str, float]]:
    """Per row: each stage's median (µs), the call's median wall and CPU time, the
    syncs' own time and the work after the answer (medians, µs)."""
    name = f"{'durable' if fsync else 'fast'}-{'checked' if syntax else 'plain'}"
    b = Bench(where / name, fsync=fsync, syntax=syntax)
    ops = _operations(b)
    out: dict[str, dict[str, float]] = {}
    for row in rows:
        fn = ops[row]
        for i in range(warmup):
            fn(i)
        per: dict[str, list[float]] = defaultdict(list)
        for i in range(warmup, warmup + calls):
            timed = fn(i)
            spent = dict(CLOCK.spent)
            for stage in STAGES:
                per[stage].append(spent.get(stage, 0) / 1e3)
            per["total"].append(timed.wall / 1e3)
            per["cpu"].append(timed.cpu / 1e3)
            per["synced"].append(CLOCK.synced_ns / 1e3)
            per["after"].append(timed.after / 1e3)
        out[row] = {k: statistics.median(v) for k, v in per.items()}
    if b.ctx.history is not None:
        b.ctx.history.flush()
    b.loop.close()
    return out


def table(results: dict[str, dict[str, float]], title: str) -> str:
    head = ["operation", *STAGES, "**call** (wall)", "CPU", "syncs made", "after the answer"]
    lines = [f"**{title}** (µs, medians)", "", "| " + " | ".join(head) + " |"]
    lines.append("|" + "---|" * len(head))
    for row, r in results.items():
        cells = [LABELS[row], *(f"{r[s]:.0f}" if r[s] >= 0.5 else "—" for s in STAGES)]
        cells += [f"**{r['total']:.0f}**", f"{r['cpu']:.0f}"]
        cells += [f"{r['synced']:.0f}" if r["synced"] else "—", f"{r['after']:.0f}"]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0] if __doc__ else None)
    ap.add_argument("--calls", type=int, default=300)
    ap.add_argument("--warmup", type=int, default=20)
    ap.add_argument("--rows", default=",".join(ROWS))
    ap.add_argument("--fsync", choices=("off", "on", "both"), default="both")
    ap.add_argument("--syntax", action="store_true", help="also with the syntax check on")
    ap.add_argument("--dir", default=None, help="where the files live (a real disk)")
    args = ap.parse_args(argv)
    rows = args.rows.split(",")
    _instrument()
    # As ``steadyhand serve`` starts: the C allocator keeps freed blocks for reuse, and
    # what start-up made is set aside from the collector.
    from steadyhand.runtime import allocator

    allocator.tune()
    gc.freeze()
    modes = {"off": [False], "on": [True], "both": [False, True]}[args.fsync]
    print(f"load average {os.getloadavg()[0]:.1f}; {args.calls} calls per row\n")
    where = str(Path(args.dir).resolve()) if args.dir else None  # the tool takes absolute paths
    with tempfile.TemporaryDirectory(prefix="steadyhand-stages-", dir=where) as tmp:
        for fsync in modes:
            for syntax in [False, True] if args.syntax else [False]:
                res = measure(
                    rows, args.calls, args.warmup, fsync=fsync, syntax=syntax, where=Path(tmp)
                )
                title = (
                    f"fsync {'on' if fsync else 'off'}, syntax check {'on' if syntax else 'off'}"
                )
                print(table(res, title) + "\n", flush=True)
    print(f"load average {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""What the syntax check adds to a change, measured in-process (no server, no client).

Usage::

    .venv/bin/python bench/syntax_cost.py                 # this checkout
    .venv/bin/python bench/syntax_cost.py --calls 400 --compare /tmp/ss-main/server

Two tool contexts on the disk, built as the server builds its own (the guard, the history
and the disk world), one with ``syntaxCheck: warn`` (the default) and one with ``off``,
each in a folder of its own, make the same changes: a one-line edit of valid Python in
files of 1k and 10k lines (flipped back and forth, as the benchmark does), the same edit
putting an unclosed bracket in and out, and a whole-file write of 1k lines with every
tenth line changed. Each file was read first and its tree built, as a read leaves it
(the server builds it while the agent thinks). A third contender parses the change's new
text whole with tree-sitter, so that the check's cost can be read against one parse of
the same text in the same minutes. Every round calls the three once each, in a shuffled
order; p50 and p99 are reported, and the check's cost as the difference of the two
contexts' p50s (and p99s).

``--compare DIR`` runs the same measurement on another checkout's ``server`` folder too
(in a process of its own, alternating with this one in blocks of rounds), so that old and
new code are measured in the same minutes. ``--profile CASE`` runs one case's checked
calls under cProfile instead and prints where the time went.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import io
import json
import math
import os
import pstats
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import workload

CASES = ("edit 1k", "edit 10k", "break 1k", "write 1k")


def _texts(case: str) -> tuple[str, str, str, str, tuple[int, int] | None]:
    """(file text, tool, A, B, the window read): the file holds A's version first; each
    call flips it. An edit's file is read at a window around the edit (as a read of a
    large file answers), a write's whole."""
    if case == "write 1k":
        return workload.source_text(1000), "write", "", "", None
    n = 10_000 if case.endswith("10k") else 1_000
    a, b, c = workload.syntax_pair(n)
    new = c if case.startswith("break") else b
    return workload.python_module(n), "edit", a, new, (n // 2 - 20, 40)


class Contender:
    """A tool context on the disk, guarded and recorded as the server's is."""

    def __init__(self, root: Path, mode: str) -> None:
        from steadyhand.apply.disk import DiskWorld
        from steadyhand.apply.guarded import GuardedWorld
        from steadyhand.apply.history import HistoryWorld, configure
        from steadyhand.config import Settings
        from steadyhand.context import ToolContext
        from steadyhand.fs.syscalls import Syscalls
        from steadyhand.paths.resolve import Roots
        from steadyhand.state.content_store import ContentStore
        from steadyhand.state.file_state import SessionRegistry

        self.root = root
        root.mkdir(parents=True, exist_ok=True)
        s = Settings(history_dir=str(root / ".state"), syntax_check=mode)
        sc = Syscalls()
        ctx = ToolContext(
            settings=s,
            roots=Roots.of([str(root)], (), ()),
            sessions=SessionRegistry(s.max_tracked_files),
            store=ContentStore(s.content_store_bytes, s.content_store_max_file_bytes),
            syscalls=sc,
            world=DiskWorld(sc, fsync=False),
        )
        ctx.world = GuardedWorld(HistoryWorld(ctx.world, ctx), ctx)
        configure(ctx, [str(root)])
        self.ctx = ctx

    async def read(self, path: Path, window: tuple[int, int] | None = None) -> dict[str, Any]:
        from steadyhand.protocol.params import ReadParams
        from steadyhand.tools import read as read_tool

        offset, limit = window if window is not None else (None, None)
        return await read_tool.read(self.ctx, ReadParams(str(path), offset, limit))

    async def edit(self, path: Path, old: str, new: str) -> dict[str, Any]:
        from steadyhand.protocol.params import EditParams
        from steadyhand.tools import edit as edit_tool

        return await edit_tool.edit(self.ctx, EditParams(str(path), old, new))

    async def write(self, path: Path, text: str) -> dict[str, Any]:
        from steadyhand.protocol.params import WriteParams
        from steadyhand.tools import write as write_tool

        return await write_tool.write(self.ctx, WriteParams(str(path), text))


def _timed(
    loop: asyncio.AbstractEventLoop, call: Callable[[], Awaitable[dict[str, Any]]]
) -> tuple[float, float]:
    """Run one tool call: the milliseconds until its answer was ready, wall clock and
    this thread's CPU time (what runs on the loop after it, as after an answer sent, is
    not counted)."""
    took = (0.0, 0.0)

    async def run() -> None:
        nonlocal took
        t0, c0 = time.perf_counter_ns(), time.thread_time_ns()
        result = await call()
        took = ((time.perf_counter_ns() - t0) / 1e6, (time.thread_time_ns() - c0) / 1e6)
        _check(result)

    loop.run_until_complete(run())
    loop.run_until_complete(_turns(3))  # what the answer left for the loop's next turns
    return took


async def _turns(n: int) -> None:
    for _ in range(n):
        await asyncio.sleep(0)


def _check(result: dict[str, Any]) -> dict[str, Any]:
    if not result.get("ok"):
        raise SystemExit(f"a change failed: {result.get('message')}")
    if result.get("syntax_check") == "skipped":
        raise SystemExit(f"a check was skipped: {result.get('message')}")
    return result


Samples = dict[str, dict[str, list[float]]]


def measure(calls: int, warmup: int, cases: list[str], seed: int) -> Samples:
    """Per case, per contender (``warn``, ``off``, ``parse``): wall times (ms), CPU times
    (``cpu <name>``, ms) and CPU per call with what ran after the answer (``all
    <name>``, one figure)."""
    out: Samples = {}
    with tempfile.TemporaryDirectory(prefix="syntax-cost-") as tmp:
        warn = Contender(Path(tmp) / "warn", "warn")
        off = Contender(Path(tmp) / "off", "off")
        loop = asyncio.new_event_loop()
        try:
            for case in cases:
                out[case] = _case(loop, warn, off, case, calls, warmup, seed)
        finally:
            for c in (warn, off):
                if c.ctx.history is not None:
                    c.ctx.history.flush()
            loop.close()
    return out


Timed = Callable[[], tuple[float, float]]


def _case(
    loop: asyncio.AbstractEventLoop,
    warn: Contender,
    off: Contender,
    case: str,
    calls: int,
    warmup: int,
    seed: int,
) -> dict[str, list[float]]:
    from tree_sitter import Parser

    from steadyhand.guards.syntax import CHECKER
    from steadyhand.syntax import grammars

    language = grammars.language("python")
    assert language is not None
    text, tool, a, b, window = _texts(case)
    name = case.replace(" ", "-") + ".py"
    versions = [workload.source_text(1000, variant=1), text] if tool == "write" else []
    for c in (warn, off):
        (c.root / name).write_text(text)
        _check(loop.run_until_complete(c.read(c.root / name, window)))
    CHECKER.drain()  # the tree, built as a read leaves it

    def change(c: Contender, i: int) -> Timed:
        path = c.root / name
        if tool == "write":
            return lambda: _timed(loop, lambda: c.write(path, versions[i % 2]))
        old, new = (a, b) if i % 2 == 0 else (b, a)
        return lambda: _timed(loop, lambda: c.edit(path, old, new))

    # the new text of call i: after calls 0, 2, ... and after calls 1, 3, ...
    news = versions if tool == "write" else [text.replace(a, b, 1), text]
    datas = [n.encode() for n in news]

    def parse(i: int) -> Timed:
        data = datas[i % 2]

        def run() -> tuple[float, float]:
            t0, c0 = time.perf_counter_ns(), time.thread_time_ns()
            Parser(language).parse(data)
            return (time.perf_counter_ns() - t0) / 1e6, (time.thread_time_ns() - c0) / 1e6

        return run

    ops: dict[str, Callable[[int], Timed]] = {
        "warn": lambda i: change(warn, i),
        "off": lambda i: change(off, i),
        "parse": parse,
    }
    got: dict[str, list[float]] = {}
    for k in ops:
        got[k], got[f"cpu {k}"] = [], []
    total = dict.fromkeys(ops, 0.0)
    shuffle = random.Random(f"{case}:{seed}")
    for i in range(warmup + calls):
        for k in shuffle.sample(list(ops), len(ops)):
            call = ops[k](i)
            c0 = time.process_time()
            wall, cpu = call()
            if i >= warmup:
                total[k] += time.process_time() - c0
                got[k].append(wall)
                got[f"cpu {k}"].append(cpu)
    got.update({f"all {k}": [v * 1000 / calls] for k, v in total.items()})
    return got


def profile(case: str, calls: int) -> str:
    """cProfile of ``calls`` checked changes of ``case`` (after a few unprofiled)."""
    from steadyhand.guards.syntax import CHECKER

    text, tool, a, b, window = _texts(case)
    versions = [workload.source_text(1000, variant=1), text]
    with tempfile.TemporaryDirectory(prefix="syntax-cost-") as tmp:
        c = Contender(Path(tmp), "warn")
        loop = asyncio.new_event_loop()
        path = c.root / "f.py"
        path.write_text(text)
        _check(loop.run_until_complete(c.read(path, window)))
        CHECKER.drain()

        def one(i: int) -> None:
            if tool == "write":
                _check(loop.run_until_complete(c.write(path, versions[i % 2])))
            else:
                old, new = (a, b) if i % 2 == 0 else (b, a)
                _check(loop.run_until_complete(c.edit(path, old, new)))

        for i in range(10):
            one(i)
        prof = cProfile.Profile()
        prof.enable()
        for i in range(10, 10 + calls):
            one(i)
        prof.disable()
        if c.ctx.history is not None:
            c.ctx.history.flush()
        loop.close()
    buf = io.StringIO()
    pstats.Stats(prof, stream=buf).sort_stats("tottime").print_stats(25)
    return buf.getvalue()


# -- the report ------------------------------------------------------------------------


def pct(values: list[float], q: float) -> float:
    s = sorted(values)
    return s[max(0, min(len(s) - 1, math.ceil(q * len(s)) - 1))] if s else math.nan


def p50(values: list[float]) -> float:
    return statistics.median(values) if values else math.nan


def table(results: dict[str, Samples]) -> str:
    rows = [
        "| case | code | **added**, wall p50 / p99 ms | **added**, CPU p50 / p99 ms "
        "| whole parse, wall / CPU p50 ms | added ÷ whole parse, wall / CPU (p50) "
        "| `warn` / `off`, wall p50 ms | CPU per call with what runs after the answer, "
        "`warn` / `off` ms |",
        "|---|---|---|---|---|---|---|---|",
    ]
    cases = [c for c in CASES if any(c in r for r in results.values())]
    for case in cases:
        for label, r in results.items():
            t = r.get(case)
            if t is None:
                continue
            w, o, pa = t["warn"], t["off"], t["parse"]
            cw, co, cp = t["cpu warn"], t["cpu off"], t["cpu parse"]
            add50, add99 = p50(w) - p50(o), pct(w, 0.99) - pct(o, 0.99)
            cadd50, cadd99 = p50(cw) - p50(co), pct(cw, 0.99) - pct(co, 0.99)
            aw, ao = statistics.mean(t["all warn"]), statistics.mean(t["all off"])
            rows.append(
                f"| {case} | {label} | **{add50:+.2f}** / {add99:+.2f} | "
                f"**{cadd50:+.2f}** / {cadd99:+.2f} | {p50(pa):.2f} / {p50(cp):.2f} | "
                f"{add50 / p50(pa):.2f}× / {cadd50 / p50(cp):.2f}× | "
                f"{p50(w):.2f} / {p50(o):.2f} | {aw:.2f} / {ao:.2f} |"
            )
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0] if __doc__ else None)
    ap.add_argument("--calls", type=int, default=200, help="measured calls per contender")
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--cases", default=",".join(CASES))
    ap.add_argument("--compare", action="append", default=[], metavar="SERVER_DIR")
    ap.add_argument("--blocks", type=int, default=4, help="blocks of rounds per checkout")
    ap.add_argument("--profile", metavar="CASE")
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--seed", type=int, default=0, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    cases = [c.strip() for c in args.cases.split(",") if c.strip()]
    if args.profile:
        print(profile(args.profile, args.calls))
        return 0
    if args.worker:
        print(json.dumps(measure(args.calls, args.warmup, cases, args.seed)))
        return 0
    here = str(Path(__file__).resolve().parent.parent / "server")
    trees = {"this": here, **{f"compare{i + 1}": d for i, d in enumerate(args.compare)}}
    if len(trees) == 1 and args.blocks <= 1:
        results = {"this": measure(args.calls, args.warmup, cases, 0)}
    else:
        # blocks of rounds, each checkout in a process of its own, alternating
        per = max(1, args.calls // args.blocks)
        results = {k: {} for k in trees}
        order = list(trees)
        for block in range(args.blocks):
            for label in order if block % 2 == 0 else reversed(order):
                env = {**os.environ, "PYTHONPATH": trees[label]}
                cmd = [sys.executable, __file__, "--worker", "--calls", str(per)]
                cmd += ["--warmup", str(args.warmup), "--cases", ",".join(cases)]
                cmd += ["--seed", str(block)]
                got = json.loads(
                    subprocess.run(cmd, env=env, check=True, capture_output=True, text=True).stdout
                )
                for case, times in got.items():
                    slot = results[label].setdefault(case, {k: [] for k in times})
                    for k, v in times.items():
                        slot[k].extend(v)
            print(f"[syntax_cost] block {block + 1}/{args.blocks} done", file=sys.stderr)
    print(table(results))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Steadyhand's benchmark: the physical floor, a real peer, and Steadyhand, side by side.

Usage::

    .venv/bin/python bench/run.py            # full run (>= 500 calls per operation)
    .venv/bin/python bench/run.py --quick    # smoke run, about a minute

It sets everything up itself (generated files under ``.cache/bench``, the MCP peer
installed with npm into ``.cache/bench-npm``), measures interleaved (A B A B ...), prints a
Markdown report and writes it to ``bench/results/latest.md``. How to read it:
``docs/performance.md``.
"""

from __future__ import annotations

import argparse
import compileall
import math
import os
import platform
import random
import re
import shutil
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import floor
import fsstate
import servers
import workload
from rpc import reset_peak, rss_kib
from servers import CallFailed, Running, mcp_call, sh_call

RESULTS = servers.BENCH / "results"
SH = "steadyhand"
SHD = "steadyhand-durable"
PEER = "mcp-peer"
FLOOR = "floor"
FLOORD = "floor-durable"
SHM = "steadyhand-mcp"
LSP_STRAIGHT = "lsp-straight"
ATTACHED = "mcp-attached"
#: Seconds the tracked-files test waits before reading the idle RSS.
SETTLE_SECONDS = 2.5
#: What the syntax check may add to a one-line edit (ms, p50), and to a whole-file write
#: (a share of one tree-sitter parse of the new text, measured in the same rounds).
SYNTAX_EDIT_MS = 0.3
SYNTAX_WRITE_SHARE = 0.5


# -- configuration ---------------------------------------------------------------------


@dataclass(frozen=True)
class Mode:
    name: str
    calls: int  # measured calls per operation
    warmup: int
    trivial_calls: int
    startups: int
    log_mib: int
    log_calls: int  # later reads of the big log, Steadyhand and the peer
    log_floor_calls: int  # the floor's passes over the big log (each reads all of it)
    tracked_files: int
    watch_trees: tuple[int, ...]
    calls_100k: int  # measured calls for the 100k-line files
    sizes: tuple[int, ...] = (1_000, 10_000, 100_000)


FULL = Mode("full", 500, 20, 2000, 15, 1024, 500, 20, 100_000, (50_000, 500_000), 500)
QUICK = Mode("quick", 40, 5, 300, 4, 64, 20, 3, 10_000, (50_000,), 12)


# -- statistics --------------------------------------------------------------------------


def pct(values: list[float], q: float) -> float:
    s = sorted(values)
    if not s:
        return math.nan
    return s[max(0, min(len(s) - 1, math.ceil(q * len(s)) - 1))]


def p50(values: list[float]) -> float:
    return statistics.median(values) if values else math.nan


def ms(x: float) -> str:
    if math.isnan(x):
        return "—"
    if x >= 100:
        return f"{x:.0f}"
    if x >= 10:
        return f"{x:.1f}"
    return f"{x:.2f}"


def us(x_ms: float) -> str:
    return "—" if math.isnan(x_ms) else f"{x_ms * 1000:.0f} µs"


def ratio(x: float) -> str:
    return "—" if math.isnan(x) or math.isinf(x) else f"{x:.2f}×"


# -- interleaved measurement -------------------------------------------------------------


def _whole_parse(texts: list[bytes]) -> Callable[[int], object]:
    """One whole tree-sitter parse (Python) of the text call ``i`` writes, here in the
    benchmark's process: what the syntax check is measured against."""
    from tree_sitter import Parser

    from steadyhand.syntax import grammars

    language = grammars.language("python")
    return lambda i: Parser(language).parse(texts[i % len(texts)])


def cpu_seconds(pid: int) -> float:
    """CPU time a process has used so far: the time each of its threads ran, to the
    nanosecond (``/proc/PID/task/*/schedstat``), else user and system time in clock
    ticks (``/proc/PID/stat``; 10 ms each, too coarse for a call of a millisecond)."""
    try:
        total = 0
        for task in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{task}/schedstat") as f:
                total += int(f.read().split()[0])
        return total / 1e9
    except (OSError, ValueError, IndexError):
        pass
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def settle(*servers_: Running, quiet: float = 0.3, most: float = 30.0) -> float:
    """Wait until the servers use no CPU for ``quiet`` seconds (the background work a
    read starts, such as building syntax trees, is done), as an agent would think after
    reading; at most ``most`` seconds. Returns the seconds waited."""
    t0 = time.perf_counter()
    last = [cpu_seconds(s.pid) for s in servers_]
    still = time.perf_counter()
    while time.perf_counter() - t0 < most:
        time.sleep(0.05)
        now = [cpu_seconds(s.pid) for s in servers_]
        if any(b - a > 0.005 for a, b in zip(last, now, strict=True)):
            still = time.perf_counter()
        elif time.perf_counter() - still >= quiet:
            break
        last = now
    return time.perf_counter() - t0


def _flip(
    srv: Running, path: str, a: str, b: str, tally: dict[str, int]
) -> Callable[[int], object]:
    """An edit of ``path`` from ``a`` to ``b`` and back, counting skipped checks and
    reported errors in ``tally``."""
    fwd = {"file_path": path, "old_string": a, "new_string": b}
    back = {"file_path": path, "old_string": b, "new_string": a}

    def go(i: int) -> object:
        r = sh_call(srv, "steadyhand.edit", back if i % 2 else fwd)
        if r.get("syntax_check") == "skipped":
            tally["skipped"] += 1
        if r.get("syntax_errors"):
            tally["reported"] += 1
        return r

    return go


def _windows(path: Path, n: int, lines: list[int]) -> list[dict[str, Any]]:
    """Read params showing ``lines`` (the whole file when it is small; else a small window
    around each, as an agent reads before it edits: one window over lines far apart would
    pass what one read answers)."""
    if n <= 1000:
        return [{"file_path": str(path)}]
    return [{"file_path": str(path), "offset": k - 3, "limit": 7} for k in sorted(set(lines))]


def _cpu_ns(pid: int) -> int:
    """The CPU time the process ``pid`` has run, all its threads together (Linux's
    ``/proc/<pid>/task/*/schedstat``; 0 where there is none)."""
    total = 0
    for stat_file in Path(f"/proc/{pid}/task").glob("*/schedstat"):
        try:
            total += int(stat_file.read_text().split()[0])
        except (OSError, ValueError, IndexError):
            continue
    return total


def interleave(
    ops: dict[str, Callable[[int], object]], n: int, warmup: int
) -> dict[str, list[float]]:
    """Call every op once per round, in a new order each round; times in ms.

    The order is shuffled (with a fixed seed) so that no contender always follows the same
    other one, as in a rotation, and never runs twice in a row across two rounds (a call
    right after a call to the same server finds its caches warm).
    """
    names = list(ops)
    times: dict[str, list[float]] = {k: [] for k in names}
    shuffle = random.Random(f"{names}:{n}")
    last: str | None = None
    for i in range(warmup + n):
        order = shuffle.sample(names, len(names))
        if len(order) > 1 and order[0] == last:
            order[0], order[-1] = order[-1], order[0]
        last = order[-1]
        for k in order:
            t0 = time.perf_counter_ns()
            ops[k](i)
            dt = (time.perf_counter_ns() - t0) / 1e6
            if i >= warmup:
                times[k].append(dt)
    return times


@dataclass(frozen=True)
class WatchRun:
    first: float | None  # s until a change to the read file was reported
    whole: float | None  # s until every folder was watched
    folders: int
    state: str
    rss: float  # MiB


@dataclass
class OpRow:
    name: str
    times: dict[str, list[float]]
    kind: str  # "read" | "edit" | "write" | "create" | "multi"
    lines: int = 0
    note: str = ""
    #: Exclusive create (ms, median) in each contender's folder just before the row, and
    #: just after it.
    create_ms: dict[str, float] = field(default_factory=dict)
    create_ms_after: dict[str, float] = field(default_factory=dict)

    def get(self, who: str) -> list[float]:
        return self.times.get(who, [])


def _spot(folder: Path, name: str) -> Path:
    """Where the benchmark keeps the file ``name`` of a contender's ``folder``: in a folder
    of its own (made here), which the file system places apart from the others."""
    spot = folder / Path(name).stem
    spot.mkdir(exist_ok=True)
    return spot / name


def _probed(folders: dict[str, Path], measure: Callable[[], OpRow]) -> OpRow:
    """``measure()``'s row, with the cost of creating a file in each of ``folders`` just
    before it and just after it."""
    costs = {k: fsstate.create_cost(str(d)) for k, d in folders.items()}
    row = measure()
    row.create_ms = costs
    row.create_ms_after = {k: fsstate.create_cost(str(d)) for k, d in folders.items()}
    return row


@dataclass
class Report:
    mode: Mode
    sections: list[str] = field(default_factory=list)
    targets: list[tuple[str, str, str, str]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def target(self, name: str, goal: str, measured: str, met: bool | None, miss: str = "") -> None:
        verdict = "not measured" if met is None else ("met" if met else f"**missed** ({miss})")
        self.targets.append((name, goal, measured, verdict))


# -- the run -----------------------------------------------------------------------------


class Bench:
    def __init__(self, mode: Mode, run_dir: Path, cache: Path) -> None:
        self.mode = mode
        self.run = run_dir
        self.cache = cache
        self.ws = run_dir / "ws"
        self.logs = run_dir / "logs"
        self.report = Report(mode)
        for d in (self.ws, self.logs):
            d.mkdir(parents=True, exist_ok=True)
        self.peer_version = servers.ensure_peer()

    def start(self, spec: servers.Spec, workspace: Path | None = None) -> Running:
        return servers.start(spec, str(workspace or self.ws), str(self.logs))

    # -- start-up and idle memory ------------------------------------------------------

    def startup(self) -> None:
        specs = [
            servers.steadyhand(),
            servers.bare_pygls("stock"),
            servers.bare_pygls("pipe"),
            servers.peer(str(self.ws)),
        ]
        t: dict[str, list[float]] = {s.name: [] for s in specs}
        rss: dict[str, list[float]] = {s.name: [] for s in specs}
        #: process start to the first answered tool call (a read of a 1k-line file)
        first: dict[str, list[float]] = {SH: [], PEER: []}
        probe = self.ws / "startup-probe.py"
        probe.write_text(workload.source_text(1000))
        for i in range(self.mode.startups):
            r = i % len(specs)
            for spec in specs[r:] + specs[:r]:
                srv = self.start(spec)
                t[spec.name].append(srv.startup_s * 1000)
                if spec.name in first:
                    t0 = time.perf_counter()
                    if spec.name == SH:
                        sh_call(srv, "steadyhand.read", {"file_path": str(probe)})
                    else:
                        mcp_call(srv, "read_text_file", {"path": str(probe)})
                    call = time.perf_counter() - t0
                    first[spec.name].append((srv.startup_s + call) * 1000)
                rss[spec.name].append(rss_kib(srv.pid)["VmRSS"] / 1024)
                srv.close()
        rows = [
            "| Server | Start-up to answered `initialize` p50 / max | RSS after start-up |",
            "|---|---|---|",
        ]
        for name in t:
            rows.append(
                f"| {name} | {ms(p50(t[name]))} / {ms(max(t[name]))} ms | "
                f"{p50(rss[name]):.1f} MiB |"
            )
        sh, bare = p50(t[SH]), p50(t["pygls-stock"])
        rows.append("")
        rows.append(f"Steadyhand ÷ bare pygls start-up: **{ratio(sh / bare)}** (target ≤ 1.15×).")
        rows.append("")
        rows.append(
            "Cold start, process start to the first answered tool call (a read of a 1k-line "
            f"file): Steadyhand {ms(p50(first[SH]))} ms p50 (max {ms(max(first[SH]))}), the MCP "
            f"peer {ms(p50(first[PEER]))} ms p50 (max {ms(max(first[PEER]))})."
        )
        vscode = RESULTS / "vscode-start.json"
        if vscode.exists():
            import json

            v = json.loads(vscode.read_text())
            rows.append("")
            rows.append(
                f"In VS Code ({v.get('vscode')}, the last code-server run of `make test`): on "
                f"a warm install, a restart of the server to the first answered command takes "
                f"{v['warm_restart_to_first_answer_ms']} ms; on the first start, the server "
                f"(its private environment installed first) was ready {v['first_ready_ms']} ms "
                "after the test asked for the extension."
            )
        self.report.sections.append(
            f"## Start-up and idle memory ({self.mode.startups} starts each, interleaved)\n\n"
            + "\n".join(rows)
        )
        self.report.target(
            "Start-up",
            "≤ 1.15× bare pygls",
            f"{ratio(sh / bare)} ({ms(sh)} ms)",
            sh / bare <= 1.15,
            f"{ratio(sh / bare)}, {ms(sh - bare * 1.15)} ms over",
        )

    # -- trivial round trip ---------------------------------------------------------------

    def trivial(self) -> None:
        specs = [
            servers.steadyhand(),
            servers.bare_pygls("stock"),
            servers.bare_pygls("pipe"),
            servers.bare_pygls("protocol"),
            servers.peer(str(self.ws)),
        ]
        running = [self.start(s) for s in specs]
        try:

            def call(srv: Running) -> Callable[[int], object]:
                if srv.spec.is_mcp:
                    return lambda i: srv.client.request("ping", {})
                cmd = "steadyhand.ping" if srv.spec.name == SH else "bench.ping"
                params = {"command": cmd, "arguments": [{}]}
                return lambda i: srv.client.request("workspace/executeCommand", params)

            times = interleave({s.spec.name: call(s) for s in running}, self.mode.trivial_calls, 50)
        finally:
            for s in running:
                s.close()
        best_name = min((k for k in times if k.startswith("pygls-")), key=lambda k: p50(times[k]))
        best = p50(times[best_name])
        rows = ["| Server (trivial request) | p50 | p99 | ÷ best pygls p50 |", "|---|---|---|---|"]
        labels = {
            SH: "Steadyhand `steadyhand.ping`",
            "pygls-stock": "bare pygls, stock stdio",
            "pygls-pipe": "bare pygls, asyncio pipe reader",
            "pygls-protocol": "bare pygls, asyncio.Protocol + os.write",
            PEER: "MCP peer, `ping`",
        }
        for k, v in times.items():
            rows.append(
                f"| {labels[k]} | {us(p50(v))} | {us(pct(v, 0.99))} | {ratio(p50(v) / best)} |"
            )
        sh = p50(times[SH])
        self.trivial_ms = sh
        self.report.sections.append(
            f"## Trivial round trip ({self.mode.trivial_calls} calls each, interleaved)\n\n"
            + "\n".join(rows)
        )
        self.report.target(
            "Trivial round trip",
            "≤ 1.2× best pygls transport (aim ≤ 250 µs)",
            f"{us(sh)} = {ratio(sh / best)} of {labels[best_name]}",
            sh / best <= 1.2,
            f"{ratio(sh / best)}",
        )

    # -- operations -----------------------------------------------------------------------

    def operations(self) -> None:
        m = self.mode
        dirs = {k: self.ws / k for k in (SH, SHD, PEER, FLOOR, FLOORD)}
        # Each file (and the creates) gets a folder of its own, spread over the disk, so
        # that the files one row replaces do not slow the creates of the next rows.
        spread = fsstate.spread(str(self.ws))
        for d in dirs.values():
            d.mkdir(exist_ok=True)
            spread = fsstate.spread(str(d)) and spread
        for n in m.sizes:
            text = workload.source_text(n)
            for d in dirs.values():
                _spot(d, f"f{n}.py").write_text(text)
                _spot(d, f"m{n}.py").write_text(text)
        for d in dirs.values():
            _spot(d, "w1k.py").write_text(workload.source_text(1000))
            (d / "create").mkdir(exist_ok=True)
        # Each server gets a folder of its own as its workspace, as in real use: one that
        # watched the others' folders too would be woken by their writes (some 1,000 a
        # second here) and share its undo history with them.
        sh = self.start(servers.steadyhand(SH, fsync=False), dirs[SH])
        shd = self.start(servers.steadyhand(SHD), dirs[SHD])
        peer = self.start(servers.peer(str(dirs[PEER])), dirs[PEER])
        multi = next((c for c in sh.commands() if "multi" in c), None)
        rows: list[OpRow] = []
        try:
            # Steadyhand needs to have seen what it edits: read it once, up front.
            for srv, name in ((sh, SH), (shd, SHD)):
                d = dirs[name]
                sh_call(srv, "steadyhand.read", {"file_path": str(_spot(d, "w1k.py"))})
                for n in m.sizes:
                    k, _ = workload.edit_pair(n)
                    ks = [k for k, _ in workload.multi_edit_pairs(n)]
                    for params in _windows(_spot(d, f"f{n}.py"), n, [k]) + _windows(
                        _spot(d, f"m{n}.py"), n, ks
                    ):
                        sh_call(srv, "steadyhand.read", params)
            settle(sh, shd)  # the agent thinks after reading

            def where(name: str) -> dict[str, Path]:
                return {k: _spot(dirs[k], name).parent for k in (SH, PEER, FLOOR)}

            rows.append(_probed(where("f1000.py"), lambda: self._read_row(sh, peer, dirs)))
            for n in m.sizes:
                edit = partial(self._edit_row, sh, shd, peer, dirs, n)
                rows.append(_probed(where(f"f{n}.py"), edit))
            rows.append(_probed(where("w1k.py"), lambda: self._write_row(sh, shd, peer, dirs)))
            made = {k: dirs[k] / "create" for k in (SH, PEER, FLOOR)}
            rows.append(_probed(made, lambda: self._create_row(sh, shd, peer, dirs)))
            if multi is not None:
                for n in m.sizes:
                    multi_row = partial(self._multi_row, sh, shd, peer, dirs, n, multi)
                    rows.append(_probed(where(f"m{n}.py"), multi_row))
        finally:
            for s in (sh, shd, peer):
                s.close()
        self._ops_table(rows, multi)
        self._fs_table(rows, spread)

    # -- Linux's code paths against the portable ones --------------------------------

    def _platform_rows(self, fsync: bool) -> list[tuple[str, dict[str, list[float]]]]:
        """Two Steadyhand servers side by side, on twin workspaces: one on
        Linux's calls (openat2, O_PATH and /proc, renameat2, O_TMPFILE, inotify), one on
        an emulated macOS (tests/emulate: the calls macOS has, or the fallbacks where
        a Linux kernel cannot stand in for them). Calls alternate between the two, so the
        machine's load falls on both alike; the p50s are compared."""
        m = self.mode
        dirs = {k: self.ws / f"platforms-{int(fsync)}" / k for k in ("linux", "macos")}
        for d in dirs.values():
            (d / "create").mkdir(parents=True, exist_ok=True)
            for n in m.sizes:
                text = workload.source_text(n)
                (d / f"f{n}.py").write_text(text)
                (d / f"m{n}.py").write_text(text)
            (d / "w1k.py").write_text(workload.source_text(1000))
        specs = {
            # no watching: the emulated macOS could only poll (watchdog's fallback), where
            # a real one has FSEvents; the file operations themselves are compared
            "linux": servers.steadyhand("linux", fsync=fsync, watch=False),
            "macos": replace(
                servers.steadyhand("macos", fsync=fsync, watch=False),
                env=servers.emulated_macos(),
            ),
        }
        srv = {k: self.start(spec, dirs[k]) for k, spec in specs.items()}
        rows: list[tuple[str, dict[str, list[float]]]] = []
        try:
            said = sh_call(srv["macos"], "steadyhand.ping", {})["platform"]["os"]
            if said != "macos":
                raise RuntimeError(f"the emulated server says it runs on {said}")
            for k, d in dirs.items():  # what is edited was read, as an agent does
                sh_call(srv[k], "steadyhand.read", {"file_path": str(d / "w1k.py")})
                for n in m.sizes:
                    one = [workload.edit_pair(n)[0]]
                    three = [line for line, _ in workload.multi_edit_pairs(n)]
                    for params in _windows(d / f"f{n}.py", n, one) + _windows(
                        d / f"m{n}.py", n, three
                    ):
                        sh_call(srv[k], "steadyhand.read", params)

            def per(
                make: Callable[[str], Callable[[int], object]],
            ) -> dict[str, Callable[[int], object]]:
                return {k: make(k) for k in dirs}

            def timed(
                ops: dict[str, Callable[[int], object]], calls: int
            ) -> dict[str, list[float]]:
                """:func:`interleave`, and the CPU time each server spent per call (all
                its threads: far less moved by the machine's load than the wall clock)."""
                before = {k: _cpu_ns(srv[k].pid) for k in srv}
                times = interleave(ops, calls, m.warmup)
                for k in srv:
                    spent = (_cpu_ns(srv[k].pid) - before[k]) / 1e6
                    times[f"cpu:{k}"] = [spent / (calls + m.warmup)]
                return times

            def read(k: str) -> Callable[[int], object]:
                path = str(dirs[k] / "w1k.py")
                opts = [{"file_path": path}, {"file_path": path, "offset": 1, "limit": 999}]
                return lambda i: sh_call(srv[k], "steadyhand.read", opts[i % 2])

            rows.append(("read 1k lines", timed(per(read), m.calls)))
            for n in m.sizes:
                _, pair = workload.edit_pair(n)

                def edit(
                    k: str, n: int = n, pair: workload.EditPair = pair
                ) -> Callable[[int], object]:
                    path = str(dirs[k] / f"f{n}.py")
                    fwd = {"file_path": path, "old_string": pair.a, "new_string": pair.b}
                    back = {"file_path": path, "old_string": pair.b, "new_string": pair.a}
                    return lambda i: sh_call(srv[k], "steadyhand.edit", back if i % 2 else fwd)

                calls = m.calls if n < 100_000 else m.calls_100k
                rows.append((f"one-line edit, {n // 1000}k lines", timed(per(edit), calls)))
            contents = [workload.source_text(1000, variant=1), workload.source_text(1000)]

            def write(k: str) -> Callable[[int], object]:
                path = str(dirs[k] / "w1k.py")
                return lambda i: sh_call(
                    srv[k], "steadyhand.write", {"file_path": path, "content": contents[i % 2]}
                )

            rows.append(("write (overwrite) 1k lines", timed(per(write), m.calls)))
            content = workload.source_text(100)

            def create(k: str) -> Callable[[int], object]:
                return lambda i: sh_call(
                    srv[k],
                    "steadyhand.write",
                    {"file_path": str(dirs[k] / "create" / f"new{i}.py"), "content": content},
                )

            rows.append(("create (100 lines)", timed(per(create), m.calls)))
            for n in m.sizes:
                pairs = [p for _, p in workload.multi_edit_pairs(n)]

                def multi(
                    k: str, n: int = n, pairs: list[workload.EditPair] = pairs
                ) -> Callable[[int], object]:
                    path = str(dirs[k] / f"m{n}.py")
                    fwd = [{"old_string": p.a, "new_string": p.b} for p in pairs]
                    back = [{"old_string": p.b, "new_string": p.a} for p in pairs]
                    return lambda i: sh_call(
                        srv[k],
                        "steadyhand.multiEdit",
                        {"file_path": path, "edits": back if i % 2 else fwd},
                    )

                calls = m.calls if n < 100_000 else m.calls_100k
                rows.append(
                    (
                        f"multi-edit (3 edits), {n // 1000}k lines",
                        timed(per(multi), calls),
                    )
                )
        finally:
            for s in srv.values():
                s.close()
        return rows

    def platforms(self) -> None:
        """Linux's code paths against the portable ones, fsync off and on
        (:meth:`_platform_rows`)."""
        runs = {fsync: self._platform_rows(fsync) for fsync in (False, True)}
        lines = [
            "## Linux's code paths against the portable ones (an emulated macOS)",
            "",
            "Two servers side by side, calls alternating between them: one on Linux's "
            'calls, one with `sys.platform == "darwin"` and the Linux-only names gone '
            "(`bench/run.py --only platforms`; tests/emulate), watching off in both (the "
            "emulated one could only poll). The budget: no operation more than 10% slower "
            "at p50.",
            "",
            "| Operation | fsync off: Linux / emulated macOS p50 ms | change | CPU ms per call "
            "| change | fsync on: p50 ms | change | CPU ms per call | change |",
            "|---|---|---|---|---|---|---|---|---|",
        ]
        for (name, off), (_, on) in zip(runs[False], runs[True], strict=True):
            cells = []
            for t in (off, on):
                a, b = p50(t["linux"]), p50(t["macos"])
                ca, cb = t["cpu:linux"][0], t["cpu:macos"][0]
                cells.append(
                    f"{a:.2f} / {b:.2f} | {(b / a - 1) * 100:+.1f}% | {ca:.2f} / {cb:.2f} | "
                    f"{(cb / ca - 1) * 100:+.1f}%"
                )
            lines.append(f"| {name} | {cells[0]} | {cells[1]} |")
        self.report.sections.append("\n".join(lines))

    def _read_row(self, sh: Running, peer: Running, dirs: dict[str, Path]) -> OpRow:
        n = 1000
        sp, pp, fp = (str(_spot(dirs[k], f"f{n}.py")) for k in (SH, PEER, FLOOR))
        # Alternate the (offset, limit) key so every call returns the content (a repeat of
        # the very same read would get the short "unchanged" answer).
        keyed = [{"file_path": sp}, {"file_path": sp, "offset": 1, "limit": 2000}]
        times = interleave(
            {
                SH: lambda i: sh_call(sh, "steadyhand.read", keyed[i % 2]),
                PEER: lambda i: mcp_call(peer, "read_text_file", {"path": pp}),
                FLOOR: lambda i: floor.read(fp),
            },
            self.mode.calls,
            self.mode.warmup,
        )
        return OpRow("read 1k lines", times, "read", n)

    def _edit_row(
        self, sh: Running, shd: Running, peer: Running, dirs: dict[str, Path], n: int
    ) -> OpRow:
        _, pair = workload.edit_pair(n)
        f = f"f{n}.py"

        def sh_edit(srv: Running, d: Path) -> Callable[[int], object]:
            path = str(_spot(d, f))
            fwd = {"file_path": path, "old_string": pair.a, "new_string": pair.b}
            back = {"file_path": path, "old_string": pair.b, "new_string": pair.a}
            return lambda i: sh_call(srv, "steadyhand.edit", back if i % 2 else fwd)

        pp = str(_spot(dirs[PEER], f))
        pe = [
            {"path": pp, "edits": [{"oldText": pair.a, "newText": pair.b}]},
            {"path": pp, "edits": [{"oldText": pair.b, "newText": pair.a}]},
        ]
        fp, fdp = str(_spot(dirs[FLOOR], f)), str(_spot(dirs[FLOORD], f))
        times = interleave(
            {
                SH: sh_edit(sh, dirs[SH]),
                SHD: sh_edit(shd, dirs[SHD]),
                PEER: lambda i: mcp_call(peer, "edit_file", pe[i % 2]),
                FLOOR: lambda i: floor.edit(fp, *((pair.b, pair.a) if i % 2 else (pair.a, pair.b))),
                FLOORD: lambda i: floor.edit(
                    fdp, *((pair.b, pair.a) if i % 2 else (pair.a, pair.b)), fsync=True
                ),
            },
            self.mode.calls if n < 100_000 else self.mode.calls_100k,
            self.mode.warmup,
        )
        return OpRow(f"one-line edit, {n // 1000}k lines", times, "edit", n)

    def _write_row(self, sh: Running, shd: Running, peer: Running, dirs: dict[str, Path]) -> OpRow:
        contents = [workload.source_text(1000, variant=1), workload.source_text(1000)]
        paths = {k: str(_spot(dirs[k], "w1k.py")) for k in dirs}
        times = interleave(
            {
                SH: lambda i: sh_call(
                    sh, "steadyhand.write", {"file_path": paths[SH], "content": contents[i % 2]}
                ),
                SHD: lambda i: sh_call(
                    shd, "steadyhand.write", {"file_path": paths[SHD], "content": contents[i % 2]}
                ),
                PEER: lambda i: mcp_call(
                    peer, "write_file", {"path": paths[PEER], "content": contents[i % 2]}
                ),
                FLOOR: lambda i: floor.write(paths[FLOOR], contents[i % 2]),
                FLOORD: lambda i: floor.write(paths[FLOORD], contents[i % 2], fsync=True),
            },
            self.mode.calls,
            self.mode.warmup,
        )
        return OpRow("write (overwrite) 1k lines", times, "write", 1000, "every 10th line differs")

    def _create_row(self, sh: Running, shd: Running, peer: Running, dirs: dict[str, Path]) -> OpRow:
        content = workload.source_text(100)

        def p(k: str, i: int) -> str:
            return str(dirs[k] / "create" / f"new{i}.py")

        times = interleave(
            {
                SH: lambda i: sh_call(
                    sh, "steadyhand.write", {"file_path": p(SH, i), "content": content}
                ),
                SHD: lambda i: sh_call(
                    shd, "steadyhand.write", {"file_path": p(SHD, i), "content": content}
                ),
                PEER: lambda i: mcp_call(
                    peer, "write_file", {"path": p(PEER, i), "content": content}
                ),
                FLOOR: lambda i: floor.create(p(FLOOR, i), content),
                FLOORD: lambda i: floor.create(p(FLOORD, i), content, fsync=True),
            },
            self.mode.calls,
            self.mode.warmup,
        )
        return OpRow("create (100 lines)", times, "create", 100)

    def _multi_row(
        self,
        sh: Running,
        shd: Running,
        peer: Running,
        dirs: dict[str, Path],
        n: int,
        command: str,
    ) -> OpRow:
        pairs = [pair for _, pair in workload.multi_edit_pairs(n)]
        f = f"m{n}.py"

        def sh_multi(srv: Running, d: Path) -> Callable[[int], object]:
            path = str(_spot(d, f))
            fwd = [{"old_string": p.a, "new_string": p.b} for p in pairs]
            back = [{"old_string": p.b, "new_string": p.a} for p in pairs]
            return lambda i: sh_call(
                srv, command, {"file_path": path, "edits": back if i % 2 else fwd}
            )

        pp = str(_spot(dirs[PEER], f))
        pe = [
            {"path": pp, "edits": [{"oldText": p.a, "newText": p.b} for p in pairs]},
            {"path": pp, "edits": [{"oldText": p.b, "newText": p.a} for p in pairs]},
        ]

        def floor_multi(path: str, fsync: bool) -> Callable[[int], object]:
            def go(i: int) -> None:
                with open(path, encoding="utf-8") as fh:
                    text = fh.read()
                for p in pairs:
                    old, new = (p.b, p.a) if i % 2 else (p.a, p.b)
                    text = text.replace(old, new, 1)
                floor.write(path, text, fsync=fsync)

            return go

        try:
            times = interleave(
                {
                    SH: sh_multi(sh, dirs[SH]),
                    SHD: sh_multi(shd, dirs[SHD]),
                    PEER: lambda i: mcp_call(peer, "edit_file", pe[i % 2]),
                    FLOOR: floor_multi(str(_spot(dirs[FLOOR], f)), False),
                    FLOORD: floor_multi(str(_spot(dirs[FLOORD], f)), True),
                },
                self.mode.calls if n < 100_000 else self.mode.calls_100k,
                self.mode.warmup,
            )
        except CallFailed as exc:
            return OpRow(f"multi-edit (3 edits), {n // 1000}k lines", {}, "multi", n, str(exc))
        return OpRow(f"multi-edit (3 edits), {n // 1000}k lines", times, "multi", n)

    def _ops_table(self, rows: list[OpRow], multi: str | None) -> None:
        head = (
            "| Operation | Steadyhand p50 / p99 ms | MCP peer p50 / p99 ms | **peer ÷ Steadyhand**"
            " p50 / p99 | floor p50 ms | **Steadyhand vs floor** p50 | with fsync (default) "
            "p50 / p99 ms | fsync cost p50 ms |\n|---|---|---|---|---|---|---|---|"
        )
        out = [head]
        for row in rows:
            if not row.times:
                out.append(f"| {row.name} | failed: {row.note[:120]} | | | | | | |")
                continue
            s, pe, fl = row.get(SH), row.get(PEER), row.get(FLOOR)
            sd, fd = row.get(SHD), row.get(FLOORD)
            r50, r99 = p50(pe) / p50(s), pct(pe, 0.99) / pct(s, 0.99)
            vs = (
                f"+{ms(p50(s) - p50(fl))} ms"
                if row.kind == "edit" and row.lines <= 10_000
                else ratio(p50(s) / p50(fl))
            )
            dur = f"{ms(p50(sd))} / {ms(pct(sd, 0.99))}" if sd else "—"
            cost = ms(p50(sd) - p50(s)) if sd else "—"
            if fd:
                cost += f" (floor: {ms(p50(fd) - p50(fl))})"
            out.append(
                f"| {row.name} | {ms(p50(s))} / {ms(pct(s, 0.99))} | {ms(p50(pe))} / "
                f"{ms(pct(pe, 0.99))} | {ratio(r50)} / {ratio(r99)} | {ms(p50(fl))} | {vs} | "
                f"{dur} | {cost} |"
            )
            ok2 = r50 >= 2 and r99 >= 2
            self.report.target(
                f"{row.name}: vs peer",
                "≥ 2× faster at p50 and p99",
                f"{ratio(r50)} / {ratio(r99)}",
                ok2,
                f"{ratio(min(r50, r99))} of 2×",
            )
            if sd:
                d50, d99 = p50(pe) / p50(sd), pct(pe, 0.99) / pct(sd, 0.99)
                self.report.target(
                    f"{row.name}: durable (fsync on) vs peer",
                    "≥ 1.5× faster at p50 and p99",
                    f"{ratio(d50)} / {ratio(d99)}",
                    d50 >= 1.5 and d99 >= 1.5,
                    f"{ratio(min(d50, d99))} of 1.5×",
                )
            if row.kind == "edit":
                if row.lines <= 10_000:
                    extra = p50(s) - p50(fl)
                    self.report.target(
                        f"{row.name}: vs floor",
                        "≤ floor + 0.5 ms",
                        f"floor + {ms(extra)} ms",
                        extra <= 0.5,
                        f"{ms(extra - 0.5)} ms over",
                    )
                else:
                    q = p50(s) / p50(fl)
                    self.report.target(
                        f"{row.name}: vs floor",
                        "≤ 1.3× floor",
                        ratio(q),
                        q <= 1.3,
                        f"{ratio(q)}",
                    )
        n = len(next((r.get(SH) for r in rows if r.times), []))
        text = (
            f"## Operations ({n} calls each, interleaved; files of generated source lines)\n\n"
            "Steadyhand and the floor here run without fsync, like the MCP peer; the "
            "`with fsync` column is Steadyhand's default (durable) configuration, and "
            "`fsync cost` what durability adds.\n\n" + "\n".join(out)
        )
        if multi is None:
            text += "\n\nmulti-edit: not measured (this server advertises no multi-edit command)."
        self.report.sections.append(text)

    def _fs_table(self, rows: list[OpRow], spread: bool) -> None:
        out = [
            "| Row | in Steadyhand's folder, before / after | in the peer's | in the floor's |",
            "|---|---|---|---|",
        ]

        def cell(row: OpRow, k: str) -> str:
            a, b = row.create_ms.get(k), row.create_ms_after.get(k)
            if a is None or b is None:
                return "—"
            return f"{a * 1000:.0f} / {b * 1000:.0f} µs"

        for row in rows:
            if row.create_ms:
                out.append(
                    f"| {row.name} | " + " | ".join(cell(row, k) for k in (SH, PEER, FLOOR)) + " |"
                )
        self.report.sections.append(
            f"## The file system's state (exclusive create of an empty file, median of 25)\n\n"
            f"The workspaces are on {fsstate.file_system(str(self.ws))}; each file of each "
            "contender is in a folder of its own, "
            + (
                "placed apart from the others (`chattr +T` on the folders above them). "
                if spread
                else "but the folders could not be spread over the disk. "
            )
            + "Every atomic write and every create makes a file, so this cost is in every "
            "operation above, for every contender; docs/performance.md says why it moves."
            "\n\n" + "\n".join(out)
        )

    # -- the syntax guard ------------------------------------------------------------

    def syntax(self) -> None:
        """A one-line edit with the syntax check on (``warn``, the default) and off, side
        by side, on valid Python files of 1k and 10k lines read before (their trees built
        while the agent thinks)."""
        warn_dir, off_dir = self.ws / "syntax-warn", self.ws / "syntax-off"
        sizes = (1_000, 10_000)
        kinds = ("valid", "breaks")  # a file for each row: each row leaves its file flipped
        for d in (warn_dir, off_dir):
            d.mkdir(exist_ok=True)
            for n in sizes:
                for kind in kinds:
                    (d / f"s{n}-{kind}.py").write_text(workload.python_module(n))
        warn = self.start(servers.steadyhand("syntax-warn", fsync=False), warn_dir)
        off = self.start(servers.steadyhand("syntax-off", fsync=False, syntaxCheck="off"), off_dir)
        rows: list[tuple[str, dict[str, list[float]], int, dict[str, float]]] = []
        tally: dict[str, dict[str, int]] = {
            k: {"skipped": 0, "reported": 0} for k in ("warn", "off")
        }
        try:
            for srv, d in ((warn, warn_dir), (off, off_dir)):
                for n in sizes:
                    for kind in kinds:
                        window = {"offset": n // 2 - 20, "limit": 40}
                        sh_call(
                            srv,
                            "steadyhand.read",
                            {"file_path": str(d / f"s{n}-{kind}.py"), **window},
                        )
            waited = settle(warn, off)

            def row(label: str, n: int, ops: dict[str, Callable[[int], object]]) -> None:
                cpu0 = {"warn": cpu_seconds(warn.pid), "off": cpu_seconds(off.pid)}
                times = interleave(ops, self.mode.calls, self.mode.warmup)
                times.setdefault("parse", [])
                made = self.mode.calls + self.mode.warmup
                cpu = {
                    "warn": (cpu_seconds(warn.pid) - cpu0["warn"]) * 1000 / made,
                    "off": (cpu_seconds(off.pid) - cpu0["off"]) * 1000 / made,
                }
                rows.append((label, times, n, cpu))

            for n in sizes:
                a, b, c = workload.syntax_pair(n)
                for kind, label, new in (
                    ("valid", "one-line edit", b),
                    ("breaks", "one-line edit that breaks it", c),
                ):
                    name = f"s{n}-{kind}.py"
                    row(
                        f"{label}, {n // 1000}k lines",
                        n,
                        {
                            "warn": _flip(warn, str(warn_dir / name), a, new, tally["warn"]),
                            "off": _flip(off, str(off_dir / name), a, new, tally["off"]),
                        },
                    )
            # Whole-file writes: what the check costs the operations' write and create rows.
            versions = [workload.source_text(1000, variant=1), workload.source_text(1000)]
            for srv, d in ((warn, warn_dir), (off, off_dir)):
                (d / "w1k.py").write_text(versions[1])
                sh_call(srv, "steadyhand.read", {"file_path": str(d / "w1k.py")})
            small = workload.source_text(100)

            def write(srv: Any, d: Path) -> Callable[[int], object]:
                path = str(d / "w1k.py")
                return lambda i: sh_call(
                    srv, "steadyhand.write", {"file_path": path, "content": versions[i % 2]}
                )

            def create(srv: Any, d: Path) -> Callable[[int], object]:
                return lambda i: sh_call(
                    srv, "steadyhand.write", {"file_path": str(d / f"new{i}.py"), "content": small}
                )

            row(
                "write (overwrite) 1k lines, every tenth line changed",
                1000,
                {
                    "warn": write(warn, warn_dir),
                    "off": write(off, off_dir),
                    "parse": _whole_parse([v.encode() for v in versions]),
                },
            )
            row(
                "create (100 lines)",
                100,
                {
                    "warn": create(warn, warn_dir),
                    "off": create(off, off_dir),
                    "parse": _whole_parse([small.encode()]),
                },
            )
            rss = {k: rss_kib(s.pid)["VmRSS"] / 1024 for k, s in (("warn", warn), ("off", off))}
        finally:
            warn.close()
            off.close()
        out = [
            "| Operation | `syntaxCheck: warn` p50 / p99 ms | `off` p50 / p99 ms | "
            "**added** p50 / p99 ms | whole parse p50 / p99 ms | added ÷ whole parse, p50 | "
            "server CPU per call, warn / off ms (added) |",
            "|---|---|---|---|---|---|---|",
        ]
        for name, times, _n, cpu in rows:
            w, o, pa = times["warn"], times["off"], times["parse"]
            add50, add99 = p50(w) - p50(o), pct(w, 0.99) - pct(o, 0.99)
            share = add50 / p50(pa) if pa else math.nan
            out.append(
                f"| {name} | {ms(p50(w))} / {ms(pct(w, 0.99))} | {ms(p50(o))} / "
                f"{ms(pct(o, 0.99))} | **{ms(add50)}** / {ms(add99)} | "
                f"{ms(p50(pa)) if pa else '—'} / {ms(pct(pa, 0.99)) if pa else '—'} | "
                f"{ratio(share)} | {ms(cpu['warn'])} / {ms(cpu['off'])} "
                f"(+{ms(cpu['warn'] - cpu['off'])}) |"
            )
            if name.startswith("one-line edit,"):
                goal = SYNTAX_EDIT_MS
                self.report.target(
                    f"syntax check, {name}",
                    f"≤ {goal:g} ms added at p50",
                    f"+{ms(add50)} ms (p99 +{ms(add99)} ms)",
                    add50 <= goal,
                    f"{ms(add50 - goal)} ms over",
                )
            elif name.startswith("write"):
                goal = SYNTAX_WRITE_SHARE
                self.report.target(
                    f"syntax check, {name}",
                    f"≤ {goal:g}× a whole parse of the new text, added at p50",
                    f"+{ms(add50)} ms, {ratio(share)} of {ms(p50(pa))} ms (p99 +{ms(add99)} ms)",
                    share <= goal,
                    f"{ratio(share - goal)} over",
                )
        calls = len(rows) * (self.mode.calls + self.mode.warmup)
        self.report.sections.append(
            "## Syntax guard (one-line edits of valid Python, whole-file writes, "
            f"{self.mode.calls} calls each, interleaved)\n\n"
            "Two servers, one with the syntax check on (`warn`, the default) and one with it "
            "off, each in a folder of its own and without fsync; the file was read once "
            f"before (a window around the edit), then the servers were left alone until idle "
            f"({waited:.1f} s: the agent thinks while the tree is built). Each edit flips a "
            "line back and forth; in the second row of each size, one way puts an unclosed "
            "`(` in (reported) and the other takes it out. The last two rows are the "
            "operations' write and create, on generated Python lines, with a third contender "
            "in their rounds: one whole tree-sitter parse of the text the call writes, in the "
            "benchmark's own process (the write's target is a share of it). Of "
            f"{calls} checked changes, "
            f"{tally['warn']['skipped']} were skipped at the deadline and "
            f"{tally['warn']['reported']} reported an error. The last column is the CPU time "
            "each server used during the row, per call, and the difference (from "
            "`/proc/PID/task/*/schedstat`, to the nanosecond, with what each server does "
            "after its answers): what the check costs whatever the machine's load. "
            "RSS at the end: "
            f"{rss['warn']:.1f} MiB with the check, {rss['off']:.1f} MiB without."
            "\n\n" + "\n".join(out)
        )

    # -- MCP: steadyhand mcp against the peer, and attached against straight LSP ---------

    def mcp(self) -> None:
        m = self.mode
        dirs = {k: self.ws / "mcp" / k for k in (SHM, PEER, LSP_STRAIGHT, ATTACHED)}
        for d in dirs.values():
            d.mkdir(parents=True, exist_ok=True)
            fsstate.spread(str(d))
            for n in (1000, 10_000):
                _spot(d, f"f{n}.py").write_text(workload.source_text(n))
            _spot(d, "w1k.py").write_text(workload.source_text(1000))
        config = self.run / "mcp-config.json"
        config.write_text('{"fsync": false}\n')
        shm = self.start(servers.steadyhand_mcp(SHM, str(dirs[SHM]), str(config)), dirs[SHM])
        peer = self.start(servers.peer(str(dirs[PEER])), dirs[PEER])
        rows: list[OpRow] = []
        try:
            for n in (1000, 10_000):
                k, _ = workload.edit_pair(n)
                for params in _windows(_spot(dirs[SHM], f"f{n}.py"), n, [k]):
                    mcp_call(shm, "read_file", params)
            mcp_call(shm, "read_file", {"file_path": str(_spot(dirs[SHM], "w1k.py"))})
            rows.append(self._mcp_read_row(shm, peer, dirs))
            for n in (1000, 10_000):
                rows.append(self._mcp_edit_row(shm, peer, dirs, n))
            rows.append(self._mcp_write_row(shm, peer, dirs))
        finally:
            shm.close()
            peer.close()
        out = [
            "| Operation | `steadyhand mcp` p50 / p99 ms | MCP peer p50 / p99 ms | "
            "**peer ÷ Steadyhand** p50 / p99 |",
            "|---|---|---|---|",
        ]
        for row in rows:
            s, pe = row.get(SHM), row.get(PEER)
            r50, r99 = p50(pe) / p50(s), pct(pe, 0.99) / pct(s, 0.99)
            out.append(
                f"| {row.name} | {ms(p50(s))} / {ms(pct(s, 0.99))} | {ms(p50(pe))} / "
                f"{ms(pct(pe, 0.99))} | {ratio(r50)} / {ratio(r99)} |"
            )
            self.report.target(
                f"MCP {row.name}: vs peer",
                "≥ 2× faster at p50 and p99",
                f"{ratio(r50)} / {ratio(r99)}",
                r50 >= 2 and r99 >= 2,
                f"{ratio(min(r50, r99))} of 2×",
            )
        overhead = self._attached_overhead(dirs)
        self.report.sections.append(
            f"## MCP: `steadyhand mcp` and the peer ({m.calls} calls each, interleaved)\n\n"
            "Both over MCP's stdio transport (newline-delimited JSON-RPC), driven by the same "
            "client; `steadyhand mcp` standalone with `fsync: false` from `--config`, like the "
            "peer. Tool names are each server's own (`read_file`, `edit_file`, `write_file`; "
            "the peer's `read_text_file`).\n\n" + "\n".join(out) + "\n\n" + overhead
        )

    def _mcp_read_row(self, shm: Running, peer: Running, dirs: Any) -> OpRow:
        sp, pp = (str(_spot(dirs[k], "f1000.py")) for k in (SHM, PEER))
        keyed = [{"file_path": sp}, {"file_path": sp, "offset": 1, "limit": 2000}]
        times = interleave(
            {
                SHM: lambda i: mcp_call(shm, "read_file", keyed[i % 2]),
                PEER: lambda i: mcp_call(peer, "read_text_file", {"path": pp}),
            },
            self.mode.calls,
            self.mode.warmup,
        )
        return OpRow("read 1k lines", times, "read", 1000)

    def _mcp_edit_row(self, shm: Running, peer: Running, dirs: Any, n: int) -> OpRow:
        _, pair = workload.edit_pair(n)
        sp, pp = (str(_spot(dirs[k], f"f{n}.py")) for k in (SHM, PEER))
        se = [
            {"file_path": sp, "old_string": pair.a, "new_string": pair.b},
            {"file_path": sp, "old_string": pair.b, "new_string": pair.a},
        ]
        pe = [
            {"path": pp, "edits": [{"oldText": pair.a, "newText": pair.b}]},
            {"path": pp, "edits": [{"oldText": pair.b, "newText": pair.a}]},
        ]
        times = interleave(
            {
                SHM: lambda i: mcp_call(shm, "edit_file", se[i % 2]),
                PEER: lambda i: mcp_call(peer, "edit_file", pe[i % 2]),
            },
            self.mode.calls,
            self.mode.warmup,
        )
        return OpRow(f"one-line edit, {n // 1000}k lines", times, "edit", n)

    def _mcp_write_row(self, shm: Running, peer: Running, dirs: Any) -> OpRow:
        contents = [workload.source_text(1000, variant=1), workload.source_text(1000)]
        sp, pp = (str(_spot(dirs[k], "w1k.py")) for k in (SHM, PEER))
        times = interleave(
            {
                SHM: lambda i: mcp_call(
                    shm, "write_file", {"file_path": sp, "content": contents[i % 2]}
                ),
                PEER: lambda i: mcp_call(
                    peer, "write_file", {"path": pp, "content": contents[i % 2]}
                ),
            },
            self.mode.calls,
            self.mode.warmup,
        )
        return OpRow("write (overwrite) 1k lines", times, "write", 1000)

    def _attached_overhead(self, dirs: Any) -> str:
        """One ``steadyhand serve`` (an editor's, here the benchmark's LSP client) and one
        ``steadyhand mcp --attach require`` attached to it: the same calls on closed files,
        straight over LSP and through the MCP server and the socket, interleaved."""
        root = self.ws / "mcp"
        lsp = self.start(servers.steadyhand(LSP_STRAIGHT, fsync=False), root)
        config = self.run / "mcp-config.json"
        att = self.start(
            servers.steadyhand_mcp(ATTACHED, str(root), str(config), attach="require"), root
        )
        _, pair = workload.edit_pair(1000)
        lp, ap = (str(_spot(dirs[k], "f1000.py")) for k in (LSP_STRAIGHT, ATTACHED))
        try:
            sh_call(lsp, "steadyhand.read", {"file_path": lp})
            mcp_call(att, "read_file", {"file_path": ap})
            reads = {
                LSP_STRAIGHT: [{"file_path": lp}, {"file_path": lp, "offset": 1, "limit": 2000}],
                ATTACHED: [{"file_path": ap}, {"file_path": ap, "offset": 1, "limit": 2000}],
            }
            read_times = interleave(
                {
                    LSP_STRAIGHT: lambda i: sh_call(
                        lsp, "steadyhand.read", reads[LSP_STRAIGHT][i % 2]
                    ),
                    ATTACHED: lambda i: mcp_call(att, "read_file", reads[ATTACHED][i % 2]),
                },
                self.mode.calls,
                self.mode.warmup,
            )
            mcp_call(att, "read_file", {"file_path": ap})

            def edit(path: str, i: int) -> dict[str, Any]:
                a, b = (pair.b, pair.a) if i % 2 else (pair.a, pair.b)
                return {"file_path": path, "old_string": a, "new_string": b}

            edit_times = interleave(
                {
                    LSP_STRAIGHT: lambda i: sh_call(lsp, "steadyhand.edit", edit(lp, i)),
                    ATTACHED: lambda i: mcp_call(att, "edit_file", edit(ap, i)),
                },
                self.mode.calls,
                self.mode.warmup,
            )
        finally:
            att.close()
            lsp.close()
        rows = [
            "| Call on a closed file | straight over LSP p50 / p99 ms | attached over MCP "
            "p50 / p99 ms | **added** p50 |",
            "|---|---|---|---|",
        ]
        for name, times in (("read 1k lines", read_times), ("one-line edit, 1k lines", edit_times)):
            s, a = times[LSP_STRAIGHT], times[ATTACHED]
            added = p50(a) - p50(s)
            rows.append(
                f"| {name} | {ms(p50(s))} / {ms(pct(s, 0.99))} | {ms(p50(a))} / "
                f"{ms(pct(a, 0.99))} | + {ms(added)} ms |"
            )
            self.report.target(
                f"MCP attached, {name}: added to LSP",
                "≤ 0.3 ms at p50",
                f"+ {ms(added)} ms",
                added <= 0.3,
                f"{ms(added - 0.3)} ms over",
            )
        return (
            "Attached: one `steadyhand serve` (the benchmark's LSP client plays the editor) and "
            "one `steadyhand mcp --attach require` attached to it through its socket; the same "
            "call on a closed file, each on a file of its own, straight over LSP and over MCP "
            "through the attached server, interleaved.\n\n" + "\n".join(rows)
        )

    # -- ranged read at the end of a big log -------------------------------------------------

    def big_log(self) -> None:
        # The log's folder holds the logs alone and is the servers' workspace: the big
        # trees of the other sections are elsewhere, so no watcher sets up over them
        # beside these reads.
        log = workload.ensure_log(str(self.cache / "log"), self.mode.log_mib)
        title = f"## Ranged read: the last 2,000 lines of a {self.mode.log_mib:,} MiB log"
        if log is None:
            self.report.sections.append(f"{title}\n\nSkipped: not enough free disk space.")
            self.report.target(
                "Ranged read, big log",
                "≤ 2 s, peak RSS growth ≤ 64 MB",
                "skipped (disk space)",
                None,
            )
            return
        log_dir = Path(log.path).parent
        sh = self.start(servers.steadyhand(), log_dir)
        peer = self.start(servers.peer(str(log_dir)))
        start_line = log.lines - 1999
        growth: dict[str, list[float]] = {SH: [], PEER: []}
        timed: dict[str, list[float]] = {SH: [], PEER: []}

        def measured(srv: Running, fn: Callable[[], object], who: str) -> float:
            """Call ``fn`` between two readings of the server's memory; the call's own
            time in ms (the readings of ``/proc`` are not counted)."""
            before = rss_kib(srv.pid)["VmRSS"]
            reset_peak(srv.pid)
            t0 = time.perf_counter_ns()
            fn()
            dt = (time.perf_counter_ns() - t0) / 1e6
            growth[who].append((rss_kib(srv.pid)["VmHWM"] - before) / 1024)
            return dt

        def sh_read(session: str) -> object:
            args = {"file_path": log.path, "offset": start_line, "limit": 2000}
            return sh_call(sh, "steadyhand.read", {**args, "session": session})

        def peer_read() -> object:
            return mcp_call(peer, "read_text_file", {"path": log.path, "tail": 2000})

        try:
            floor.ranged_read(log.path, start_line, 2000)  # the page cache holds the log
            # The first read makes the one full pass (hash, line count, line index); later
            # reads of the unchanged file start from the index. Both are reported.
            first = measured(sh, lambda: sh_read("log-first"), SH)
            interleave(
                {
                    SH: lambda i: timed[SH].append(measured(sh, lambda: sh_read(f"log{i}"), SH)),
                    PEER: lambda i: timed[PEER].append(measured(peer, peer_read, PEER)),
                },
                self.mode.log_calls,
                self.mode.warmup,
            )
            # The floor reads the whole log each time (about 0.4 s a GiB): fewer calls.
            fl = interleave(
                {FLOOR: lambda i: floor.ranged_read(log.path, start_line, 2000)},
                self.mode.log_floor_calls,
                1,
            )[FLOOR]
        finally:
            sh.close()
            peer.close()
        # the warm-up calls are not counted
        s, pe = timed[SH][self.mode.warmup :], timed[PEER][self.mode.warmup :]
        rows = [
            "| Server | p50 / p99 ms | max ms | peak RSS growth (max) |",
            "|---|---|---|---|",
            f"| Steadyhand, first read (`offset` = last 2,000 lines; the full pass) | "
            f"{ms(first)} | — | {growth[SH][0]:.1f} MiB |",
            f"| Steadyhand, later reads (each in a new session) | {ms(p50(s))} / "
            f"{ms(pct(s, 0.99))} | {ms(max(s))} | {max(growth[SH][1:]):.1f} MiB |",
            f"| MCP peer (`tail: 2000`) | {ms(p50(pe))} / {ms(pct(pe, 0.99))} | {ms(max(pe))} | "
            f"{max(growth[PEER]):.1f} MiB |",
            f"| floor (chunked line count, no hash; {len(fl)} calls) | {ms(p50(fl))} / "
            f"{ms(pct(fl, 0.99))} | {ms(max(fl))} | — |",
        ]
        self.report.sections.append(
            f"{title} ({log.size / (1 << 20):,.0f} MiB, {log.lines:,} lines; "
            f"{len(s)} calls each, interleaved, page cache warm; times exclude the readings "
            "of `/proc` around each call)\n\n" + "\n".join(rows)
        )
        g = max(growth[SH])
        worst = max(first, p50(s))
        ok = worst <= 2000 and g <= 64
        self.report.target(
            f"Ranged read, {self.mode.log_mib} MiB log",
            "≤ 2 s and peak RSS growth ≤ 64 MB",
            f"first {ms(first)} ms, later {ms(p50(s))} ms, +{g:.1f} MiB",
            ok,
            f"{ms(worst)} ms, +{g:.1f} MiB",
        )
        r = p50(pe) / p50(s)
        r99 = pct(pe, 0.99) / pct(s, 0.99)
        cold = p50(pe) / first
        self.report.target(
            "Ranged read: vs peer",
            "≥ 2× faster at p50 and p99",
            f"{ratio(r)} / {ratio(r99)} (first read of the file: {ratio(cold)})",
            min(r, r99) >= 2,
            f"{ratio(min(r, r99))}: the peer reads backwards from the end",
        )

    # -- memory with many tracked files ----------------------------------------------------

    def tracked(self) -> None:
        n = self.mode.tracked_files
        root, paths = workload.ensure_tree(str(self.cache), n)
        sh = self.start(servers.steadyhand(maxTrackedFiles=n), Path(root))
        bare = self.start(servers.bare_pygls("pipe"), Path(root))
        try:
            base = rss_kib(sh.pid)["VmRSS"] / 1024
            bare_rss = rss_kib(bare.pid)["VmRSS"] / 1024
            t0 = time.perf_counter()
            results = sh.client.pipelined(
                "workspace/executeCommand",
                [{"command": "steadyhand.read", "arguments": [{"file_path": p}]} for p in paths],
            )
            elapsed = time.perf_counter() - t0
            bad = sum(1 for r in results if not (isinstance(r, dict) and r.get("ok")))
            busy = rss_kib(sh.pid)
            # What the server holds while the agent thinks: it hands free heap back after
            # a second without messages (steadyhand/runtime/allocator.py).
            time.sleep(SETTLE_SECONDS)
            after = rss_kib(sh.pid)
        finally:
            sh.close()
            bare.close()
        total = after["VmRSS"] / 1024
        peak = max(busy["VmRSS"], busy["VmHWM"], after["VmHWM"])
        per_file = (total - base) * 1024 * 1024 / n
        rows = [
            "| | RSS |",
            "|---|---|",
            f"| bare pygls server, idle | {bare_rss:.1f} MiB |",
            f"| Steadyhand, idle | {base:.1f} MiB |",
            f"| Steadyhand right after reading {n:,} files (each tracked) | "
            f"{busy['VmRSS'] / 1024:.1f} MiB (peak {peak / 1024:.1f}) |",
            f"| the same, {SETTLE_SECONDS:g} s later (idle) | **{total:.1f} MiB** |",
            f"| growth per tracked file | {per_file:.0f} bytes |",
        ]
        note = (
            f"{n:,} files of ~75 bytes read through the protocol with 64 requests in "
            f"flight ({elapsed:.1f} s, {n / elapsed:,.0f} reads/s"
            + (f", {bad} failed" if bad else "")
            + f"); `maxTrackedFiles` = {n:,} so none is evicted."
        )
        self.report.sections.append(
            f"## Memory with {n:,} tracked files\n\n{note}\n\n" + "\n".join(rows)
        )
        projected = total if n >= 100_000 else base + per_file * 100_000 / (1 << 20)
        label = (
            f"{total:.1f} MiB" if n >= 100_000 else f"≈ {projected:.1f} MiB (projected from {n:,})"
        )
        self.report.target(
            "RSS with 100,000 tracked files",
            "≤ 60 MB",
            label,
            projected <= 60,
            f"{projected - 60:.1f} MiB over",
        )

    # -- watcher ---------------------------------------------------------------------------

    def watcher(self) -> None:
        title = "## Watcher start-up"
        if not (servers.ROOT / "server" / "steadyhand" / "watcher.py").exists():
            self.report.sections.append(f"{title}\n\nNot measured yet: no file watcher.")
            self.report.target("Watcher start-up", "reported", "not measured yet", None)
            return
        rows = [
            "| Workspace | folders | first change seen | every folder watched "
            "(folders, per 1,000) | Steadyhand RSS then |",
            "|---|---|---|---|---|",
        ]
        for n in self.mode.watch_trees:
            root, probe = workload.ensure_empty_tree(str(self.cache), n)
            w = self._watch_once(root, probe)
            first = f"{w.first * 1000:,.0f} ms" if w.first is not None else "not seen in 120 s"
            if w.whole is not None:
                per = w.whole * 1000 / max(w.folders, 1) * 1000
                whole = f"{w.whole * 1000:,.0f} ms ({w.folders:,}, {per:,.0f} ms)"
            else:
                whole = f"not in 120 s ({w.state}, {w.folders:,} folders)"
            rows.append(
                f"| {n:,} empty files | {(n + 49) // 50 + (n + 4999) // 5000 + 1:,} | {first} | "
                f"{whole} | {w.rss:.1f} MiB |"
            )
            self.report.target(
                f"Watcher start-up, {n:,} files",
                "reported (no target)",
                f"first change seen {first}, every folder watched {whole}",
                True,
            )
        self.report.sections.append(
            f"{title}\n\nFrom the answer to the first `read` (which starts the watcher in the "
            "background): until a change made to the read file (in the workspace's top "
            "folder) by another process is reported with `steadyhand/fileChanged` (the file "
            "is rewritten every 10 ms, so within about 10 ms), and until `steadyhand.ping` "
            "reports every folder watched (`watcher.state` no longer `starting`; asked every "
            "5 ms). RSS is taken then.\n\n" + "\n".join(rows)
        )

    def _watch_once(self, root: str, probe: str) -> WatchRun:
        srv = self.start(servers.steadyhand(), Path(root))
        srv.client.keep_notifications = True
        first: float | None = None
        status: dict[str, Any] = {"state": "idle", "folders": 0}
        try:
            sh_call(srv, "steadyhand.read", {"file_path": probe})
            t0 = time.perf_counter()
            deadline = t0 + 120
            i = 0
            while first is None and time.perf_counter() < deadline:
                i += 1
                with open(probe, "w") as f:
                    f.write(f"probe {i}\n")
                srv.client.poll_notifications(0.01)
                if any(
                    m.get("method") == "steadyhand/fileChanged" for m in srv.client.notifications
                ):
                    first = time.perf_counter() - t0
            whole: float | None = None
            while time.perf_counter() < deadline:
                status = sh_call(srv, "steadyhand.ping", {})["watcher"]
                if status["state"] != "starting":
                    if status["state"] == "watching":
                        whole = time.perf_counter() - t0
                    break
                time.sleep(0.005)
            rss = rss_kib(srv.pid)["VmRSS"] / 1024
            return WatchRun(
                first, whole, int(status.get("folders") or 0), str(status["state"]), rss
            )
        finally:
            srv.close()

    # -- output ----------------------------------------------------------------------------

    def render(self, elapsed: float) -> str:
        m = self.mode
        head = [
            f"# Steadyhand benchmark ({m.name} mode)",
            "",
            f"{time.strftime('%Y-%m-%d %H:%M')}, {os.cpu_count()} CPUs, "
            f"Python {platform.python_version()}, Node {servers.node_version()}, "
            f"peer {servers.PEER_PACKAGE}@{self.peer_version}; run took {elapsed:.0f} s. "
            "Times are wall-clock per call as the client sees it (send to parsed answer). "
            "How to read this: docs/performance.md.",
            "",
            "## Targets",
            "",
            "| Target | Goal | Measured | Verdict |",
            "|---|---|---|---|",
        ]
        head += [f"| {a} | {b} | {c} | {d} |" for a, b, c, d in self.report.targets]
        return "\n".join(head + [""] + [s + "\n" for s in self.report.sections])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0] if __doc__ else None)
    ap.add_argument("--quick", action="store_true", help="fewer calls and smaller inputs")
    ap.add_argument(
        "--only",
        default="startup,trivial,operations,syntax,mcp,log,tracked,watcher",
        help="comma-separated sections to run",
    )
    ap.add_argument(
        "--emulate",
        choices=["macos"],
        help="run every Steadyhand server on an emulated macOS (tests/emulate): its "
        "portable code paths on this Linux machine, to compare with the Linux ones",
    )
    ap.add_argument("--keep", action="store_true", help="keep the run folder")
    ap.add_argument("--output", default=str(RESULTS / "latest.md"))
    args = ap.parse_args(argv)
    mode = QUICK if args.quick else FULL
    if args.emulate:
        emulate = Path(__file__).resolve().parent.parent / "tests" / "emulate"
        os.environ["STEADYHAND_EMULATE"] = args.emulate
        os.environ["PYTHONPATH"] = os.pathsep.join(
            p for p in (str(emulate), os.environ.get("PYTHONPATH", "")) if p
        )
    # Byte-compile the package first, as an installed package is: with
    # PYTHONDONTWRITEBYTECODE set, every start would otherwise compile each module anew.
    package = Path(__file__).resolve().parent.parent / "server" / "steadyhand"
    compileall.compile_dir(str(package), quiet=1, rx=re.compile(r"demo/workspace"))
    cache = servers.CACHE / "bench"
    run_dir = cache / f"run-{os.getpid()}"
    # The servers keep their undo history inside the run folder, removed with it.
    os.environ["XDG_STATE_HOME"] = str(run_dir / "state")
    # ... and their sockets for ``steadyhand mcp`` (the MCP rows attach through one).
    os.environ["STEADYHAND_RUNTIME_DIR"] = str(run_dir / "run")
    (run_dir / "run").mkdir(parents=True, exist_ok=True, mode=0o700)
    t0 = time.perf_counter()
    bench = Bench(mode, run_dir, cache)
    sections = {
        "startup": bench.startup,
        "trivial": bench.trivial,
        "operations": bench.operations,
        "syntax": bench.syntax,
        "mcp": bench.mcp,
        "log": bench.big_log,
        "tracked": bench.tracked,
        "watcher": bench.watcher,
        "platforms": bench.platforms,
    }
    try:
        for name in args.only.split(","):
            print(f"[bench] {name} ...", file=sys.stderr, flush=True)
            sections[name.strip()]()
    finally:
        if not args.keep:
            shutil.rmtree(run_dir, ignore_errors=True)
    text = bench.render(time.perf_counter() - t0)
    print(text)
    out = Path(args.output)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text)
    print(f"[bench] written to {out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""The ``tree`` section of the benchmark: ``list``, ``search`` and ``move`` on generated
project trees, side by side with the MCP peer and with ripgrep alone.

Run it alone with ``.venv/bin/python bench/run.py --only tree`` (``--quick`` for a smoke
run). How to read it: docs/performance.md, "Workspace tools".

What is compared with what (the peer has no call that does quite what ``list`` and
``search`` do, so each row names the closest one and says how they differ):

- ``list`` of one folder (``depth: 1``) and ``list_directory`` of it: one folder's
  entries, both.
- ``list`` of the whole tree as a tree (``depth`` deeper than the tree, ``limit`` 5,000,
  the most it answers) and ``directory_tree``: the peer answers every entry as JSON;
  Steadyhand answers as many as fit one answer (its byte cap), says how many there are,
  and leaves out what ``.gitignore`` leaves out. The peer is timed twice: told to leave
  out the same folders and files (``excludePatterns``, so it answers the same entries)
  and as an agent would call it (everything, build output and ``.git`` included). The
  ratio is taken against the faster of the two.
- ``list`` with a pattern (``**/*.ts``, ``limit`` 5,000) and ``search_files`` with the
  same glob (both with and without the excludes, as above): file names matching a glob.
- ``search`` for a literal in file contents: the peer has no content search, so the row
  is against ripgrep run alone by the benchmark with the very flags Steadyhand passes it
  (its ``--json`` output read to the end), which is the floor of any search through rg.
- ``move`` of a file and ``move_file``: one file of a folder of 1,000 renamed, then renamed
  back on the next call, each server in a workspace of its own (so neither watches the
  other's moves). Steadyhand records each move in its history; the peer keeps none.
- On the tree of 100,000 files the same search against ripgrep alone (target: within 2×).
- On the tree of 500,000 files, Steadyhand alone: a listing by name (the first 200) and
  one newest first (the 20 most recent), against ``rg --files`` (every file name,
  ripgrep's parallel walk with the same ignore rules) and ``rg --files --sortr modified``
  as the floor of a walk.

Every Steadyhand server runs with ``denyGlobs`` set (a check per entry, as a user who
keeps secrets out would have it) and ``fsync`` off; both servers have the tree as their
workspace. Each row records the load average before and after it, and the CPU time each
server process spent per call (all its threads), which moves far less with the load of a
shared machine than the wall clock does.
"""

from __future__ import annotations

import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

import servers
import trees
from servers import Running, mcp_call, sh_call

if TYPE_CHECKING:
    from run import Bench

SH = "steadyhand"
PEER = "mcp-peer"
PEER_ALL = "mcp-peer (everything)"
RG = "rg alone"
#: A listing by name of the largest tree answers within this (ms, p50): it stops at its
#: limit and counts the rest for 50 ms, whatever the tree's size.
BY_NAME_MS = 100
#: The deny globs every Steadyhand server here runs with.
DENY = ["**/.env", "*.pem", "**/secrets/**"]
#: What the tree's .gitignore leaves out, as the peer's excludePatterns (and ``.git``).
PEER_EXCLUDES = [
    "build",
    "dist",
    "node_modules",
    "__pycache__",
    "*.pyc",
    "*.log",
    ".cache",
    "coverage",
    ".git",
]


@dataclass(frozen=True)
class TreeMode:
    small_tree: int
    big_tree: int | None  # search against rg alone
    huge_tree: int | None  # list on the largest tree
    folder_calls: int  # calls per row of one folder
    tree_calls: int  # calls per row of a whole tree (the peer takes a second or more)
    search_calls: int
    big_calls: int
    huge_calls: int
    warmup: int


FULL = TreeMode(10_000, 100_000, 500_000, 500, 30, 200, 30, 10, 3)
QUICK = TreeMode(10_000, None, None, 60, 5, 30, 5, 3, 2)


@dataclass
class Row:
    name: str
    times: dict[str, list[float]]
    cpu: dict[str, float] = field(default_factory=dict)  # ms per call
    size: dict[str, int] = field(default_factory=dict)  # bytes of one answer
    load: tuple[float, float] = (0.0, 0.0)
    note: str = ""


def _p50(v: list[float]) -> float:
    return statistics.median(v) if v else float("nan")


def _p99(v: list[float]) -> float:
    s = sorted(v)
    return s[max(0, min(len(s) - 1, -(-99 * len(s) // 100) - 1))] if s else float("nan")


def _ms(x: float) -> str:
    if x != x:  # nan
        return "—"
    if x >= 100:
        return f"{x:,.0f}"
    if x >= 10:
        return f"{x:.1f}"
    return f"{x:.2f}"


def _size(n: int) -> str:
    if n >= 1 << 20:
        return f"{n / (1 << 20):.1f} MB"
    if n >= 1 << 10:
        return f"{n / (1 << 10):.0f} KB"
    return f"{n} B"


def _cpu_ns(pid: int) -> int:
    total = 0
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return 0
    for task in tasks:
        try:
            with open(f"/proc/{pid}/task/{task}/schedstat") as f:
                total += int(f.read().split()[0])
        except (OSError, ValueError, IndexError):
            continue
    return total


def _rounds(
    ops: dict[str, Callable[[int], object]],
    pids: dict[str, int | None],
    n: int,
    warmup: int,
) -> tuple[dict[str, list[float]], dict[str, float]]:
    """Every op once per round, in a new order each round (none twice in a row across
    rounds), as :func:`run.interleave` does; times in ms, and each server's CPU per
    call in ms (read outside the timed call)."""
    names = list(ops)
    times: dict[str, list[float]] = {k: [] for k in names}
    cpu: dict[str, int] = {k: 0 for k in names}
    shuffle = random.Random(f"tree:{names}:{n}")
    last: str | None = None
    for i in range(warmup + n):
        order = shuffle.sample(names, len(names))
        if len(order) > 1 and order[0] == last:
            order[0], order[-1] = order[-1], order[0]
        last = order[-1]
        for k in order:
            pid = pids.get(k)
            before = _cpu_ns(pid) if pid and i >= warmup else 0
            t0 = time.perf_counter_ns()
            ops[k](i)
            dt = (time.perf_counter_ns() - t0) / 1e6
            if i >= warmup:
                times[k].append(dt)
                if pid:
                    cpu[k] += _cpu_ns(pid) - before
    return times, {k: cpu[k] / 1e6 / n for k in names if pids.get(k)}


def _rg_argv(rg: str, pattern: str, *, files_mode: bool) -> list[str]:
    """The command line Steadyhand's ripgrep engine runs for a literal search of a folder
    in a repository (steadyhand.tree.search._rg_args)."""
    args = [rg, "--json", "--no-config", "--hidden", "--no-require-git", "--no-messages"]
    args += ["--glob", "!.git", "--max-filesize", str(64 << 20)]
    args += ["--case-sensitive", "--fixed-strings"]
    if files_mode:
        args += ["--max-count", "1"]
    return [*args, "--regexp", pattern, "--", "."]


def _run_rg(argv: list[str], cwd: str) -> int:
    """ripgrep alone: started, its output read to the end; the bytes it printed."""
    proc = subprocess.run(argv, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    return len(proc.stdout)


def _answer_size(res: Any) -> int:
    return len(orjson.dumps(res))


class TreeSection:
    def __init__(self, bench: Bench) -> None:
        self.bench = bench
        self.mode = QUICK if bench.mode.name == "quick" else FULL
        self.rows: list[tuple[str, list[Row]]] = []
        self.facts: list[str] = []
        self.rg = str(Path(sys.executable).parent / "rg")

    def start_sh(self, root: str, name: str = SH) -> Running:
        spec = servers.steadyhand(name, fsync=False, denyGlobs=DENY)
        return self.bench.start(spec, Path(root))

    def row(
        self,
        name: str,
        ops: dict[str, Callable[[int], object]],
        pids: dict[str, int | None],
        calls: int,
        sizes: dict[str, Callable[[], int]] | None = None,
        note: str = "",
    ) -> Row:
        load0 = os.getloadavg()[0]
        times, cpu = _rounds(ops, pids, calls, self.mode.warmup)
        load1 = os.getloadavg()[0]
        size = {k: f() for k, f in (sizes or {}).items()}
        print(
            f"[bench] tree: {name}: "
            + ", ".join(f"{k} {_p50(v):.2f} ms" for k, v in times.items()),
            file=sys.stderr,
            flush=True,
        )
        return Row(name, times, cpu, size, (load0, load1), note)

    # -- the rows ------------------------------------------------------------------------

    def small(self) -> None:
        m = self.mode
        tree = trees.ensure(str(self.bench.cache), m.small_tree)
        root = tree.root
        self.facts.append(
            f"The tree of {m.small_tree:,} files: {tree.files:,} files and {tree.folders:,} "
            f"folders listed ({tree.size / (1 << 20):.0f} MiB), {tree.ignored:,} more files "
            f"left out by its .gitignore; the literal is in {tree.needles} listed files."
        )
        sh = self.start_sh(root)
        peer = self.bench.start(servers.peer(root), Path(root))
        rows: list[Row] = []
        one = tree.one_folder
        pids: dict[str, int | None] = {SH: sh.pid, PEER: peer.pid, PEER_ALL: peer.pid, RG: None}
        try:
            last: dict[str, Any] = {}

            def keep(k: str, res: Any) -> Any:
                last[k] = res
                return res

            def sh_op(
                params: dict[str, Any], cmd: str = "steadyhand.list"
            ) -> Callable[[int], object]:
                return lambda i: keep(SH, sh_call(sh, cmd, params))

            def peer_op(
                tool: str, args: dict[str, Any], key: str = PEER
            ) -> Callable[[int], object]:
                return lambda i: keep(key, mcp_call(peer, tool, args))

            def sizes(*keys: str) -> dict[str, Callable[[], int]]:
                return {k: (lambda k=k: _answer_size(last.get(k))) for k in keys}

            full = os.path.join(root, one)
            rows.append(
                self.row(
                    f"`list` of one folder ({one}, depth 1) vs `list_directory`",
                    {
                        SH: sh_op({"path": one, "depth": 1}),
                        PEER: peer_op("list_directory", {"path": full}),
                    },
                    pids,
                    m.folder_calls,
                    sizes(SH, PEER),
                )
            )
            rows.append(
                self.row(
                    "`list` of the top folder (depth 1) vs `list_directory`",
                    {SH: sh_op({"depth": 1}), PEER: peer_op("list_directory", {"path": root})},
                    pids,
                    m.folder_calls,
                    sizes(SH, PEER),
                )
            )
            rows.append(
                self.row(
                    "`list` of the whole tree (depth 10, limit 5,000) vs `directory_tree`",
                    {
                        SH: sh_op({"depth": 10, "limit": 5000}),
                        PEER: peer_op(
                            "directory_tree", {"path": root, "excludePatterns": PEER_EXCLUDES}
                        ),
                        PEER_ALL: peer_op("directory_tree", {"path": root}, PEER_ALL),
                    },
                    pids,
                    m.tree_calls,
                    sizes(SH, PEER, PEER_ALL),
                )
            )
            rows.append(
                self.row(
                    "`list` with a pattern (`**/*.ts`, limit 5,000) vs `search_files`",
                    {
                        SH: sh_op({"pattern": "**/*.ts", "limit": 5000}),
                        PEER: peer_op(
                            "search_files",
                            {"path": root, "pattern": "**/*.ts", "excludePatterns": PEER_EXCLUDES},
                        ),
                        PEER_ALL: peer_op(
                            "search_files", {"path": root, "pattern": "**/*.ts"}, PEER_ALL
                        ),
                    },
                    pids,
                    m.tree_calls,
                    sizes(SH, PEER, PEER_ALL),
                )
            )
            rows.append(
                self.row(
                    "`list` by name, the default (the first 200, the rest counted)",
                    {SH: sh_op({})},
                    pids,
                    m.search_calls,
                    sizes(SH),
                    note="no peer call answers a bounded listing; shown for its time alone",
                )
            )
            for mode, files_mode in (("files", True), ("content", False)):
                argv = _rg_argv(self.rg, trees.NEEDLE, files_mode=files_mode)
                params = {"pattern": trees.NEEDLE, "literal": True, "output_mode": mode}
                rows.append(
                    self.row(
                        f"`search` for a literal (output_mode {mode}) vs ripgrep alone",
                        {
                            SH: sh_op(params, "steadyhand.search"),
                            RG: lambda i, argv=argv: _run_rg(argv, root),
                        },
                        pids,
                        m.search_calls,
                        {
                            SH: lambda: _answer_size(last.get(SH)),
                            RG: lambda argv=argv: _run_rg(argv, root),
                        },
                        note="the peer has no content search",
                    )
                )
        finally:
            sh.close()
            peer.close()
        self.rows.append((f"A tree of {m.small_tree:,} files", rows))

    def moves(self) -> None:
        """A file moved and moved back, call after call, by each server in a workspace of
        its own: 1,000 files of a few lines in one folder."""
        m = self.mode
        top = Path(tempfile.mkdtemp(prefix="moves-", dir=str(self.bench.cache)))
        roots = {SH: top / "sh", PEER: top / "peer"}
        for root in roots.values():
            (root / "src").mkdir(parents=True)
            for n in range(1000):
                (root / "src" / f"mod_{n:04d}.py").write_text(f"VALUE = {n}\n" * 20)
        sh = self.start_sh(str(roots[SH]))
        peer = self.bench.start(servers.peer(str(roots[PEER])), roots[PEER])
        names = ("src/mod_0500.py", "src/moved_0500.py")

        def ends(i: int) -> tuple[str, str]:
            return (names[0], names[1]) if i % 2 == 0 else (names[1], names[0])

        def sh_move(i: int) -> object:
            a, b = ends(i)
            return sh_call(sh, "steadyhand.move", {"source_path": a, "destination_path": b})

        def peer_move(i: int) -> object:
            a, b = ends(i)
            args = {"source": str(roots[PEER] / a), "destination": str(roots[PEER] / b)}
            return mcp_call(peer, "move_file", args)

        try:
            row = self.row(
                "`move` of a file (and back) vs `move_file`",
                {SH: sh_move, PEER: peer_move},
                {SH: sh.pid, PEER: peer.pid},
                m.folder_calls,
                note="Steadyhand's moves are kept in history",
            )
        finally:
            sh.close()
            peer.close()
            shutil.rmtree(top, ignore_errors=True)
        self.rows.append(("A folder of 1,000 files", [row]))

    def big(self) -> None:
        m = self.mode
        if m.big_tree is None:
            return
        tree = trees.ensure(str(self.bench.cache), m.big_tree)
        root = tree.root
        self.facts.append(
            f"The tree of {m.big_tree:,} files: {tree.files:,} files and {tree.folders:,} "
            f"folders listed ({tree.size / (1 << 20):,.0f} MiB), {tree.ignored:,} more left "
            f"out; the literal is in {tree.needles} listed files."
        )
        sh = self.start_sh(root)
        rows: list[Row] = []
        try:
            argv = _rg_argv(self.rg, trees.NEEDLE, files_mode=True)
            params = {"pattern": trees.NEEDLE, "literal": True}
            _run_rg(argv, root)  # the page cache holds the tree
            rows.append(
                self.row(
                    "`search` for a literal (files) vs ripgrep alone",
                    {
                        SH: lambda i: sh_call(sh, "steadyhand.search", params),
                        RG: lambda i: _run_rg(argv, root),
                    },
                    {SH: sh.pid, RG: None},
                    m.big_calls,
                )
            )
        finally:
            sh.close()
        self.rows.append((f"A tree of {m.big_tree:,} files", rows))

    def huge(self) -> None:
        m = self.mode
        if m.huge_tree is None:
            return
        tree = trees.ensure(str(self.bench.cache), m.huge_tree, small=True)
        root = tree.root
        self.facts.append(
            f"The tree of {m.huge_tree:,} files: {tree.files:,} files and {tree.folders:,} "
            f"folders listed (files under 2 KB), {tree.ignored:,} more left out."
        )
        sh = self.start_sh(root)
        rows: list[Row] = []
        try:
            files = [self.rg, "--files", "--hidden", "--no-config", "--glob", "!.git"]
            newest = [*files, "--sortr", "modified"]
            subprocess.run(files, cwd=root, stdout=subprocess.DEVNULL)  # page cache
            last: dict[str, Any] = {}
            cuts: list[str] = []  # walks cut short (time, entries), warm-up calls too

            def listed(params: dict[str, Any]) -> None:
                res = last[SH] = sh_call(sh, "steadyhand.list", params)
                if res.get("cut") in ("time", "entries"):  # not "limit": the most asked for
                    cuts.append(res["cut"])

            def listing(params: dict[str, Any]) -> Callable[[int], object]:
                return lambda i: listed(params)

            rows.append(
                self.row(
                    "`list` by name (the first 200, the rest counted 50 ms) vs `rg --files`",
                    {SH: listing({}), RG: lambda i: _run_rg(files, root)},
                    {SH: sh.pid, RG: None},
                    m.huge_calls,
                    {SH: lambda: _answer_size(last.get(SH))},
                )
            )
            if cuts:
                rows[-1].note = f"{len(cuts)} walks cut ({', '.join(sorted(set(cuts)))})"
            cuts.clear()
            rows.append(
                self.row(
                    "`list` newest first (limit 20) vs `rg --files --sortr modified`",
                    {
                        SH: listing({"sort": "modified", "limit": 20}),
                        RG: lambda i: _run_rg(newest, root),
                    },
                    {SH: sh.pid, RG: None},
                    m.huge_calls,
                    {SH: lambda: _answer_size(last.get(SH))},
                )
            )
            if cuts:
                rows[-1].note = f"{len(cuts)} walks cut ({', '.join(sorted(set(cuts)))})"
        finally:
            sh.close()
        self.rows.append((f"A tree of {m.huge_tree:,} files", rows))

    # -- the report ----------------------------------------------------------------------

    def render(self) -> None:
        report = self.bench.report
        lines = [
            "## Workspace tools: list and search on project trees",
            "",
            "Interleaved, the same tree for both servers (each its workspace). Steadyhand "
            f"runs with `denyGlobs` {DENY} and `fsync` off. CPU is each server process's "
            "own per call (all threads; ripgrep alone is a process of its own, not counted). "
            "Load: the 1-minute load average before → after the row (2 cores).",
            "",
        ]
        lines += [f"- {f}" for f in self.facts]
        for title, rows in self.rows:
            lines += [
                "",
                f"### {title}",
                "",
                "| Call | contender | p50 / p99 ms | CPU ms per call | answer | "
                "**÷ Steadyhand** p50 | load |",
                "|---|---|---|---|---|---|---|",
            ]
            for row in rows:
                base = _p50(row.times[SH])
                for k, t in row.times.items():
                    vs = "—" if k == SH else f"{_p50(t) / base:.2f}×"
                    cpu = f"{row.cpu[k]:.2f}" if k in row.cpu else "—"
                    size = _size(row.size[k]) if k in row.size else "—"
                    name = row.name if k == SH else ""
                    load = f"{row.load[0]:.1f} → {row.load[1]:.1f}" if k == SH else ""
                    lines.append(
                        f"| {name} | {k} | {_ms(_p50(t))} / {_ms(_p99(t))} | {cpu} | {size} | "
                        f"{vs} | {load} |"
                    )
                if row.note:
                    lines.append(f"| | _{row.note}_ | | | | | |")
        report.sections.append("\n".join(lines))
        self.targets()

    def targets(self) -> None:
        report = self.bench.report
        for title, rows in self.rows:
            for row in rows:
                sh = _p50(row.times[SH])
                peers = [k for k in (PEER, PEER_ALL) if k in row.times]
                if peers:
                    best = min(_p50(row.times[k]) for k in peers)
                    r = best / sh
                    report.target(
                        f"{row.name.split(' vs ')[0]} ({title.lower()})",
                        "≥ 2× the peer at p50",
                        f"{r:.2f}× ({_ms(sh)} vs {_ms(best)} ms)",
                        r >= 2,
                        f"{r:.2f}×",
                    )
                elif RG in row.times and "100,000" in title:
                    rg = _p50(row.times[RG])
                    r = sh / rg
                    report.target(
                        f"`search` of {title.lower()[2:]}",
                        "within 2× of ripgrep alone",
                        f"{r:.2f}× ({_ms(sh)} vs {_ms(rg)} ms)",
                        r <= 2,
                        f"{r:.2f}×",
                    )
                elif "500,000" in title:
                    rg = _p50(row.times[RG])
                    name = f"{row.name.split(' vs ')[0]} ({title.lower()})"
                    if "newest" in row.name:
                        # every entry's time is needed: the floor is a walk that reads them
                        r = sh / rg
                        report.target(
                            name,
                            "within 2× of `rg --files --sortr modified`, not cut",
                            f"{r:.2f}× ({_ms(sh)} vs {_ms(rg)} ms){row.note and ', ' + row.note}",
                            r <= 2 and not row.note,
                            f"{r:.2f}×",
                        )
                    else:
                        report.target(
                            name,
                            f"at most {BY_NAME_MS} ms at p50",
                            f"{_ms(sh)} ms (`rg --files`: {_ms(rg)} ms)",
                            sh <= BY_NAME_MS,
                            f"{_ms(sh)} ms",
                        )


def run(bench: Bench) -> None:
    section = TreeSection(bench)
    section.small()
    section.moves()
    section.big()
    section.huge()
    section.render()

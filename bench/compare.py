"""Two revisions of Steadyhand side by side: the same calls, interleaved, in one run.

Usage::

    .venv/bin/python bench/compare.py REV            # REV (a commit, a tag) against this tree
    .venv/bin/python bench/compare.py REV --calls 400 --fsync both
    .venv/bin/python bench/compare.py REV --syntax warn --starts 0   # as shipped, no cold starts

For a change on a path every call takes (matching, reading, writing, the transport): REV
is checked out into ``.cache/compare/<commit>`` (a detached git worktree, made once) and
its server runs with this tree's interpreter and packages; each operation is timed on
both servers in alternation (A B A B ...), so a slow minute of the machine slows both.
Prints a Markdown table of p50 and p99 per operation and the ratio of this tree to REV
(below 1.00: this tree is faster).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import servers
import workload
from rpc import RpcClient

ROOT = servers.ROOT
TREES = servers.CACHE / "compare"


def checkout(rev: str) -> Path:
    """A worktree of ``rev`` under .cache/compare (made once per commit)."""
    sha = subprocess.run(
        ["git", "rev-parse", "--verify", f"{rev}^{{commit}}"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    tree = TREES / sha[:12]
    if not (tree / "server" / "steadyhand").is_dir():
        TREES.mkdir(parents=True, exist_ok=True)
        subprocess.run(["git", "worktree", "add", "--detach", str(tree), sha], cwd=ROOT, check=True)
    return tree


class Contender:
    """One server: ``server_dir`` is the folder holding its ``steadyhand`` package."""

    def __init__(
        self, name: str, server_dir: Path, workspace: Path, fsync: bool, syntax: str = "off"
    ) -> None:
        self.name = name
        env = dict(os.environ, PYTHONPATH=str(server_dir))
        argv = [sys.executable, "-m", "steadyhand", "serve", "--log-level", "WARNING"]
        self.client = RpcClient(argv, "lsp", cwd=str(workspace), env=env)
        uri = workspace.as_uri()
        self.client.request(
            "initialize",
            {
                "processId": os.getpid(),
                "rootUri": uri,
                "capabilities": {},
                "workspaceFolders": [{"uri": uri, "name": "compare"}],
                "initializationOptions": {"fsync": fsync, "syntaxCheck": syntax},
            },
        )
        self.client.notify("initialized", {})
        self.workspace = workspace

    def call(self, command: str, params: dict[str, Any]) -> dict[str, Any]:
        res = self.client.request(
            "workspace/executeCommand", {"command": command, "arguments": [params]}
        )
        if not isinstance(res, dict) or not res.get("ok"):
            raise RuntimeError(f"{self.name}: {command} failed: {str(res)[:300]}")
        return res

    def close(self) -> None:
        self.client.close(lsp_shutdown=True)


def operations(c: Contender) -> dict[str, Callable[[int], object]]:
    """The measured calls on ``c``'s own files, each repeatable any number of times."""
    ws = c.workspace
    files = {n: ws / f"f{n}.py" for n in (1_000, 10_000)}
    multi = ws / "m1000.py"
    writes = {n: ws / f"w{n}.py" for n in (1_000, 10_000)}
    for n, f in files.items():
        f.write_text(workload.source_text(n))
    multi.write_text(workload.source_text(1000))
    for n, f in writes.items():
        f.write_text(workload.source_text(n))
        for start in range(1, n + 1, 2000):  # a write replaces all of it: all of it was read
            c.call("steadyhand.read", {"file_path": str(f), "offset": start, "limit": 2000})
    for f in (files[1000], multi):
        c.call("steadyhand.read", {"file_path": str(f)})
    # The 10k-line file is over what one read answers: a window around the edited line.
    k, _ = workload.edit_pair(10_000)
    c.call("steadyhand.read", {"file_path": str(files[10_000]), "offset": k - 3, "limit": 7})
    versions = {n: [workload.source_text(n, variant=1), workload.source_text(n)] for n in writes}
    made = ws / "created"
    made.mkdir()
    small = workload.source_text(100)
    reads = [{"file_path": str(files[1000])}, {"file_path": str(files[1000]), "limit": 5000}]

    def edit(n: int) -> Callable[[int], object]:
        _, pair = workload.edit_pair(n)

        def run(i: int) -> object:
            old, new = (pair.a, pair.b) if i % 2 == 0 else (pair.b, pair.a)
            return c.call(
                "steadyhand.edit",
                {"file_path": str(files[n]), "old_string": old, "new_string": new},
            )

        return run

    pairs = workload.multi_edit_pairs(1000)

    def multi_edit(i: int) -> object:
        edits = [
            {"old_string": p.a, "new_string": p.b}
            if i % 2 == 0
            else {"old_string": p.b, "new_string": p.a}
            for _, p in pairs
        ]
        return c.call("steadyhand.multiEdit", {"file_path": str(multi), "edits": edits})

    return {
        "read 1k lines": lambda i: c.call("steadyhand.read", reads[i % 2]),
        "edit 1 line in 1k": edit(1_000),
        "edit 1 line in 10k": edit(10_000),
        "multiEdit 3 places in 1k": multi_edit,
        "write 1k lines": lambda i: c.call(
            "steadyhand.write", {"file_path": str(writes[1000]), "content": versions[1000][i % 2]}
        ),
        "write 10k lines": lambda i: c.call(
            "steadyhand.write",
            {"file_path": str(writes[10_000]), "content": versions[10_000][i % 2]},
        ),
        "create (100 lines)": lambda i: c.call(
            "steadyhand.write", {"file_path": str(made / f"new{i}.py"), "content": small}
        ),
    }


def cold_starts(dirs: dict[str, Path], tmp: Path, starts: int) -> dict[str, list[float]]:
    """Per contender: ms from starting the process to the first answered tool call (a
    read of a 1k-line file), alternating which starts first."""
    out: dict[str, list[float]] = {name: [] for name in dirs}
    for i in range(starts):
        order = list(dirs) if i % 2 == 0 else list(dirs)[::-1]
        for name in order:
            ws = tmp / f"cold-{name}-{i}"
            ws.mkdir()
            f = ws / "f.py"
            f.write_text(workload.source_text(1000))
            t0 = time.perf_counter()
            c = Contender(name, dirs[name], ws, True)
            c.call("steadyhand.read", {"file_path": str(f)})
            out[name].append((time.perf_counter() - t0) * 1000)
            c.close()
    return out


def pct(values: list[float], q: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, round(q * (len(s) - 1)))]


def measure(
    ops: dict[str, dict[str, Callable[[int], object]]], calls: int, warmup: int
) -> dict[str, dict[str, list[float]]]:
    """Per operation, per contender: the call times in ms, taken in alternation."""
    names = list(ops)
    times: dict[str, dict[str, list[float]]] = {}
    for op in ops[names[0]]:
        times[op] = {n: [] for n in names}
        for i in range(warmup + calls):
            order = names if i % 2 == 0 else names[::-1]
            for n in order:
                t0 = time.perf_counter()
                ops[n][op](i)
                dt = (time.perf_counter() - t0) * 1000
                if i >= warmup:
                    times[op][n].append(dt)
    return times


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0] if __doc__ else None)
    ap.add_argument("rev", help="the revision to compare this tree with (a commit, a tag)")
    ap.add_argument("--calls", type=int, default=300)
    ap.add_argument("--warmup", type=int, default=20)
    ap.add_argument("--fsync", choices=("off", "on", "both"), default="both")
    ap.add_argument(
        "--syntax",
        choices=("off", "warn"),
        default="off",
        help="the syntax check (off: like for like with the peer; warn: as shipped)",
    )
    ap.add_argument("--starts", type=int, default=20, help="cold starts of each (0: none)")
    args = ap.parse_args(argv)
    base = checkout(args.rev)
    modes = {"off": [False], "on": [True], "both": [False, True]}[args.fsync]
    lines = [
        f"Side by side: this tree vs {args.rev} ({args.calls} calls each, interleaved; "
        f"syntax check {args.syntax})",
        "",
        "| operation | fsync | this p50 | base p50 | ratio | this p99 | base p99 | ratio |",
        "|---|---|---|---|---|---|---|---|",
    ]
    with tempfile.TemporaryDirectory(prefix="steadyhand-compare-") as tmp:
        os.environ["XDG_STATE_HOME"] = str(Path(tmp) / "state")
        for fsync in modes:
            contenders = {}
            for name, server_dir in (("this", ROOT / "server"), ("base", base / "server")):
                ws = Path(tmp) / f"{name}-{fsync}"
                ws.mkdir()
                contenders[name] = Contender(name, server_dir, ws, fsync, args.syntax)
            try:
                ops = {name: operations(c) for name, c in contenders.items()}
                times = measure(ops, args.calls, args.warmup)
            finally:
                for c in contenders.values():
                    c.close()
            for op, per in times.items():
                a50, b50 = pct(per["this"], 0.5), pct(per["base"], 0.5)
                a99, b99 = pct(per["this"], 0.99), pct(per["base"], 0.99)
                lines.append(
                    f"| {op} | {'on' if fsync else 'off'} | {a50:.3f} | {b50:.3f} | "
                    f"{a50 / b50:.2f} | {a99:.3f} | {b99:.3f} | {a99 / b99:.2f} |"
                )
        if args.starts:
            dirs = {"this": ROOT / "server", "base": base / "server"}
            cold = cold_starts(dirs, Path(tmp), args.starts)
            a50, b50 = pct(cold["this"], 0.5), pct(cold["base"], 0.5)
            a99, b99 = max(cold["this"]), max(cold["base"])
            lines.append(
                f"| start to first answered read (max for p99) | on | {a50:.1f} | {b50:.1f} | "
                f"{a50 / b50:.2f} | {a99:.1f} | {b99:.1f} | {a99 / b99:.2f} |"
            )
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

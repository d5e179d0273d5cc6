"""How long ``list``, ``search`` and ``info`` take on a tree of 10,000 files, through the
real server over stdio.

Usage::

    .venv/bin/python bench/tree_tools.py            # 10,000 files, 30 calls each
    .venv/bin/python bench/tree_tools.py --files 2000 --calls 10

The tree (generated once under ``.cache/bench-tree``) is a git repository of 100 folders
of source files with a ``.gitignore`` that leaves out a build folder of as many files
again. Each call is timed from the request written to the answer read (median, p90).
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from servers import CACHE, Running, sh_call, start, steadyhand

WORDS = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "theta", "kappa"]


def build(root: Path, files: int) -> None:
    marker = root / f".built-{files}"
    if marker.exists():
        return
    if root.exists():
        shutil.rmtree(root)
    folders = max(1, files // 100)
    for d in range(folders):
        folder = root / "src" / f"pkg{d:03d}"
        folder.mkdir(parents=True)
        build_dir = root / "build" / f"pkg{d:03d}"
        build_dir.mkdir(parents=True)
        for f in range(files // folders):
            body = "\n".join(
                f"def {WORDS[(d + f + i) % len(WORDS)]}_{i}(x):\n    return x + {i}"
                for i in range(20)
            )
            if f == 7 and d % 10 == 0:
                body += "\nNEEDLE = 'found me'\n"
            (folder / f"mod{f:03d}.py").write_text(body + "\n")
            (build_dir / f"mod{f:03d}.py").write_text(body + "\n")
    (root / ".gitignore").write_text("build/\n*.log\n")
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    marker.write_text("")


def timed(srv: Running, command: str, params: dict[str, Any], calls: int) -> tuple[float, float]:
    samples = []
    for _ in range(calls):
        t0 = time.perf_counter()
        sh_call(srv, command, params)
        samples.append((time.perf_counter() - t0) * 1000)
    samples.sort()
    return statistics.median(samples), samples[int(len(samples) * 0.9) - 1]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--files", type=int, default=10_000)
    ap.add_argument("--calls", type=int, default=30)
    args = ap.parse_args()
    root = CACHE / "bench-tree"
    build(root, args.files)
    cases: list[tuple[str, str, dict[str, Any]]] = [
        ("list, by name (limit 200)", "steadyhand.list", {}),
        ("list, by name (limit 5000)", "steadyhand.list", {"limit": 5000}),
        ("list, a tree of depth 2", "steadyhand.list", {"depth": 2}),
        ("list, **/*.py (limit 200)", "steadyhand.list", {"pattern": "**/*.py"}),
        ("list, src/pkg042/*.py", "steadyhand.list", {"pattern": "src/pkg042/*.py"}),
        ("list, newest first (limit 20)", "steadyhand.list", {"sort": "modified", "limit": 20}),
        ("list, sizes and line counts", "steadyhand.list", {"sizes": True, "line_counts": True}),
        ("info, a file", "steadyhand.info", {"file_path": "src/pkg001/mod001.py"}),
    ]
    for engine in ("ripgrep", "python"):
        cases += [
            (
                f"search ({engine}), literal, files",
                "steadyhand.search",
                {"pattern": "found me", "literal": True},
            ),
            (
                f"search ({engine}), regex, content",
                "steadyhand.search",
                {"pattern": r"NEEDLE\s*=", "output_mode": "content"},
            ),
        ]
    print(f"{args.files:,} files (and {args.files:,} ignored), {args.calls} calls each\n")
    print("| call | median ms | p90 ms |\n| --- | ---: | ---: |")
    engines = ("ripgrep", "python")
    servers = {engine: start(steadyhand(searchEngine=engine), str(root)) for engine in engines}
    try:
        for name, command, params in cases:
            engine = "python" if "(python)" in name else "ripgrep"
            srv = servers[engine]
            sh_call(srv, command, params)  # warm
            median, p90 = timed(srv, command, params, args.calls)
            print(f"| {name} | {median:.1f} | {p90:.1f} |")
    finally:
        for srv in servers.values():
            srv.close()


if __name__ == "__main__":
    main()

"""Run the torture suite at full size and print a table of trials, faults and losses.

    python tests/torture/report.py            # full size (STEADYHAND_TORTURE=full)
    python tests/torture/report.py --ci       # the CI size, for a quick look
    python tests/torture/report.py -- -k races   # extra arguments go to pytest

Exit code: pytest's (0 only if every promise held).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent

#: Which figure fills each column (the first one a test recorded).
TRIALS = ("trials", "cases", "messages", "calls", "faults")
FAULTS = ("mid_write_kills", "faults", "stale", "refusals", "wrong_codes", "answered")
LOSSES = ("losses", "lost_updates", "outside_touched", "server_deaths")
#: Figures that are levels, not counts: kept, never summed.
LEVELS = ("_mib", "_ms", "_s", "sessions")


def _merge(rows: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    merged: dict[str, dict[str, Any]] = {}
    for row in rows:
        into = merged.setdefault(row["area"], {})
        for k, v in row.items():
            if k in ("area", "full"):
                continue
            old = into.get(k)
            if isinstance(v, str):
                into[k] = v if old is None else f"{old} {v}"
            elif isinstance(old, int | float) and not k.endswith(LEVELS):
                into[k] = old + v
            else:
                into[k] = v
    return merged


def _table(rows: list[dict[str, Any]]) -> str:
    lines = [("area", "trials", "faults", "losses", "details")]
    for area, row in _merge(rows).items():
        t = next((k for k in TRIALS if k in row), None)
        f = next((k for k in FAULTS if k in row and k != t), None)
        lo = next((k for k in LOSSES if k in row), None)
        used = {t, f, lo, "call", "kind"}
        detail = ", ".join(f"{k}={v}" for k, v in row.items() if k not in used)
        lines.append(
            (
                area,
                f"{row[t]} {t}" if t else "",
                f"{row[f]} {f}" if f else "",
                str(row[lo]) if lo else "0",
                detail,
            )
        )
    widths = [max(len(line[i]) for line in lines) for i in range(4)]
    out = []
    for n, line in enumerate(lines):
        out.append("  ".join(c.ljust(widths[i]) for i, c in enumerate(line[:4])) + "  " + line[4])
        if n == 0:
            out.append("  ".join("-" * w for w in widths) + "  -------")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--ci", action="store_true", help="run the CI size instead of the full one")
    parser.add_argument("pytest_args", nargs="*", help="extra arguments for pytest")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        figures = Path(tmp) / "figures.jsonl"
        env = dict(os.environ, STEADYHAND_TORTURE_REPORT=str(figures))
        env["STEADYHAND_TORTURE"] = "ci" if args.ci else "full"
        cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(HERE)]
        if not args.ci:
            cmd += ["-o", "timeout=3600"]
        proc = subprocess.run([*cmd, *args.pytest_args], cwd=ROOT, env=env, check=False)
        rows = []
        if figures.exists():
            rows = [json.loads(line) for line in figures.read_text().splitlines() if line]
    print()
    print(f"Steadyhand torture report ({'CI' if args.ci else 'full'} size)")
    print(_table(rows) if rows else "(no figures were recorded)")
    print("\nall promises held" if proc.returncode == 0 else "\nSOME PROMISES FAILED (see above)")
    return proc.returncode


if __name__ == "__main__":
    sys.exit(main())

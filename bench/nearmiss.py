"""Near-miss recovery: run the corpus through the real server and count outcomes.

    .venv/bin/python bench/nearmiss.py [--json bench/results/nearmiss.json]

Starts ``steadyhand serve`` over stdio, and for each case in tests/nearmiss/cases writes
the file, reads it, and makes the model-style call. Reports the share of recoverable
near-misses recovered exactly, the share of all calls wrongly applied (the file changed
in any way but the expected one; must be 0), and how the refusals went. Exits 1 if
anything was wrongly applied.

Then it times refused edits on files of one long line (minified code): the answer of a
``no_match`` whose old_string is the whole line with one slip, or a stretch of it with
one slip, and the answer of a ping sent while that edit is being searched, beside an
idle ping, all in one run.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.lsp.client import LanguageClient

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.nearmiss.corpus import (  # noqa: E402
    Verdict,
    judge,
    load_cases,
    minified,
    run_case,
)


async def run(json_out: Path | None) -> int:
    cases = load_cases()
    client = LanguageClient("steadyhand-nearmiss-bench", "1")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        await client.start_io(sys.executable, "-m", "steadyhand", "serve", "--log-level", "ERROR")
        await client.initialize_async(
            types.InitializeParams(
                capabilities=types.ClientCapabilities(),
                root_uri=root.as_uri(),
                workspace_folders=[types.WorkspaceFolder(uri=root.as_uri(), name="bench")],
            )
        )
        client.initialized(types.InitializedParams())
        verdicts: dict[str, Verdict] = {}
        try:
            for case in cases:
                verdicts[case.id] = judge(case, await run_case(client, root, case))
            timings = await long_lines(client, root)
        finally:
            await client.shutdown_async(None)
            client.exit(None)
            await client.stop()

    recoverable = [c for c in cases if c.recoverable]
    refusable = [c for c in cases if not c.recoverable]
    counts = Counter(verdicts.values())
    recovered = sum(verdicts[c.id] == Verdict.RECOVERED for c in recoverable)
    refused = sum(verdicts[c.id] == Verdict.REFUSED for c in refusable)
    wrong = counts[Verdict.WRONGLY_APPLIED]
    by_class: dict[str, Counter[str]] = defaultdict(Counter)
    for c in cases:
        by_class[c.cls][verdicts[c.id].value] += 1

    print(f"near-miss corpus: {len(cases)} cases ({len(recoverable)} recoverable)")
    share = recovered / len(recoverable)
    print(f"  recovered exactly:     {recovered}/{len(recoverable)} = {share:.1%}")
    print(f"  refused as expected:   {refused}/{len(refusable)} = {refused / len(refusable):.1%}")
    print(f"  wrongly applied:       {wrong}/{len(cases)} = {wrong / len(cases):.1%}  (must be 0)")
    print(f"  missed (refused, file intact): {counts[Verdict.MISSED]}")
    print(f"  other refusal code:    {counts[Verdict.WRONG_CODE]}")
    print("  by class:")
    for cls in sorted(by_class):
        row = ", ".join(f"{k} {v}" for k, v in sorted(by_class[cls].items()))
        print(f"    {cls:<20} {row}")
    for cid, v in verdicts.items():
        if v not in (Verdict.RECOVERED, Verdict.REFUSED):
            print(f"  ! {cid}: {v.value}")
    print("  refused edits on one long line (median of 5; ping sent while the edit runs):")
    print(f"    {'line':>8}  {'old_string':<22} {'no_match answer':>16} {'ping meanwhile':>15}")
    for row in timings["rows"]:
        print(
            f"    {row['size'] // 1000:>5} KB  {row['kind']:<22} {row['answer_ms']:>13.1f} ms"
            f" {row['ping_ms']:>12.1f} ms"
        )
    print(f"    idle ping: {timings['idle_ping_ms']:.2f} ms")
    if json_out is not None:
        json_out.parent.mkdir(parents=True, exist_ok=True)
        json_out.write_text(
            json.dumps(
                {
                    "cases": len(cases),
                    "recoverable": len(recoverable),
                    "recovered_share": recovered / len(recoverable),
                    "refused_share": refused / len(refusable),
                    "wrongly_applied_share": wrong / len(cases),
                    "verdicts": {k: v.value for k, v in verdicts.items()},
                    "long_lines": timings,
                },
                indent=2,
            )
            + "\n"
        )
    return 1 if wrong else 0


async def _timed(work: Any) -> float:
    t0 = time.perf_counter()
    await work
    return (time.perf_counter() - t0) * 1000


async def long_lines(client: LanguageClient, root: Path) -> dict[str, Any]:
    """Time refused edits on files of one long line, and a ping sent meanwhile."""

    async def call(command: str, params: dict[str, Any]) -> Any:
        return await client.workspace_execute_command_async(
            types.ExecuteCommandParams(command=command, arguments=[params])
        )

    idle = [await _timed(call("steadyhand.ping", {})) for _ in range(20)]
    rows: list[dict[str, Any]] = []
    for size in (10_000, 40_000, 200_000):
        line = minified(size, size)
        path = root / f"long-{size}.min.js"
        path.write_text(line + "\n")
        await call("steadyhand.read", {"file_path": str(path)})
        mid = size // 2
        slips = {
            "whole line, one slip": line[:mid] + "\u00a7" + line[mid + 1 :],
            "300 chars, one slip": line[mid - 150 : mid] + "\u00a7" + line[mid + 1 : mid + 150],
        }
        for kind, old in slips.items():
            answers: list[float] = []
            pings: list[float] = []
            for _ in range(5):
                edit = asyncio.ensure_future(
                    _timed(
                        call(
                            "steadyhand.edit",
                            {"file_path": str(path), "old_string": old, "new_string": "x"},
                        )
                    )
                )
                await asyncio.sleep(0)
                pings.append(await _timed(call("steadyhand.ping", {})))
                answers.append(await edit)
            rows.append(
                {
                    "size": size,
                    "kind": kind,
                    "answer_ms": statistics.median(answers),
                    "ping_ms": statistics.median(pings),
                }
            )
    return {"idle_ping_ms": statistics.median(idle), "rows": rows}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--json", type=Path, default=None, help="also write the numbers here")
    args = ap.parse_args()
    sys.exit(asyncio.run(run(args.json)))


if __name__ == "__main__":
    main()

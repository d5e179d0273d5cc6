"""Near-miss recovery: run the corpus through the real server and count outcomes.

    .venv/bin/python bench/nearmiss.py [--json bench/results/nearmiss.json]

Starts ``steadyhand serve`` over stdio, and for each case in tests/nearmiss/cases writes
the file, reads it, and makes the model-style call. Reports the share of recoverable
near-misses recovered exactly, the share of all calls wrongly applied (the file changed
in any way but the expected one; must be 0), and how the refusals went. Exits 1 if
anything was wrongly applied.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
from collections import Counter, defaultdict
from pathlib import Path

from lsprotocol import types
from pygls.lsp.client import LanguageClient

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.nearmiss.corpus import Verdict, judge, load_cases, run_case  # noqa: E402


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
                },
                indent=2,
            )
            + "\n"
        )
    return 1 if wrong else 0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--json", type=Path, default=None, help="also write the numbers here")
    args = ap.parse_args()
    sys.exit(asyncio.run(run(args.json)))


if __name__ == "__main__":
    main()

"""Load: 8 concurrent sessions issue a stream of mixed calls over one server.

No error other than the expected refusals (``stale`` / ``no_match`` on the shared files
that every session edits), every applied update accounted for in the files, memory flat
after warm-up (RSS reported at start and end), latency percentiles reported.
"""

from __future__ import annotations

import asyncio
import random
import re
import time
from collections import Counter
from pathlib import Path

from steadyhand.protocol.commands import EDIT, PING, READ, WRITE
from tests.torture.harness import Server, record, size

SESSIONS = 8
FILLER = "".join(
    f"filler line {n}: the quick brown fox jumps over the lazy dog\n" for n in range(300)
)
EXPECTED = {"stale", "no_match"}


def _own(n: int) -> str:
    return f"counter: {n}\n{FILLER}"


async def _session(
    server: Server,
    s: int,
    calls: int,
    rng: random.Random,
    latencies: list[float],
    outcome: Counter[str],
) -> int:
    """Returns the number of updates applied to the session's own file."""
    name, own = f"s{s}", f"own{s}.txt"
    counter = 0
    issued = 0
    shared_seen: dict[str, int] = {}

    async def timed(command: str, **params: object) -> dict[str, object]:
        nonlocal issued
        issued += 1
        t = time.perf_counter()
        r = await server.call(command, session=name, **params)
        latencies.append(time.perf_counter() - t)
        key = "ok" if r.get("ok") else str(r.get("error") or r.get("rpc_error"))
        outcome[f"{command.split('.')[-1]} {key}"] += 1
        return r

    r = await timed(READ, file_path=own)
    assert r["ok"], r
    while issued < calls:  # exactly ``calls`` calls: a roll that issues none rolls again
        roll = rng.random()
        if roll < 0.35:
            r = await timed(
                READ, file_path=own, offset=rng.randint(1, 300), limit=rng.randint(1, 40)
            )
            assert r["ok"], r
        elif roll < 0.60:
            r = await timed(
                EDIT,
                file_path=own,
                old_string=f"counter: {counter}\n",
                new_string=f"counter: {counter + 1}\n",
            )
            assert r["ok"], r
            counter += 1
        elif roll < 0.70:
            r = await timed(WRITE, file_path=own, content=_own(counter + 1))
            assert r["ok"], r
            counter += 1
        elif roll < 0.85:
            shared = f"shared{rng.randint(0, 1)}.txt"
            r = await timed(READ, file_path=shared, limit=rng.choice([5, 6]))
            assert r["ok"], r
            if r["type"] == "file_unchanged":
                continue  # what this session saw is still current
            m = re.search(r"hits: (\d+)", str(r["message"]))
            assert m, r
            shared_seen[shared] = int(m.group(1))
        else:
            shared = f"shared{rng.randint(0, 1)}.txt"
            if shared not in shared_seen:
                continue
            n = shared_seen[shared]
            r = await timed(
                EDIT, file_path=shared, old_string=f"hits: {n}\n", new_string=f"hits: {n + 1}\n"
            )
            if r["ok"]:
                shared_seen[shared] = n + 1
                outcome[f"applied {shared}"] += 1
            else:
                assert r["error"] in EXPECTED, r
                shared_seen.pop(shared)
    return counter


async def test_eight_sessions_mixed_calls(tmp_path: Path) -> None:
    total = size(1600, 10_000)
    per = total // SESSIONS
    ws = tmp_path / "ws"
    ws.mkdir()
    for s in range(SESSIONS):
        (ws / f"own{s}.txt").write_text(_own(0))
    for k in range(2):
        (ws / f"shared{k}.txt").write_text(f"hits: 0\n{FILLER}")
    server = await Server.start(ws, state_dir=tmp_path / "state")
    latencies: list[float] = []
    outcome: Counter[str] = Counter()
    try:
        # Warm-up: a tenth of the calls, then the measured run.
        warm = [
            _session(server, s, max(per // 10, 5), random.Random(100 + s), [], Counter())
            for s in range(SESSIONS)
        ]
        counters = await asyncio.gather(*warm)
        for s, n in enumerate(counters):  # reset the own files for the measured run
            assert (ws / f"own{s}.txt").read_text() == _own(n)
        rss_start = server.rss_kib()
        for s in range(SESSIONS):
            (ws / f"own{s}.txt").write_text(_own(0))
        for k in range(2):
            (ws / f"shared{k}.txt").write_text(f"hits: 0\n{FILLER}")
        runs = [
            _session(server, s, per, random.Random(s), latencies, outcome) for s in range(SESSIONS)
        ]
        started = time.perf_counter()
        counters = await asyncio.gather(*runs)
        elapsed = time.perf_counter() - started
        rss_end = server.rss_kib()
        assert (await server.call(PING))["ok"]
    finally:
        await server.stop()
    # every applied update is in the files
    for s, n in enumerate(counters):
        assert (ws / f"own{s}.txt").read_text() == _own(n)
    for k in range(2):
        hits = int((ws / f"shared{k}.txt").read_text().split("\n", 1)[0].split()[1])
        assert hits == outcome[f"applied shared{k}.txt"], (hits, outcome)
    unexpected = {
        k: v for k, v in outcome.items() if not k.endswith(" ok") and not k.startswith("applied")
    }
    assert set(k.split()[-1] for k in unexpected) <= EXPECTED, unexpected
    lat = sorted(latencies)
    record(
        "load",
        sessions=SESSIONS,
        calls=len(lat),
        refusals=sum(unexpected.values()),
        rss_start_mib=round(rss_start / 1024, 1),
        rss_end_mib=round(rss_end / 1024, 1),
        p50_ms=round(lat[len(lat) // 2] * 1000, 2),
        p99_ms=round(lat[int(len(lat) * 0.99)] * 1000, 2),
        calls_per_s=round(len(lat) / elapsed),
    )
    assert len(lat) == per * SESSIONS == total
    # memory flat after warm-up: only the content store may still grow, up to its cap
    # (64 MiB by default); the figures go in the report
    assert rss_end - rss_start < 64 * 1024, (rss_start, rss_end)

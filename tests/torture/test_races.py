"""Races: an external writer rewrites a file at random moments while agents (two sessions
of one server, and a session of a second server) read and edit it. No update may be lost.

The file is a history, one token per line, ending in ``END``::

    E e7        <- written by the external writer (a blind overwrite: a new history)
    A s1-4      <- appended by an agent edit: old "<last>\\nEND\\n", new "<last>\\n<tok>\\nEND\\n"
    END

An agent edit that is applied to the content it was checked against keeps the history
and adds its token; so a lost update shows up as

- the external writer's newest token missing from the head of the file (someone wrote
  over it without having seen it), checked before each external write and at the end;
- two successful agent edits with the same parent token (one overwrote the other);
- a successful edit built on an older external version but sent after a newer one was
  already on disk;
- a successful edit on the newest external version missing from the final file.
"""

from __future__ import annotations

import asyncio
import os
import random
import re
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from steadyhand.protocol.commands import EDIT, READ
from tests.torture.harness import Server, record, size

LINE = re.compile(r"^\s*\d+\t(.*)$")


@dataclass
class Success:
    token: str
    parent: str
    root: str
    sent: float


@dataclass
class Trial:
    path: Path
    successes: list[Success] = field(default_factory=list)
    externals: list[tuple[str, float]] = field(default_factory=list)  # (token, written at)
    refusals: Counter[str] = field(default_factory=Counter)
    lost: list[str] = field(default_factory=list)
    done: asyncio.Event = field(default_factory=asyncio.Event)


def _lines(message: str) -> list[str]:
    out = []
    for raw in message.split("\n"):
        m = LINE.match(raw)
        if m:
            out.append(m.group(1))
    return out


async def _agent(server: Server, session: str, trial: Trial) -> None:
    name = trial.path.name
    flip = False
    n = 0
    while not trial.done.is_set():
        flip = not flip  # two different ranges: a read never gets the "unchanged" stub
        r = await server.call(
            READ, file_path=name, limit=100_000 if flip else 99_999, session=session
        )
        if not r["ok"]:
            trial.refusals["read " + r["error"]] += 1
            continue
        lines = _lines(r["message"])
        if len(lines) < 2 or lines[-1] != "END" or not lines[0].startswith("E "):
            trial.refusals["torn read"] += 1  # an in-place external write in progress
            await asyncio.sleep(0.001)
            continue
        n += 1
        parent, token = lines[-2], f"A {session}-{n}"
        sent = time.monotonic()
        e = await server.call(
            EDIT,
            file_path=name,
            old_string=f"{parent}\nEND\n",
            new_string=f"{parent}\n{token}\nEND\n",
            session=session,
        )
        if e["ok"]:
            trial.successes.append(Success(token, parent, lines[0], sent))
        else:
            trial.refusals[e["error"]] += 1
            assert e["error"] == "stale", e


async def _external(trial: Trial, rng: random.Random, writes: int) -> None:
    path = trial.path
    for k in range(writes):
        await asyncio.sleep(rng.uniform(0.0, 0.05))
        current = path.read_text()
        if trial.externals:
            newest = trial.externals[-1][0]
            if not current.startswith(newest + "\n"):
                trial.lost.append(f"{newest} was overwritten unseen: {current[:60]!r}")
        token = f"E {path.stem}-{k}"
        data = f"{token}\nEND\n"
        if rng.random() < 0.5:  # like an editor or git: write a temp file, rename it over
            tmp = path.with_name(".external.tmp")
            tmp.write_text(data)
            os.replace(tmp, path)
        else:  # like a shell redirection: truncate and write in place
            with open(path, "w") as fh:
                fh.write(data)
        trial.externals.append((token, time.monotonic()))
    await asyncio.sleep(0.08)  # let the agents catch up on the last version
    trial.done.set()


def _judge(trial: Trial) -> None:
    """Add every lost update the trial's record proves to ``trial.lost``."""
    final = trial.path.read_text().split("\n")
    newest = trial.externals[-1][0]
    if final[0] != newest:
        trial.lost.append(f"final head {final[0]!r} is not the newest external {newest!r}")
    parents = Counter(s.parent for s in trial.successes)
    for parent, n in parents.items():
        if n > 1:
            trial.lost.append(f"{n} edits applied on top of {parent!r}")
    order = [tok for tok, _ in trial.externals]
    for s in trial.successes:
        newer = [tok for tok, at in trial.externals if at < s.sent]
        if newer and s.root in order and order.index(s.root) < len(newer) - 1:
            trial.lost.append(f"{s.token} (on {s.root}) applied after {newer[-1]} landed")
    on_newest = {s.token for s in trial.successes if s.root == newest}
    kept = {line for line in final[1:] if line.startswith("A ")}
    if on_newest != kept:
        trial.lost.append(f"final file has {sorted(kept)}, edits on it {sorted(on_newest)}")


async def test_external_writer_vs_agents(tmp_path: Path) -> None:
    trials = size(10, 300)
    rng = random.Random(int(os.environ.get("STEADYHAND_TORTURE_SEED", "5")))
    ws = tmp_path / "ws"
    ws.mkdir()
    state = tmp_path / "state"
    one = await Server.start(ws, state_dir=state)
    two = await Server.start(ws, state_dir=state)  # a second editor on the same folder
    totals: Counter[str] = Counter()
    lost: list[str] = []
    try:
        for i in range(trials):
            path = ws / f"race{i}.txt"
            path.write_text(f"E race{i}-start\nEND\n")
            trial = Trial(path)
            trial.externals.append((f"E race{i}-start", time.monotonic()))
            await asyncio.gather(
                _agent(one, "s1", trial),
                _agent(one, "s2", trial),
                _agent(two, "t1", trial),
                _external(trial, rng, writes=rng.randint(2, 5)),
            )
            _judge(trial)
            lost += trial.lost
            totals["trials"] += 1
            totals["applied"] += len(trial.successes)
            totals["external writes"] += len(trial.externals) - 1
            totals.update(trial.refusals)
    finally:
        await one.stop()
        await two.stop()
    record(
        "races",
        trials=totals["trials"],
        applied=totals["applied"],
        stale=totals["stale"],
        external_writes=totals["external writes"],
        torn_reads=totals["torn read"],
        lost_updates=len(lost),
    )
    assert totals["applied"] > trials and totals["stale"] > 0
    assert lost == []

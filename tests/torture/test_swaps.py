"""Swaps under the server's feet: what lies at a path changes between the server's check
and its open, while agents read, edit and write it.

* **Hard links.** Files in the workspace flip, as fast as a thread can flip them, between
  plain files and hard links to files outside it (whose link count then says two).
  Agents of two servers read them (whole, ranged, as notebooks), and edit and write
  them (dry runs, whose stale refusals carry diffs, and real changes). No answer may
  hold a byte of the outside files, the outside files keep their bytes, and, where the
  file system keeps access times, they are never read at all.
* **FIFOs.** With the watcher on, a tracked file is replaced by a FIFO that a writer is
  blocked opening (it goes on once anyone opens the FIFO to read), while agents read,
  edit and write that path. No writer may go on before the test itself releases it:
  nothing in the server opens the FIFO, neither the watcher's re-read nor a tool.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

from steadyhand.protocol.commands import EDIT, FILE_CHANGED, NOTEBOOK_EDIT, PING, READ, WRITE
from tests.torture.harness import Server, record, size
from tests.torture.test_paths import _atime_moves_on_read

SECRET = "OUTSIDE-BYTES-3c9e"


def _notebook(source: str) -> str:
    cell = {"cell_type": "code", "id": "c1", "metadata": {}, "outputs": [], "source": source}
    cell["execution_count"] = None
    return json.dumps({"cells": [cell], "metadata": {}, "nbformat": 4, "nbformat_minor": 5})


class LinkSwapper:
    """Flips each inside file between a plain file and a hard link to its outside twin."""

    def __init__(self, pairs: list[tuple[Path, bytes, Path]], seed: int) -> None:
        self.pairs = pairs
        self.rng = random.Random(seed)
        self.swaps = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            name, inside, outside = self.rng.choice(self.pairs)
            link = name.with_name(f".{name.name}.link")
            plain = name.with_name(f".{name.name}.plain")
            os.link(outside, link)
            os.rename(link, name)  # a second name of the outside file, in the workspace
            time.sleep(self.rng.uniform(0, 0.0005))
            plain.write_bytes(inside)
            os.rename(plain, name)  # a plain file again
            self.swaps += 1
            time.sleep(self.rng.uniform(0, 0.0003))

    def __enter__(self) -> LinkSwapper:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


async def _link_agent(
    server: Server, session: str, calls: int, codes: Counter[str], leaks: list[str]
) -> None:
    """Reads, dry runs and changes of the flipping files, ``calls`` of them."""
    plan: list[tuple[str, dict[str, Any]]] = [
        (READ, {"file_path": "f.txt"}),
        (READ, {"file_path": "f.txt", "offset": 1, "limit": 3}),
        (READ, {"file_path": "n.ipynb"}),
        (EDIT, {"file_path": "f.txt", "old_string": "inside", "new_string": "x", "dry_run": True}),
        (WRITE, {"file_path": "f.txt", "content": "other\n", "dry_run": True}),
        (EDIT, {"file_path": "f.txt", "old_string": "inside", "new_string": "changed"}),
        (WRITE, {"file_path": "f.txt", "content": "inside line\nsecond line\n"}),
        (NOTEBOOK_EDIT, {"file_path": "n.ipynb", "cell_id": "c1", "new_source": "y"}),
    ]
    for k in range(calls):
        tool, params = plan[k % len(plan)]
        # a new session now and then: a first read returns the text, never "unchanged"
        s = f"{session}-{k // len(plan)}"
        r = await server.call(tool, session=s, **params)
        codes[f"{tool.split('.')[-1]} {'ok' if r.get('ok') else r.get('error')}"] += 1
        if SECRET in json.dumps(r):
            leaks.append(f"{tool}: {json.dumps(r)[:240]}")


async def test_hard_links_swapped_in_never_leak(tmp_path: Path) -> None:
    calls = size(240, 4000)
    ws, out = tmp_path / "ws", tmp_path / "out"
    ws.mkdir()
    out.mkdir()
    kinds = [
        ("f.txt", b"inside line\nsecond line\n", f"{SECRET}\nmore outside\n".encode()),
        ("n.ipynb", _notebook("inside = 1").encode(), _notebook(SECRET).encode()),
    ]
    pairs = []
    for name, inside, outside in kinds:
        (ws / name).write_bytes(inside)
        (out / name).write_bytes(outside)
        st = (out / name).stat()
        os.utime(out / name, ns=(st.st_mtime_ns - 10**12, st.st_mtime_ns))
        pairs.append((ws / name, inside, out / name))
    atimes = {p: p.stat().st_atime_ns for _, _, p in pairs}
    atime_tells = _atime_moves_on_read(tmp_path)
    codes: Counter[str] = Counter()
    leaks: list[str] = []
    seed = int(os.environ.get("STEADYHAND_TORTURE_SEED", "7"))
    one = await Server.start(ws, state_dir=tmp_path / "state")
    two = await Server.start(ws, state_dir=tmp_path / "state")
    try:
        with LinkSwapper(pairs, seed) as swapper:
            per = calls // 4
            await asyncio.gather(
                _link_agent(one, "a", per, codes, leaks),
                _link_agent(one, "b", per, codes, leaks),
                _link_agent(two, "c", per, codes, leaks),
                _link_agent(two, "d", per, codes, leaks),
            )
        swaps = swapper.swaps
        assert (await one.call(PING))["ok"] and (await two.call(PING))["ok"]
    finally:
        await one.stop()
        await two.stop()
    # (the access times first: the test's own look at the bytes moves them)
    read_outside = [p.name for p in atimes if atime_tells and p.stat().st_atime_ns != atimes[p]]
    changed = [p.name for name, inside, p in pairs if SECRET.encode() not in p.read_bytes()]
    extra = sorted(p.name for p in out.iterdir()) != sorted(p.name for _, _, p in pairs)
    refused = sum(n for k, n in codes.items() if not k.endswith(" ok"))
    record(
        "hard-link swaps",
        calls=sum(codes.values()),
        faults=swaps,
        losses=len(leaks) + len(changed) + len(read_outside) + int(extra),
        leaked_answers=len(leaks),
        outside_changed=len(changed) + int(extra),
        outside_read=len(read_outside) if atime_tells else "n/a",
        refusals=refused,
        outside_workspace=sum(n for k, n in codes.items() if k.endswith("outside_workspace")),
    )
    assert swaps > 20, (swaps, codes)
    assert leaks == [], f"{len(leaks)} answers held outside bytes, first: {leaks[0]}; {codes}"
    assert changed == [] and not extra
    assert read_outside == [], f"outside files were read: {read_outside}"


class BlockedWriter:
    """A thread blocked opening a FIFO for writing; it notes whether it went on before
    the test released it (someone else opened the FIFO to read: a loss)."""

    def __init__(self, fifo: Path) -> None:
        self.fifo = fifo
        self.releasing = threading.Event()
        self.early = False
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        fd = os.open(self.fifo, os.O_WRONLY)
        self.early = not self.releasing.is_set()
        os.close(fd)

    def release(self, now_at: Path) -> None:
        self.releasing.set()
        if self.thread.is_alive():
            fd = os.open(now_at, os.O_RDONLY | os.O_NONBLOCK)
            self.thread.join(5)
            os.close(fd)


async def _fifo_agent(server: Server, name: str, stop: asyncio.Event, codes: Counter[str]) -> None:
    plan: list[tuple[str, dict[str, Any]]] = [
        (READ, {}),
        (EDIT, {"old_string": "line", "new_string": "line"}),
        (WRITE, {"content": "agent line\n"}),
        (READ, {"offset": 1, "limit": 1}),
    ]
    k = 0
    while not stop.is_set():
        tool, params = plan[k % len(plan)]
        r = await server.call(tool, file_path=name, session=f"f{k}", **params)
        codes[f"{tool.split('.')[-1]} {'ok' if r.get('ok') else r.get('error')}"] += 1
        k += 1
        await asyncio.sleep(0.002)


async def test_fifo_swapped_in_under_a_tracked_file_is_never_opened(tmp_path: Path) -> None:
    trials = size(12, 150)
    ws = tmp_path / "ws"
    ws.mkdir()
    server = await Server.start(ws, state_dir=tmp_path / "state")
    codes: Counter[str] = Counter()
    released_early = 0
    notices = 0
    try:
        for i in range(trials):
            f = ws / f"tracked{i}.txt"
            f.write_text("a line\n")
            assert (await server.call(READ, file_path=f.name))["ok"]
            for _ in range(100):
                state = (await server.call(PING))["watcher"]["state"]
                if state == "watching":
                    break
                await asyncio.sleep(0.02)
            fifo = ws / f".fifo{i}"
            os.mkfifo(fifo)
            writer = BlockedWriter(fifo)
            await asyncio.sleep(0.01)
            before = len(server.notifications)
            stop = asyncio.Event()
            agents = [asyncio.ensure_future(_fifo_agent(server, f.name, stop, codes))]
            await asyncio.sleep(random.uniform(0, 0.02))
            os.rename(fifo, f)  # the tracked file is now a FIFO with a writer waiting on it
            for _ in range(40):
                if any(
                    n.get("method") == FILE_CHANGED and n["params"]["path"].endswith(f.name)
                    for n in server.notifications[before:]
                ):
                    notices += 1
                    break
                await asyncio.sleep(0.01)
            await asyncio.sleep(0.05)
            stop.set()
            await asyncio.gather(*agents)
            writer.release(f)
            released_early += writer.early
            f.unlink()
        assert (await server.call(PING))["ok"]
    finally:
        await server.stop()
    record(
        "FIFO swaps",
        trials=trials,
        faults=trials,
        losses=released_early,
        writers_released=released_early,
        notices=notices,
        calls=sum(codes.values()),
        not_regular_file=sum(n for k, n in codes.items() if k.endswith("not_regular_file")),
    )
    assert released_early == 0, f"{released_early} blocked writers were released; {codes}"
    assert notices > trials // 2, (notices, codes)

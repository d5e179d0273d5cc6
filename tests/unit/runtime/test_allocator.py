"""The idle trim hands memory back once after each burst of work, never while busy."""

from __future__ import annotations

import asyncio
import json
import platform
import subprocess
import sys

import pytest

from steadyhand.runtime.allocator import IdleTrim


def test_a_burst_of_messages_is_followed_by_one_trim_and_no_more() -> None:
    trims: list[float] = []

    async def run() -> None:
        loop = asyncio.get_running_loop()
        idle = IdleTrim(0.02, lambda: trims.append(loop.time()))
        idle.start(loop)
        await asyncio.sleep(0.1)
        assert trims == []  # nothing happened yet: nothing to hand back
        for _ in range(10):  # a message every 5 ms, well inside the idle time
            idle.message()
            await asyncio.sleep(0.005)
        last_message = loop.time()
        await asyncio.sleep(0.15)
        after_burst = len(trims)
        await asyncio.sleep(0.1)
        idle.stop()
        assert after_burst >= 1 and trims[-1] >= last_message
        assert len(trims) == after_burst  # quiet since: nothing more to do

    asyncio.run(run())


def test_quiet_server_does_not_trim_again() -> None:
    trims: list[int] = []

    async def run() -> None:
        idle = IdleTrim(0.01, lambda: trims.append(1))
        idle.start(asyncio.get_running_loop())
        idle.message()
        await asyncio.sleep(0.1)
        idle.stop()

    asyncio.run(run())
    assert trims == [1]


_TRIM_PROBE = """
import json, os
from steadyhand.runtime.allocator import tune, trim

def resident() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")

tune()  # as ``serve`` does: up to 32 MiB of free heap is kept, not handed back on free
junk = [bytearray(100_000) for _ in range(200)]  # 20 MB of heap blocks, all touched
held = resident()
del junk
kept = resident()
first = trim()
after = resident()
print(json.dumps({"held": held, "kept": kept, "first": first, "after": after}))
"""


@pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="glibc only")
def test_trim_hands_free_heap_back_on_glibc() -> None:
    """In a fresh process: the free heap :func:`tune` keeps stays resident until
    :func:`trim` hands it back, which says so."""
    out = subprocess.run(
        [sys.executable, "-c", _TRIM_PROBE], capture_output=True, text=True, check=True
    )
    got = json.loads(out.stdout)
    mb = 1 << 20
    assert got["kept"] > got["held"] - 4 * mb, got  # freed, but kept for reuse
    assert got["first"] is True, got
    assert got["after"] < got["kept"] - 15 * mb, got  # most of the 20 MB went back

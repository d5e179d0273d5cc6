"""The idle trim hands memory back once after each burst of work, never while busy."""

from __future__ import annotations

import asyncio
import sys

import pytest

from steadyhand.runtime.allocator import IdleTrim, trim


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


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc only")
def test_trim_runs_on_this_system() -> None:
    junk = [bytearray(100_000) for _ in range(200)]
    del junk
    assert trim() in (True, False)

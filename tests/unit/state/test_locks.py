"""Per-path locks: one holder at a time, in order; whether a holder had to wait; and
nothing left behind by holders that finish, fail or are cancelled."""

from __future__ import annotations

import asyncio

import pytest

from steadyhand.state.locks import PathLocks


async def test_holders_of_one_path_take_turns_in_order_and_know_they_waited() -> None:
    locks = PathLocks()
    order: list[str] = []
    waited: dict[str, bool] = {}
    gate = asyncio.Event()

    async def holder(name: str, path: str) -> None:
        async with locks.hold(path) as held:
            waited[name] = held.waited
            order.append(f"{name} in")
            if name == "a":
                await gate.wait()
            order.append(f"{name} out")

    a = asyncio.create_task(holder("a", "/f"))
    await asyncio.sleep(0)
    b = asyncio.create_task(holder("b", "/f"))
    c = asyncio.create_task(holder("c", "/f"))
    other = asyncio.create_task(holder("o", "/g"))  # another path never waits
    await asyncio.sleep(0.01)
    assert order == ["a in", "o in", "o out"]
    gate.set()
    await asyncio.gather(a, b, c, other)
    assert order[3:] == ["a out", "b in", "b out", "c in", "c out"]
    assert waited == {"a": False, "b": True, "c": True, "o": False}
    assert len(locks) == 0


async def test_a_holder_that_fails_or_is_cancelled_while_waiting_leaves_nothing() -> None:
    locks = PathLocks()
    gate = asyncio.Event()

    async def first() -> None:
        async with locks.hold("/f"):
            await gate.wait()

    async def waiting() -> None:
        async with locks.hold("/f"):
            raise AssertionError("never reached: cancelled while waiting")

    a = asyncio.create_task(first())
    await asyncio.sleep(0)
    w = asyncio.create_task(waiting())
    await asyncio.sleep(0)
    assert len(locks) == 1
    w.cancel()
    with pytest.raises(asyncio.CancelledError):
        await w
    gate.set()
    await a
    assert len(locks) == 0

    with pytest.raises(ValueError):
        async with locks.hold("/f"):
            raise ValueError("fails while holding")
    async with locks.hold("/f") as held:  # released: the next one does not wait
        assert not held.waited
    assert len(locks) == 0

"""Asyncio helpers for work that must not be left half done.

Most tool calls never wait for anything; running them at once, without a task, saves
turns of the event loop. :func:`run_now` does that for every face (the LSP lane, the
MCP server, the socket MCP servers attach through): :class:`Resume` lets a task take
over a coroutine that has already run up to its first wait. :func:`run_to_end` finishes
a change that may already have reached a file even when its request is cancelled
meanwhile.
"""

from __future__ import annotations

import asyncio
import contextvars
from collections.abc import Callable, Coroutine, Generator
from typing import Any, TypeVar, cast

T = TypeVar("T")


class Resume(Coroutine[Any, Any, Any]):
    """A coroutine already run up to yielding ``waiting_on``, for a task to drive on.

    The task's first step hands out ``waiting_on``; later steps go straight to the
    coroutine. A cancellation thrown in before that first step reaches the coroutine
    where it waits (a generator could not catch it before it had started), so its
    ``finally`` blocks run and a lock it queued for lets go of the queue.
    """

    def __init__(self, coro: Coroutine[Any, Any, Any], waiting_on: Any) -> None:
        self._coro = coro
        self._pending: list[Any] = [waiting_on]

    def send(self, value: Any) -> Any:
        if self._pending:
            return self._pending.pop()
        return self._coro.send(value)

    def __next__(self) -> Any:  # what a task calls for send(None)
        return self.send(None)

    def throw(self, typ: Any, val: Any = None, tb: Any = None) -> Any:
        self._pending.clear()
        if val is None and tb is None:
            return self._coro.throw(typ)
        return self._coro.throw(typ, val, tb)

    def close(self) -> None:
        self._coro.close()

    def __await__(self) -> Generator[Any, Any, Any]:
        raise TypeError("Resume is driven by a task, not awaited")


def run_now(
    coro: Coroutine[Any, Any, Any],
    done: Callable[[asyncio.Future[Any]], None],
    *,
    context: contextvars.Context | None = None,
) -> asyncio.Task[Any] | None:
    """Run ``coro`` at once (in ``context``, if given) up to its first wait, and call
    ``done`` with its outcome (a future holding its result, its exception or its
    cancellation) once it ends: at once when it never waits, else when the task that
    drives it on from there ends. Returns that task (None: it ended at once), so that
    it can be found and cancelled."""
    loop = asyncio.get_running_loop()
    outcome: asyncio.Future[Any] = loop.create_future()
    try:
        waiting_on = context.run(coro.send, None) if context is not None else coro.send(None)
    except StopIteration as stop:
        outcome.set_result(stop.value)
    except asyncio.CancelledError:
        outcome.cancel()
    except Exception as exc:  # handed to ``done``, which answers it
        outcome.set_exception(exc)
    else:
        task = loop.create_task(Resume(coro, waiting_on), context=context)
        task.add_done_callback(done)
        return task
    done(outcome)
    return None


async def run_to_end(work: Coroutine[Any, Any, T]) -> T:
    """Await ``work`` to its end even when the caller is cancelled meanwhile, then pass
    the cancellation on. Changes that may already have reached a file are finished and
    recorded (a rewind: all of them, or rolled back), never left half done."""
    # Most changes never wait (a disk write): they run at once, as an await would run
    # them; a task takes over only when the work has to wait for something.
    try:
        waiting_on = work.send(None)
    except StopIteration as done:
        return cast(T, done.value)
    task = asyncio.get_running_loop().create_task(Resume(work, waiting_on))
    cancelled = False
    while not task.done():
        try:
            await asyncio.wait({task})  # cancelling the wait leaves the task running
        except asyncio.CancelledError:
            cancelled = True
    if cancelled:
        if not task.cancelled():
            task.exception()  # its outcome is in the files and in history
        raise asyncio.CancelledError
    return cast(T, task.result())

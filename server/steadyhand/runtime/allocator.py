"""How ``steadyhand serve`` uses the C allocator (glibc; elsewhere nothing happens).

Two settings pull in opposite directions: freed memory kept for reuse makes the next
edit fast, freed memory handed back keeps the server small. :func:`tune` keeps it while
the server works; :class:`IdleTrim` hands it back once the server has been idle a while.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from steadyhand.system.native import glibc

#: glibc's mallopt parameters
_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3

#: Seconds without a message after which free heap is handed back.
IDLE_SECONDS = 1.0


def _libc() -> Any | None:
    return glibc()


def tune() -> None:
    """Let glibc keep freed blocks of up to a few MB for reuse.

    Every edit of a file of a few hundred KB allocates several blocks that size (the
    bytes read, the text, the new text, the encoded bytes). By default each such block
    is a fresh ``mmap``, and touching its pages costs more than the work done in it:
    about 0.5 ms for an edit of a 650 KB file. Blocks under 8 MiB now come from the heap
    and are reused, and up to 32 MiB of free heap is kept rather than handed back.
    """
    libc = _libc()
    if libc is not None:
        libc.mallopt(_M_MMAP_THRESHOLD, 8 << 20)
        libc.mallopt(_M_TRIM_THRESHOLD, 32 << 20)


def trim() -> bool:
    """Hand free heap pages back to the system now; returns whether any were."""
    libc = _libc()
    return bool(libc.malloc_trim(0)) if libc is not None else False


class IdleTrim:
    """Calls ``trim`` once the server has seen no message for ``idle`` seconds after
    having seen some: the free heap a burst of work leaves (up to the 32 MiB :func:`tune`
    allows) goes back to the system while the agent thinks, not on the next call."""

    def __init__(self, idle: float = IDLE_SECONDS, trim: Callable[[], object] = trim) -> None:
        self.idle = idle
        self._trim = trim
        self._messages = 0
        self._seen = 0  # message count at the last check
        self._trimmed = 0  # message count at the last trim
        self._timer: asyncio.TimerHandle | None = None

    def start(self, loop: asyncio.AbstractEventLoop) -> None:
        self._timer = loop.call_later(self.idle, self._check, loop)

    def stop(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def message(self) -> None:
        self._messages += 1

    def _check(self, loop: asyncio.AbstractEventLoop) -> None:
        n = self._messages
        if n == self._seen and n != self._trimmed:
            self._trimmed = n
            self._trim()
        self._seen = n
        self._timer = loop.call_later(self.idle, self._check, loop)

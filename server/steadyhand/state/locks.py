"""Per-path locks: check-and-apply for one file is never interleaved."""

from __future__ import annotations

import asyncio
from types import TracebackType


class PathLocks:
    def __init__(self) -> None:
        # each path's lock and how many callers hold it or wait for it
        self._locks: dict[str, tuple[asyncio.Lock, int]] = {}

    def hold(self, path: str) -> Hold:
        """``async with locks.hold(path) as held``: the path's lock, for the block."""
        return Hold(self, path)

    def _join(self, path: str) -> tuple[asyncio.Lock, int]:
        """The path's lock, and how many other callers hold it or wait for it."""
        lock, users = self._locks.get(path, (None, 0))
        if lock is None:
            lock = asyncio.Lock()
        self._locks[path] = (lock, users + 1)
        return lock, users

    def _leave(self, path: str) -> None:
        lock, users = self._locks[path]
        if users <= 1:
            del self._locks[path]
        else:
            self._locks[path] = (lock, users - 1)

    def __len__(self) -> int:
        return len(self._locks)


class Hold:
    """One caller's hold on one path's lock (see :meth:`PathLocks.hold`).

    ``waited`` tells whether another caller had the lock first: only then can the file
    have been changed by another tool call since this one last looked at it.
    """

    __slots__ = ("_lock", "_locks", "_path", "waited")

    def __init__(self, locks: PathLocks, path: str) -> None:
        self._locks = locks
        self._path = path
        self._lock: asyncio.Lock | None = None
        self.waited = False

    async def __aenter__(self) -> Hold:
        lock, others = self._locks._join(self._path)
        self.waited = others > 0
        try:
            await lock.acquire()
        except BaseException:  # cancelled while waiting: never held
            self._locks._leave(self._path)
            raise
        self._lock = lock
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        lock, self._lock = self._lock, None
        try:
            if lock is not None:
                lock.release()
        finally:
            self._locks._leave(self._path)

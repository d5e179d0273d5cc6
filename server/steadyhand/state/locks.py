"""Per-path locks: check-and-apply for one file is never interleaved."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager


class PathLocks:
    def __init__(self) -> None:
        self._locks: dict[str, tuple[asyncio.Lock, int]] = {}

    @asynccontextmanager
    async def hold(self, path: str) -> AsyncIterator[None]:
        lock, users = self._locks.get(path, (None, 0))
        if lock is None:
            lock = asyncio.Lock()
        self._locks[path] = (lock, users + 1)
        try:
            async with lock:
                yield
        finally:
            lock2, n = self._locks[path]
            if n <= 1:
                del self._locks[path]
            else:
                self._locks[path] = (lock2, n - 1)

    def __len__(self) -> int:
        return len(self._locks)

"""Catching changes to tracked files made behind the agent's back.

One recursive watchdog observer per root, started lazily (an empty cache watches
nothing) and scheduled in a background thread, so neither ``initialize`` nor any request
ever waits for it. Only write/create/delete/move events are asked for: dropping
open/close-without-write events keeps inotify's queue from overflowing on big trees.
When the OS refuses more watches, the watcher logs once and gives up gracefully: the
hash check before every write still catches every stale write.

Events arrive on watchdog's thread and are handed to the event loop, where a tracked
path is re-hashed: if its content differs from what a session saw, that record is
marked stale (no ``file_unchanged`` stub may be served) and the client is told with a
``steadyhand/fileChanged`` notification — unless the new content is what Steadyhand
itself just wrote.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import threading
from collections.abc import Callable
from typing import Any

log = logging.getLogger(__name__)

#: (path, kind) where kind is "modified", "created", "deleted" or "moved"
ChangeCallback = Callable[[str, str], None]


def is_temp_name(path: str) -> bool:
    """Whether ``path`` is one of Steadyhand's own temp files (never tracked)."""
    base = os.path.basename(path)
    return base.startswith(".") and base.endswith(".tmp") and ".steadyhand-" in base


class Watcher:
    def __init__(self, loop: asyncio.AbstractEventLoop, on_change: ChangeCallback) -> None:
        self._loop = loop
        self._on_change = on_change
        self._observer: Any = None
        self._watched: set[str] = set()
        self._lock = threading.Lock()
        self._failed = False
        self.enabled = True

    @property
    def watched_roots(self) -> set[str]:
        return set(self._watched)

    def ensure(self, roots: list[str]) -> None:
        """Watch ``roots`` (recursively) if not yet watched; returns at once."""
        if not self.enabled or self._failed:
            return
        todo = [r for r in roots if r not in self._watched and os.path.isdir(r)]
        if not todo:
            return
        with self._lock:
            self._watched.update(todo)
        threading.Thread(
            target=self._schedule, args=(todo,), daemon=True, name="steadyhand-watch"
        ).start()

    def _schedule(self, roots: list[str]) -> None:
        try:
            from watchdog.events import (
                FileClosedEvent,
                FileCreatedEvent,
                FileDeletedEvent,
                FileModifiedEvent,
                FileMovedEvent,
                FileSystemEvent,
                FileSystemEventHandler,
            )
            from watchdog.observers import Observer
        except ImportError:  # pragma: no cover - watchdog is a dependency
            self._fail("watchdog is not installed")
            return

        watcher = self

        class Handler(FileSystemEventHandler):
            def on_any_event(self, event: FileSystemEvent) -> None:
                if event.is_directory:
                    return
                kind = {
                    FileModifiedEvent: "modified",
                    FileClosedEvent: "modified",
                    FileCreatedEvent: "created",
                    FileDeletedEvent: "deleted",
                    FileMovedEvent: "moved",
                }.get(type(event))
                if kind is None:
                    return
                src = os.fsdecode(event.src_path)
                if not is_temp_name(src):
                    watcher._emit(src, kind)
                if kind == "moved":
                    dest = os.fsdecode(event.dest_path)
                    if not is_temp_name(dest):
                        watcher._emit(dest, "created")

        try:
            with self._lock:
                if self._observer is None:
                    obs = Observer()
                    obs.daemon = True
                    obs.start()
                    self._observer = obs
                obs = self._observer
            for root in roots:
                obs.schedule(
                    Handler(),
                    root,
                    recursive=True,
                    event_filter=[
                        FileModifiedEvent,
                        FileClosedEvent,
                        FileCreatedEvent,
                        FileDeletedEvent,
                        FileMovedEvent,
                    ],
                )
            log.info("watching %s", ", ".join(roots))
        except OSError as exc:
            self._fail(f"{exc} (raise fs.inotify.max_user_watches to watch large trees)")

    def _fail(self, why: str) -> None:
        if not self._failed:
            self._failed = True
            log.warning(
                "file watching is off: %s. Changes made behind the agent's back are still "
                "caught by the hash check before every write.",
                why,
            )

    def _emit(self, path: str, kind: str) -> None:
        # a closed loop means the server is shutting down
        with contextlib.suppress(RuntimeError):
            self._loop.call_soon_threadsafe(self._on_change, path, kind)

    def stop(self) -> None:
        obs = self._observer
        if obs is not None:
            obs.stop()

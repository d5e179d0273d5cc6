"""Catching changes to tracked files made behind the agent's back.

Watching starts lazily (an empty cache watches nothing) and its set-up (adding a watch
per folder) runs in a background thread, so neither ``initialize`` nor any request ever
waits for it. When the OS refuses more watches, the watcher logs once and gives up
gracefully: the hash check before every write still catches every stale write.

On Linux, one inotify descriptor is read by the event loop itself (:class:`_Inotify`):
no thread runs while requests are served, so Steadyhand's own writes, which make events
too, never wait for a second thread to let go of the interpreter lock. Elsewhere a
recursive watchdog observer does the job (:class:`_Watchdog`). Only write, create,
delete and move events are asked for; Steadyhand's own temp files are ignored.

A reported path is re-hashed on the event loop: if its content differs from what a
session saw, that record is marked stale (no ``file_unchanged`` stub may be served) and
the client is told with a ``steadyhand/fileChanged`` notification — unless the new
content is what Steadyhand itself just wrote (the disk layer's record of its own writes,
:mod:`steadyhand.apply.own_writes`, which :mod:`steadyhand.watch.external` reads).
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import errno
import logging
import os
import struct
import threading
from collections.abc import Callable
from typing import Any

from steadyhand.fs.atomic import TEMP_PATTERN
from steadyhand.system import native

log = logging.getLogger(__name__)

#: (path, kind) where kind is "modified", "created", "deleted" or "moved" for a file, or
#: "folder" for a folder that appeared, went or was renamed (and a watched root after
#: events were missed): whatever is tracked under it is to be checked again.
ChangeCallback = Callable[[str, str], None]


def is_temp_name(path: str) -> bool:
    """Whether ``path`` is one of Steadyhand's own temp files (never tracked): named as
    the atomic write names them, so a user's ``.env.steadyhand-backup.tmp`` is not."""
    return TEMP_PATTERN.match(os.path.basename(path)) is not None


def _unnamed(full: bytes, name: bytes, mask: int) -> bool:
    """Whether an inotify event about ``name`` (at ``full``) is about a file that has no
    name yet (opened with ``O_TMPFILE``, as Steadyhand writes a new file): its writes are
    reported under ``#`` and its inode number, and it is named later (a create event for
    the real name). A file that really has such a name is not one."""
    return (
        name[:1] == b"#"
        and name[1:].isdigit()
        and not mask & (_IN_CREATE | _IN_MOVED_TO | _IN_MOVED_FROM | _IN_DELETE)
        and not os.path.lexists(full)
    )


def links_tell(nlink: int, subfolders: int) -> bool | None:
    """Whether a file system's folder link counts can be trusted to tell a folder without
    subfolders (a link count of 2), judged from one folder just listed: ``nlink`` is its
    link count, ``subfolders`` how many it holds. ext4, XFS and tmpfs count 2 plus the
    subfolders; btrfs, overlayfs's merged folders and many network file systems do not.
    None when this folder cannot tell (no subfolders: a file system that always says 2
    would look right), so another folder decides."""
    if subfolders == 0:
        return None if nlink == 2 else False
    return nlink == 2 + subfolders


class Watcher:
    """Recursive watching of the roots, with the best backend this platform has."""

    def __init__(self, loop: asyncio.AbstractEventLoop, on_change: ChangeCallback) -> None:
        backend = _Inotify.create(loop, on_change)
        self._backend: _Inotify | _Watchdog = (
            backend if backend is not None else _Watchdog(loop, on_change)
        )

    @property
    def enabled(self) -> bool:
        return self._backend.enabled

    @enabled.setter
    def enabled(self, value: bool) -> None:
        self._backend.enabled = value

    def backend(self) -> str:
        """Which mechanism reports the changes: "inotify", or watchdog's observer."""
        return self._backend.backend()

    @property
    def watched_roots(self) -> set[str]:
        return set(self._backend.watched)

    def status(self) -> dict[str, Any]:
        """Where watching stands, for a health check: ``state`` is "off" (turned off by
        the settings), "starting" (folders are still being added), "watching", or
        "failed" (the OS refused; the hash check before every write still holds);
        ``folders``: how many folders are watched, where the backend can tell."""
        return self._backend.status()

    def ensure(self, roots: list[str]) -> None:
        """Watch ``roots`` (recursively) if not yet watched; returns at once."""
        self._backend.ensure(roots)

    def stop(self) -> None:
        self._backend.stop()


class _Backend:
    """What both backends share: which roots are watched, and giving up once."""

    def __init__(self) -> None:
        self.watched: set[str] = set()
        self.enabled = True
        self._lock = threading.Lock()
        self._failed = False
        self._setting_up = 0  # set-up threads still running

    def ensure(self, roots: list[str]) -> None:
        if not self.enabled or self._failed:
            return
        todo = [r for r in roots if r not in self.watched and os.path.isdir(r)]
        if not todo:
            return
        with self._lock:
            self.watched.update(todo)
            self._setting_up += 1
        threading.Thread(
            target=self._set_up, args=(todo,), daemon=True, name="steadyhand-watch"
        ).start()

    def _set_up(self, roots: list[str]) -> None:
        try:
            self._schedule(roots)
        finally:
            with self._lock:
                self._setting_up -= 1

    def _schedule(self, roots: list[str]) -> None:
        raise NotImplementedError

    def folders(self) -> int | None:
        """How many folders are watched; None where the backend cannot tell."""
        return None

    def status(self) -> dict[str, Any]:
        if self._failed:
            state = "failed"
        elif not self.enabled:
            state = "off"
        elif self._setting_up:
            state = "starting"
        else:
            state = "watching"
        return {"state": state, "folders": self.folders()}

    def backend(self) -> str:
        """Which mechanism reports the changes ("inotify", or watchdog's observer)."""
        return "inotify"

    def stop(self) -> None:
        raise NotImplementedError

    def _fail(self, why: str) -> None:
        if not self._failed:
            self._failed = True
            log.warning(
                "file watching is off: %s. Changes made behind the agent's back are still "
                "caught by the hash check before every write.",
                why,
            )


# inotify(7) constants
_IN_MODIFY = 0x2
_IN_CLOSE_WRITE = 0x8
_IN_MOVED_FROM = 0x40
_IN_MOVED_TO = 0x80
_IN_CREATE = 0x100
_IN_DELETE = 0x200
_IN_Q_OVERFLOW = 0x4000
_IN_IGNORED = 0x8000
_IN_ONLYDIR = 0x01000000
_IN_DONT_FOLLOW = 0x02000000
_IN_ISDIR = 0x40000000
_WATCH_MASK = (
    _IN_MODIFY
    | _IN_CLOSE_WRITE
    | _IN_MOVED_FROM
    | _IN_MOVED_TO
    | _IN_CREATE
    | _IN_DELETE
    | _IN_ONLYDIR
    | _IN_DONT_FOLLOW
)
_EVENT = struct.Struct("iIII")
#: Seconds between the first event of a burst and reading the burst.
_BATCH_DELAY = 0.005


class _Inotify(_Backend):
    """Linux inotify, read by the event loop (see the module docstring)."""

    def __init__(
        self,
        loop: asyncio.AbstractEventLoop,
        on_change: ChangeCallback,
        libc: Any,
        fd: int,
    ) -> None:
        super().__init__()
        self._loop = loop
        self._on_change = on_change
        self._libc = libc
        self._fd = fd
        #: watch descriptor -> folder path (bytes)
        self._dirs: dict[int, bytes] = {}
        #: device -> whether its folders' link counts tell how many subfolders they have
        self._links_tell: dict[int, bool] = {}
        self._overflowed = False
        self._closed = False
        loop.add_reader(fd, self._readable)

    @classmethod
    def create(cls, loop: asyncio.AbstractEventLoop, on_change: ChangeCallback) -> _Inotify | None:
        opened = native.inotify()  # None where the system has no inotify (not Linux)
        if opened is None:
            return None
        libc, fd = opened
        try:
            return cls(loop, on_change, libc, fd)
        except (OSError, NotImplementedError, RuntimeError):
            os.close(fd)
            return None

    def _schedule(self, roots: list[str]) -> None:
        for root in roots:
            if not self._add_tree(os.fsencode(root)):
                return
        log.info("watching %s (%d folders)", ", ".join(roots), len(self._dirs))

    def folders(self) -> int | None:
        return len(self._dirs)

    def _add_tree(self, top: bytes) -> bool:
        """Watch ``top`` and every folder under it (links not followed); False when the
        OS refuses more watches.

        A folder whose link count says it has no subfolders is not listed, on a file
        system seen to keep that count (:func:`links_tell`): most folders of a big tree
        are such leaves, and listing them was two thirds of the set-up. A subfolder made
        after its parent is watched is reported and watched by the event handler."""
        stack = [top]
        while stack:
            folder = stack.pop()
            wd = int(self._libc.inotify_add_watch(self._fd, folder, _WATCH_MASK))
            if wd < 0:
                err = ctypes.get_errno()
                if err == errno.ENOSPC:
                    self._fail("the OS allows no more watches (raise fs.inotify.max_user_watches)")
                    return False
                continue  # gone meanwhile, or not readable: nothing to watch there
            self._dirs[wd] = folder
            try:
                st = os.stat(folder, follow_symlinks=False)
                known = self._links_tell.get(st.st_dev)
                if known and st.st_nlink == 2:
                    continue  # no subfolders
                with os.scandir(folder) as it:
                    subs = [e.path for e in it if e.is_dir(follow_symlinks=False)]
            except OSError:
                continue
            if known is None:
                verdict = links_tell(st.st_nlink, len(subs))
                if verdict is not None:
                    self._links_tell[st.st_dev] = verdict
            stack.extend(subs)
        return True

    def _add_new_tree(self, top: bytes) -> None:
        """Watch a folder that appeared, then have what is tracked under it checked once
        more: files written into it before its watch was in place made no event."""
        if self._add_tree(top) and not self._closed:
            with contextlib.suppress(RuntimeError):  # the loop closed meanwhile
                self._loop.call_soon_threadsafe(self._folder_again, os.fsdecode(top))

    def _folder_again(self, folder: str) -> None:
        if self.enabled and not self._closed:
            try:
                self._on_change(folder, "folder")
            except Exception:
                log.exception("could not check the files under %s", folder)

    def _forget_tree(self, top: bytes) -> None:
        """Stop watching ``top`` and the folders under it (moved away: their watches
        follow them, under names that are no longer theirs)."""
        under = top + b"/"
        for wd, folder in list(self._dirs.items()):
            if folder == top or folder.startswith(under):
                self._libc.inotify_rm_watch(self._fd, wd)
                self._dirs.pop(wd, None)

    def _readable(self) -> None:
        # Events come in bursts (a write makes five or six): read them a moment later,
        # all at once, after the answer in progress has gone out.
        self._loop.remove_reader(self._fd)
        self._loop.call_later(_BATCH_DELAY, self._read)

    def _read(self) -> None:
        if self._closed:
            return
        try:
            self._read_all()
        finally:
            if not self._closed:
                self._loop.add_reader(self._fd, self._readable)

    def _read_all(self) -> None:
        changes: dict[str, str] = {}
        while True:
            try:
                data = os.read(self._fd, 1 << 16)
            except (BlockingIOError, InterruptedError):
                break
            except OSError:
                return
            if not data:
                break
            self._parse(data, changes)
        if not self.enabled:
            return
        for path, kind in changes.items():
            try:
                self._on_change(path, kind)
            except Exception:  # one bad path must not stop the watching
                log.exception("could not handle a change to %s", path)

    def _parse(self, data: bytes, changes: dict[str, str]) -> None:
        off = 0
        while off + _EVENT.size <= len(data):
            wd, mask, _, length = _EVENT.unpack_from(data, off)
            name = data[off + _EVENT.size : off + _EVENT.size + length].rstrip(b"\0")
            off += _EVENT.size + length
            if mask & _IN_Q_OVERFLOW:
                if not self._overflowed:
                    self._overflowed = True
                    log.warning(
                        "file watching missed events (the queue overflowed); every tracked "
                        "file is checked again"
                    )
                for root in sorted(self.watched):  # what changed is unknown: all of it
                    changes.pop(root, None)
                    changes[root] = "folder"
                continue
            if mask & _IN_IGNORED:
                self._dirs.pop(wd, None)
                continue
            folder = self._dirs.get(wd)
            if folder is None or not name:
                continue
            full = folder + b"/" + name
            if _unnamed(full, name, mask):
                continue
            if mask & _IN_ISDIR:
                if mask & (_IN_CREATE | _IN_MOVED_TO):
                    # a new folder: watch it (and what it holds) off the event loop
                    threading.Thread(target=self._add_new_tree, args=(full,), daemon=True).start()
                elif mask & _IN_MOVED_FROM:
                    self._forget_tree(full)  # its watches would report it under this name
                # files under it may be tracked: renamed away, deleted, or swapped
                folder_path = os.fsdecode(full)
                changes.pop(folder_path, None)
                changes[folder_path] = "folder"
                continue
            path = os.fsdecode(full)
            if is_temp_name(path):
                continue
            if mask & _IN_DELETE:
                kind = "deleted"
            elif mask & _IN_MOVED_FROM:
                kind = "moved"
            elif mask & (_IN_CREATE | _IN_MOVED_TO):
                kind = "created"
            else:
                kind = "modified"
            changes.pop(path, None)  # the latest event of a path decides, in order
            changes[path] = kind

    def stop(self) -> None:
        self._closed = True
        with contextlib.suppress(Exception):
            self._loop.remove_reader(self._fd)
        with contextlib.suppress(OSError):
            os.close(self._fd)


class _Watchdog(_Backend):
    """watchdog's recursive observer, on its own threads (platforms without inotify)."""

    def __init__(self, loop: asyncio.AbstractEventLoop, on_change: ChangeCallback) -> None:
        super().__init__()
        self._loop = loop
        self._on_change = on_change
        self._observer: Any = None

    def _schedule(self, roots: list[str]) -> None:
        try:
            from watchdog import events
            from watchdog.observers import Observer
        except ImportError:  # pragma: no cover - watchdog is a dependency
            self._fail("watchdog is not installed")
            return

        watcher = self

        class Handler(events.FileSystemEventHandler):
            def on_any_event(self, event: events.FileSystemEvent) -> None:
                watcher.on_event(event)

        wanted: list[type[events.FileSystemEvent]] = [
            events.FileModifiedEvent,
            events.FileClosedEvent,
            events.FileCreatedEvent,
            events.FileDeletedEvent,
            events.FileMovedEvent,
            events.DirCreatedEvent,
            events.DirDeletedEvent,
            events.DirMovedEvent,
        ]
        lost = getattr(events, "EventsLostEvent", None)  # watchdog 7
        if lost is not None:
            wanted.append(lost)
        try:
            with self._lock:
                if self._observer is None:
                    obs = Observer()
                    obs.daemon = True
                    obs.start()
                    self._observer = obs
                obs = self._observer
            for root in roots:
                obs.schedule(Handler(), root, recursive=True, event_filter=wanted)
            log.info("watching %s", ", ".join(roots))
        except OSError as exc:
            self._fail(f"{exc} (raise fs.inotify.max_user_watches to watch large trees)")

    def on_event(self, event: Any) -> None:
        """One watchdog event, as the changes it means: a file's ``modified``,
        ``created``, ``deleted`` or ``moved`` (its new name ``created``); ``folder`` for
        a folder made, removed or renamed (whatever is tracked under it is checked
        again), and for every watched root when events were lost (an overflow of
        ``ReadDirectoryChangesW``'s buffer, of inotify's queue). FSEvents coalesces
        events of one file: any event on a path has it checked again, which is all a
        coalesced event needs. A rename that changes only the case of a name is a move
        like any other: the old spelling's records go, the new one is looked at."""
        kind_of = {
            "modified": "modified",
            "closed": "modified",
            "created": "created",
            "deleted": "deleted",
            "moved": "moved",
        }
        what = getattr(event, "event_type", "")
        if type(event).__name__ == "EventsLostEvent":
            for root in sorted(self.watched):
                self._emit(root, "folder")
            return
        if event.is_directory:
            if what in ("created", "deleted", "moved"):
                self._emit(os.fsdecode(event.src_path), "folder")
                if what == "moved":
                    self._emit(os.fsdecode(event.dest_path), "folder")
            return
        kind = kind_of.get(what)
        if kind is None:
            return
        src = os.fsdecode(event.src_path)
        if not is_temp_name(src):
            self._emit(src, kind)
        if kind == "moved":
            dest = os.fsdecode(event.dest_path)
            if not is_temp_name(dest):
                self._emit(dest, "created")

    def backend(self) -> str:
        obs = self._observer
        return f"watchdog {type(obs).__name__}" if obs is not None else "watchdog"

    def _emit(self, path: str, kind: str) -> None:
        if not self.enabled:
            return
        # a closed loop means the server is shutting down
        with contextlib.suppress(RuntimeError):
            self._loop.call_soon_threadsafe(self._on_change, path, kind)

    def stop(self) -> None:
        obs = self._observer
        if obs is not None:
            obs.stop()

"""Files changed behind the agent's back: what the watcher or the client's file events
report is checked against what the agents were shown, and the agents are told.

Never reads a large file whole here: above :data:`WATCH_HASH_MAX_BYTES` a change is
decided from the file's size and time (every write still hashes the content before it
replaces anything). A file open in the editor keeps its buffer as the agent's view; the
editor world (:meth:`EditorWorld.disk_news`) decides whether its disk moved. Steadyhand's
own writes are told apart by the record the disk layer keeps of them
(:mod:`steadyhand.apply.own_writes`).
"""

from __future__ import annotations

import asyncio
import logging
import os
import stat
import time
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from steadyhand.apply.editor import EditorWorld
from steadyhand.apply.own_writes import OwnWrites
from steadyhand.context import ToolContext
from steadyhand.documents.open_docs import OpenDocuments
from steadyhand.fs.reader import read_all
from steadyhand.paths.spelling import canonical
from steadyhand.protocol import commands
from steadyhand.protocol.errors import ErrorCode, ToolError
from steadyhand.state.hashing import content_hash

log = logging.getLogger("steadyhand")


class ExternalChanges:
    """Checks reported changes against the agents' records, and tells them."""

    def __init__(
        self,
        ctx: ToolContext,
        editor: EditorWorld,
        own: OwnWrites,
        docs: OpenDocuments,
        buffer_text: Callable[[str], str],
        notify: Callable[[str, Any], None],
    ) -> None:
        self.ctx = ctx
        self.editor = editor
        #: what Steadyhand itself wrote: never a change behind the agent's back
        self.own = own
        self.docs = docs
        #: the open buffer's text, by URI
        self.buffer_text = buffer_text
        #: sends a notification to the client
        self.notify = notify
        #: folders reported by the watcher, waiting for :meth:`_check_folders`
        self._changed_folders: set[str] = set()

    def _check_folders(self) -> None:
        """Check every tracked file under the folders reported since the last pass: one
        walk over what is tracked, however many folders a checkout or an install made.
        The walk and the checks run a few milliseconds per turn of the event loop, so
        requests are answered in between (each tool checks its file's hash itself)."""
        folders, self._changed_folders = self._changed_folders, set()
        self._recheck(_tracked_under(sorted(self.ctx.sessions.tracked_paths()), folders))

    def _recheck(self, paths: Iterator[str | None]) -> None:
        stop = time.perf_counter() + RECHECK_SLICE_S
        for path in paths:
            if path is not None:
                self.changed(path, "modified")
            if time.perf_counter() >= stop:
                asyncio.get_running_loop().call_soon(self._recheck, paths)
                return

    def changed(self, path: str, kind: str) -> None:
        """A file changed on disk, seen by the watcher or the client's file events
        (``kind`` "folder": a folder appeared, went or was renamed; every tracked file
        under it is checked).

        Never reads a large file whole here: above :data:`WATCH_HASH_MAX_BYTES` the notice
        is decided from the file's size and time (every write still hashes the content
        before it replaces anything)."""
        if kind == "folder":  # checked together with the others of the moment
            self._changed_folders.add(path.rstrip("/") or "/")
            if len(self._changed_folders) == 1:
                asyncio.get_running_loop().call_later(FOLDER_SETTLE_S, self._check_folders)
            return
        if self.own.as_written(path):  # checked first: the watcher's paths are real already
            return
        real = canonical(os.path.realpath(path))
        # The name as reported may no longer be the file's spelling (a rename that changed
        # only its case, on a volume that ignores case): the records under the old
        # spelling are of a name that is gone.
        if (
            real != path
            and kind in ("moved", "deleted")
            and self.ctx.sessions.mark_changed(path, None)
        ):
            self._notify_changed(path, "deleted", True)
        records = self.ctx.sessions.records(real)
        if not records:
            return
        if real != path and self.own.as_written(real):
            return
        uri = self.docs.uri_for(real)
        if uri is not None:
            self._changed_behind_buffer(real, uri, kind)
            return
        if all(rec.stale for rec in records):
            return  # reported already, and nothing to mark: no need to look at the file
        now, gone, big = _disk_now(real, links_ok=self.ctx.roots.allow_hard_links)
        if self.own.written_by_us(real, now, gone):
            return  # Steadyhand's own write or deletion
        if self.ctx.sessions.mark_changed(real, now, disk_stat=big):
            self._notify_changed(real, kind, gone)

    def _changed_behind_buffer(self, real: str, uri: str, kind: str) -> None:
        """The disk of a file open in the editor changed. The buffer stays the agent's
        view (its records are not marked), but the disk differs from what the buffer was
        last seen to hold: the agent is told once per new disk content, and records of
        the disk's text are marked."""
        _, _, big = _disk_now(real, read=False, links_ok=self.ctx.roots.allow_hard_links)
        if big is not None:
            # too large to compare with the buffer here (saving the buffer over it is
            # checked): only the agent's records of the disk's text are judged, by stat
            if self.ctx.sessions.mark_changed(real, None, disk_stat=big, buffers=False):
                self._notify_changed(real, kind, False, open_in_editor=True)
            return
        news = self.editor.disk_news(real, self.buffer_text(uri))
        if news is None:
            return
        now, gone = news
        self.ctx.sessions.mark_changed(real, now, buffers=False)
        self._notify_changed(real, kind, gone, open_in_editor=True)

    def _notify_changed(
        self, real: str, kind: str, gone: bool, *, open_in_editor: bool = False
    ) -> None:
        if gone:
            kind = "deleted"
        elif kind in ("created", "deleted", "moved"):
            # the path holds new content (another program's atomic save: a temp file
            # renamed over it); it was tracked, so it existed before
            kind = "modified"
        params: dict[str, Any] = {"path": real, "kind": kind}
        if open_in_editor:
            params["open"] = True
        log.info("%s changed behind the agent's back (%s)", real, kind)
        self.notify(commands.FILE_CHANGED, params)


def _disk_now(
    path: str, *, read: bool = True, links_ok: bool = False
) -> tuple[str | None, bool, tuple[int, int] | None]:
    """The hash of ``path``'s bytes (None: gone, unreadable, too large to hash here, or
    not ``read``), whether it is gone, and for a file larger than
    :data:`WATCH_HASH_MAX_BYTES` its (size, mtime_ns) instead of a hash. Whatever is at
    the path now (a FIFO, a device, a link, a file with a second name elsewhere: each
    may have replaced the file) is looked at by ``lstat`` and opened only once checked
    on its descriptor to be a regular file that may be read (``links_ok``: the
    ``allowHardLinks`` setting), so nothing else is ever opened."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return None, True, None
    except OSError:
        return None, False, None
    if stat.S_ISREG(st.st_mode) and st.st_size > WATCH_HASH_MAX_BYTES:
        return None, False, (st.st_size, st.st_mtime_ns)
    if not read:
        return None, False, None
    try:
        # never blocks, never follows a link swapped in, never opens a FIFO put there
        return content_hash(read_all(path, links_ok=links_ok).data), False, None
    except ToolError as err:
        return None, err.code == ErrorCode.NOT_FOUND, None


def _tracked_under(tracked: Iterable[str], folders: set[str]) -> Iterator[str | None]:
    """The paths of ``tracked`` that lie under one of ``folders``, in order; None now and
    then between them, so the caller can look at the clock during a long walk."""
    for n, path in enumerate(tracked, 1):
        parent = os.path.dirname(path)
        while True:
            if parent in folders:
                yield path
                break
            up = os.path.dirname(parent)
            if up == parent:
                if not n % 256:
                    yield None
                break
            parent = up


#: Largest file the watcher's notice reads and hashes; a larger one is judged by its size
#: and time (the ranged-read threshold is far below this).
WATCH_HASH_MAX_BYTES = 4 << 20

#: Longest stretch of the event loop's time one turn of a folder recheck takes.
RECHECK_SLICE_S = 0.005

#: Seconds to gather folder events (a checkout makes many at once) before checking the
#: tracked files under them.
FOLDER_SETTLE_S = 0.05

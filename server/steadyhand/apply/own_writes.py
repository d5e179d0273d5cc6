"""What Steadyhand itself last wrote to, or deleted from, each path: so that the watcher's
report of its own write is not taken for a change behind the agent's back.

The disk layer (:class:`~steadyhand.apply.disk.DiskWorld`) notes every write and deletion
it makes, and the editor layer the deletions it asks the editor for; the judge of
reported changes (:mod:`steadyhand.watch.external`) asks :meth:`OwnWrites.as_written`
and :meth:`OwnWrites.written_by_us`.
"""

from __future__ import annotations

import os

#: Marks a path Steadyhand itself deleted.
DELETED = ""


class OwnWrites:
    """Per path, the content hash Steadyhand last wrote there (or :data:`DELETED`), and
    the size and time that write left."""

    def __init__(self) -> None:
        #: path -> hash the server itself last wrote to disk (not an external change)
        self._hashes: dict[str, str] = {}
        #: path -> (size, mtime_ns) of that write, to recognise it without re-reading
        self._stats: dict[str, tuple[int, int]] = {}

    def wrote(self, path: str, digest: str, size: int, mtime_ns: int) -> None:
        """Steadyhand wrote bytes hashed ``digest`` to ``path``, leaving this size and
        time."""
        self._hashes[path] = digest
        self._stats[path] = (size, mtime_ns)

    def deleting(self, path: str) -> None:
        """Steadyhand is about to delete ``path`` (noted before, so the file seen
        meanwhile does not make it forget)."""
        self._hashes[path] = DELETED

    def not_deleted(self, path: str) -> None:
        """A deletion that did not happen: a later one by someone else is reported."""
        if self._hashes.get(path) == DELETED:
            del self._hashes[path]

    def written_by_us(self, path: str, now: str | None, gone: bool) -> bool:
        """Whether the disk holding ``now`` (a content hash; ``gone``: no file) is
        Steadyhand's own last write or deletion of ``path``. Once the disk is seen
        holding anything else, a write is forgotten: another program bringing the same
        text back later is a change like any other. (A deletion is noted before the
        editor carries it out, so the file seen meanwhile does not forget it.)"""
        own = self._hashes.get(path)
        if own is None:
            return False
        if now == own or (gone and own == DELETED):
            return True
        if own != DELETED and (now is not None or gone):
            del self._hashes[path]
            self._stats.pop(path, None)
        return False

    def as_written(self, path: str) -> bool:
        """Whether ``path`` has exactly the size and time Steadyhand's own write left."""
        written = self._stats.get(path)
        if written is None:
            return False
        try:
            st = os.stat(path)
        except OSError:
            return False
        return (st.st_size, st.st_mtime_ns) == written

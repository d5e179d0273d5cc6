"""The read kernel: what a session saw of a file before this read, and the record a read
leaves.

Every read (lines of a text, a window of a large file, an outline, notebook cells, an
image, PDF pages) keeps one rule, so that read-before-write and staleness hold for all
of them:

1. The session's record of the file counts as *seen before* only while the content is
   the one it recorded: judged on the snapshot's hashes (:func:`seen_text`), or, for
   bytes read without being decoded as a whole, on their hash (:func:`seen_bytes`).
2. The same part of content seen before, read again, is not repeated
   (:meth:`Seen.again`: the answer is ``file_unchanged``).
3. What this read shows is merged with what was shown before of that content, never of
   other content (:meth:`Seen.shown`).
4. The record goes into the session (:meth:`Seen.store`, :meth:`Seen.store_text` with the
   text kept for a later ``stale`` diff).
"""

from __future__ import annotations

from dataclasses import dataclass

from steadyhand.context import ToolContext
from steadyhand.documents.snapshot import Snapshot
from steadyhand.state.file_state import FileRecord, Range, Session, merge_ranges
from steadyhand.state.staleness import is_stale
from steadyhand.tools.records import record_for, remember

#: What a read asked for, ``(offset, limit)`` (or the first and last page): the same key
#: on unchanged content is the same read.
ReadKey = tuple[int | None, int | None]


@dataclass(frozen=True, slots=True)
class Seen:
    """A session's record of one file, judged against the content this read found."""

    ctx: ToolContext
    session: Session
    #: The session's record of the file, if it has one.
    prev: FileRecord | None
    #: Whether that record is of this very content.
    same: bool

    def again(self, key: ReadKey) -> bool:
        """Whether this read asks for what the session last read of this content, not
        marked stale since: answered ``file_unchanged`` instead of being repeated."""
        prev = self.prev
        return self.same and prev is not None and not prev.stale and prev.last_read == key

    def shown(self, *ranges: Range) -> tuple[Range, ...]:
        """What the session has seen of this content once this read shows ``ranges``."""
        out = self.prev.shown if self.same and self.prev is not None else ()
        for r in ranges:
            out = merge_ranges(out, r)
        return out

    def store(self, rec: FileRecord) -> None:
        """Put the read's record into the session."""
        self.session.put(rec)

    def store_text(
        self,
        snap: Snapshot,
        shown: tuple[Range, ...],
        key: ReadKey | None,
        *,
        total: int | None = None,
    ) -> None:
        """Put the record of the text ``snap`` into the session, its text kept in the
        content store (for a later ``stale`` refusal's diff); ``total``: the record's
        unit count when it is not lines (a notebook counts cells)."""
        rec = record_for(snap, shown, key, remember(self.ctx, snap))
        self.session.put(rec if total is None else rec.replace(total_lines=total))


def seen_text(ctx: ToolContext, session: str, snap: Snapshot) -> Seen:
    """The session's record of ``snap``'s file, the same while its hashes say the
    content is unchanged (:func:`~steadyhand.state.staleness.is_stale`)."""
    s = ctx.sessions.get(session)
    prev = s.get(snap.path)
    return Seen(ctx, s, prev, prev is not None and not is_stale(prev, snap))


def seen_bytes(ctx: ToolContext, session: str, path: str, digest: str) -> Seen:
    """The session's record of the file at ``path``, read from disk as bytes hashed
    ``digest``: the same while it records those very bytes."""
    s = ctx.sessions.get(session)
    prev = s.get(path)
    return Seen(ctx, s, prev, prev is not None and prev.source == "disk" and prev.hash == digest)


def disk_record(
    path: str,
    digest: str,
    size: int,
    mtime_ns: int,
    *,
    encoding: str,
    line_ending: str,
    total: int,
    shown: tuple[Range, ...],
    key: ReadKey | None,
) -> FileRecord:
    """The record of disk bytes hashed ``digest`` that were not decoded as a whole (a
    large file's window or outline, an image, a PDF): their hash stands for the text's."""
    return FileRecord(
        path=path,
        hash=digest,
        view_hash=digest,
        source="disk",
        mtime_ns=mtime_ns,
        size=size,
        encoding=encoding,
        line_ending=line_ending,
        total_lines=total,
        shown=shown,
        last_read=key,
    )

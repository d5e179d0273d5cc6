"""The file-state cache: per session, what the agent has seen of each file.

A :class:`FileRecord` is small (a hash, a few numbers, the line ranges shown); the text
itself lives in the shared :class:`~steadyhand.state.content_store.ContentStore`. A
session is a bounded LRU of records, so forking one for a sub-agent is a shallow copy.
"""

from __future__ import annotations

import dataclasses
from collections import OrderedDict
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Literal

Source = Literal["disk", "buffer"]
Range = tuple[int, int]  # 1-based, inclusive line numbers


def merge_ranges(ranges: tuple[Range, ...], new: Range) -> tuple[Range, ...]:
    """The union of ``ranges`` and ``new``, sorted, with touching ranges joined."""
    items = sorted([*ranges, new])
    out: list[Range] = []
    for lo, hi in items:
        if out and lo <= out[-1][1] + 1:
            out[-1] = (out[-1][0], max(out[-1][1], hi))
        else:
            out.append((lo, hi))
    return tuple(out)


def covers(ranges: tuple[Range, ...], lo: int, hi: int) -> bool:
    return any(a <= lo and hi <= b for a, b in ranges)


def missing_lines(ranges: tuple[Range, ...], lo: int, hi: int) -> Range | None:
    """The first stretch of ``lo..hi`` not inside ``ranges``, if any."""
    pos = lo
    for a, b in sorted(ranges):
        if b < pos:
            continue
        if a > pos:
            return (pos, min(hi, a - 1))
        pos = b + 1
        if pos > hi:
            return None
    return (pos, hi) if pos <= hi else None


def shift_ranges(
    ranges: tuple[Range, ...], first: int, last_old: int, last_new: int
) -> tuple[Range, ...]:
    """Ranges after lines ``first..last_old`` became ``first..last_new``; the edited
    lines count as shown (the agent wrote them)."""
    delta = last_new - last_old
    out: tuple[Range, ...] = ()
    for a, b in ranges:
        if b < first:
            out = merge_ranges(out, (a, b))
        elif a > last_old:
            out = merge_ranges(out, (a + delta, b + delta))
        else:
            lo = min(a, first)
            hi = max(last_new, b + delta if b > last_old else last_new)
            out = merge_ranges(out, (lo, hi))
    if last_new >= first:
        out = merge_ranges(out, (first, last_new))
    return out


@dataclass(frozen=True, slots=True)
class FileRecord:
    """What one session knows about one file."""

    path: str
    #: xxh3-128 of the exact content as stored at its source (disk bytes or buffer text).
    hash: str
    #: xxh3-128 of the model-visible text (LF line endings): compares across sources.
    view_hash: str
    source: Source
    mtime_ns: int
    size: int
    encoding: str
    line_ending: str
    total_lines: int
    #: Line ranges the agent was shown (union), 1-based inclusive.
    shown: tuple[Range, ...]
    #: (offset, limit) of the last read, for serving ``file_unchanged``; None after a change.
    last_read: tuple[int | None, int | None] | None = None
    #: Document version the content had, for open documents.
    version: int | None = None
    #: Set when a watcher saw the file change behind the agent's back.
    stale: bool = False

    @property
    def full_view(self) -> bool:
        if self.total_lines == 0:
            return bool(self.shown) or self.last_read is not None or self.size == 0
        return covers(self.shown, 1, self.total_lines)

    def replace(self, **changes: object) -> FileRecord:
        return dataclasses.replace(self, **changes)  # type: ignore[arg-type]


class Session:
    """One agent's file-state cache: an LRU of :class:`FileRecord` keyed by real path."""

    def __init__(self, name: str, max_files: int, *, read_only: bool = False) -> None:
        self.name = name
        self.max_files = max_files
        self.read_only = read_only
        self._records: OrderedDict[str, FileRecord] = OrderedDict()

    def __len__(self) -> int:
        return len(self._records)

    def __iter__(self) -> Iterator[FileRecord]:
        return iter(list(self._records.values()))

    def get(self, path: str) -> FileRecord | None:
        rec = self._records.get(path)
        if rec is not None:
            self._records.move_to_end(path)
        return rec

    def put(self, record: FileRecord) -> None:
        self._records[record.path] = record
        self._records.move_to_end(record.path)
        while len(self._records) > self.max_files:
            self._records.popitem(last=False)

    def drop(self, path: str) -> None:
        self._records.pop(path, None)

    def fork(self, name: str, *, read_only: bool = False) -> Session:
        child = Session(name, self.max_files, read_only=read_only)
        child._records = OrderedDict(self._records)  # records are immutable: share them
        return child


class SessionRegistry:
    """All sessions of one server, created on first use."""

    def __init__(self, max_files: int) -> None:
        self.max_files = max_files
        self._sessions: dict[str, Session] = {}

    def get(self, name: str) -> Session:
        s = self._sessions.get(name)
        if s is None:
            s = self._sessions[name] = Session(name, self.max_files)
        return s

    def exists(self, name: str) -> bool:
        return name in self._sessions

    def fork(self, name: str, parent: str, *, read_only: bool = False) -> Session:
        child = self.get(parent).fork(name, read_only=read_only)
        self._sessions[name] = child
        return child

    def close(self, name: str) -> int:
        s = self._sessions.pop(name, None)
        return len(s) if s is not None else 0

    def __iter__(self) -> Iterator[Session]:
        return iter(list(self._sessions.values()))

    def mark_stale(self, path: str) -> int:
        """Mark every session's record of ``path`` stale; returns how many were marked."""
        n = 0
        for s in self._sessions.values():
            rec = s._records.get(path)
            if rec is not None and not rec.stale:
                s._records[path] = rec.replace(stale=True, last_read=None)
                n += 1
        return n

    def mark_changed(self, path: str, disk_hash: str | None) -> int:
        """Mark stale the disk records of ``path`` whose hash differs from ``disk_hash``
        (None: the file is gone). Returns how many records were marked."""
        n = 0
        for s in self._sessions.values():
            rec = s._records.get(path)
            if rec is None or rec.stale:
                continue
            if disk_hash is not None and rec.source == "disk" and rec.hash == disk_hash:
                continue
            s._records[path] = rec.replace(stale=True, last_read=None)
            n += 1
        return n

    def is_tracked(self, path: str) -> bool:
        return any(path in s._records for s in self._sessions.values())

    def tracked_paths(self) -> set[str]:
        return {p for s in self._sessions.values() for p in s._records}

"""A snapshot of a file's current content, from the disk or from an open buffer.

The two hashes let staleness compare like with like: ``hash`` is of the exact content at
its source (disk bytes, or buffer text), ``view_hash`` of the model-visible text (LF line
endings), which is what compares across sources (an editor may normalize line endings).
"""

from __future__ import annotations

import dataclasses
import os
import sys
import threading
from dataclasses import dataclass
from functools import cached_property
from typing import Generic, TypeVar

from steadyhand.fs.reader import RawFile, decode_or_refuse, read_all
from steadyhand.state.file_state import Source
from steadyhand.state.hashing import content_hash, text_hash
from steadyhand.text.encoding import UTF8, Encoding
from steadyhand.text.lines import EndingStats, NewlineMap, ending_stats, split_lines, to_view

T = TypeVar("T")


@dataclass(frozen=True)
class Snapshot:
    path: str
    source: Source
    raw: str  # decoded text with the file's own line endings
    encoding: Encoding
    hash: str
    size: int
    mtime_ns: int
    version: int | None = None
    #: For buffers: whether the buffer differs from the disk (``None`` when unknown).
    unsaved: bool | None = None

    @cached_property
    def view(self) -> str:
        return to_view(self.raw)

    @cached_property
    def view_hash(self) -> str:
        same_bytes = self.source == "buffer" or self.encoding == UTF8
        return self.hash if self.view is self.raw and same_bytes else text_hash(self.view)

    @cached_property
    def lines(self) -> list[str]:
        return split_lines(self.view)

    @cached_property
    def endings(self) -> EndingStats:
        key = content_key(self)
        stats = _ENDINGS.get(key)
        if stats is None:
            stats = ending_stats(self.raw)
            _ENDINGS.put(key, stats)
        return stats

    @cached_property
    def newline_map(self) -> NewlineMap:
        return NewlineMap(self.raw)


ContentKey = tuple[str, str, str]


def content_key(snap: Snapshot) -> ContentKey:
    """What identifies a snapshot's text: the same key, the same text."""
    return (snap.source, snap.hash, snap.encoding.label)


class ByContent(Generic[T]):
    """Something worked out about texts, kept by content key for the texts seen last:
    every change reads its file afresh, and the text it finds is usually one seen just
    before. The oldest entries go first."""

    def __init__(self, most: int = 256) -> None:
        self.most = most
        self._items: dict[ContentKey, T] = {}

    def get(self, key: ContentKey) -> T | None:
        return self._items.get(key)

    def put(self, key: ContentKey, value: T) -> None:
        items = self._items
        items.pop(key, None)
        items[key] = value
        if len(items) > self.most:
            del items[next(iter(items))]


#: Line-ending counts: counting the line breaks of a 650 KB text takes some 0.17 ms.
_ENDINGS: ByContent[EndingStats] = ByContent()


def prime_endings(snap: Snapshot, stats: EndingStats) -> None:
    """Give ``snap`` line-ending counts worked out elsewhere (from a known change)."""
    snap.__dict__.setdefault("endings", stats)
    _ENDINGS.put(content_key(snap), snap.__dict__["endings"])


def from_disk(path: str) -> Snapshot:
    raw = read_all(path)
    snap = from_raw(path, raw)
    note_on_disk(snap, raw.st)
    return snap


# -- the content last seen on disk ---------------------------------------------------

Identity = tuple[int, int, int, int]


class _Latest:
    """The disk snapshot of each path read or written lately, with the file's identity
    (device, inode, size, modification time) at that moment; the oldest go first.

    Bounded by count and by the memory of the texts kept. A kept snapshot is a bare copy:
    what was worked out from its text (its lines, say) is not kept with it."""

    def __init__(self, most: int = 16, budget: int = 8 << 20) -> None:
        self.most = most
        self.budget = budget
        self._items: dict[str, tuple[Identity, Snapshot, int]] = {}
        self._total = 0
        self._lock = threading.Lock()

    def put(self, snap: Snapshot, st: os.stat_result) -> None:
        ident = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)
        cost = sys.getsizeof(snap.raw)
        with self._lock:
            self._drop(snap.path)
            if cost > self.budget:
                return
            self._items[snap.path] = (ident, _bare(snap), cost)
            self._total += cost
            while len(self._items) > self.most or self._total > self.budget:
                self._drop(next(iter(self._items)))

    def get(self, path: str) -> tuple[Identity, Snapshot] | None:
        """The identity and a bare copy of the snapshot kept for ``path``: what a caller
        works out from the copy stays with the caller."""
        entry = self._items.get(path)
        return None if entry is None else (entry[0], _bare(entry[1]))

    def forget(self, path: str) -> None:
        with self._lock:
            self._drop(path)

    def _drop(self, path: str) -> None:
        old = self._items.pop(path, None)
        if old is not None:
            self._total -= old[2]


def _bare(snap: Snapshot) -> Snapshot:
    """A copy of ``snap`` without what was worked out from its text, except its view when
    that is the text itself (no CR in it: nothing to keep, and nothing to search again)."""
    copy = dataclasses.replace(snap)
    view = snap.__dict__.get("view")
    if view is snap.raw:
        copy.__dict__["view"] = view
    return copy


_LATEST = _Latest()


def note_on_disk(snap: Snapshot, st: os.stat_result) -> None:
    """Remember ``snap`` as the content of ``snap.path`` while the file keeps the
    identity, size and time in ``st`` (the status of the bytes ``snap`` was made of)."""
    _LATEST.put(snap, st)


def forget_on_disk(path: str) -> None:
    _LATEST.forget(path)


def unchanged_on_disk(path: str, content_hash: str) -> Snapshot | None:
    """The snapshot last read or written at ``path`` if its hash is ``content_hash`` and
    the file still has the device, inode, size and modification time it had then.

    That is evidence, not proof: a write in place of the same length within one tick of
    the file system's clock keeps all four. So a change built on this snapshot must
    reach the disk through a compare-and-swap on ``content_hash`` (``atomic_write``'s
    ``expect``, as every write of a disk snapshot does), which refuses it as ``stale``
    if the bytes differ after all.
    """
    entry = _LATEST.get(path)
    if entry is None or entry[1].hash != content_hash:
        return None
    try:
        st = os.stat(path, follow_symlinks=False)
    except OSError:
        return None
    if (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns) != entry[0]:
        return None
    return entry[1]


def from_raw(path: str, raw: RawFile) -> Snapshot:
    """A snapshot of bytes just read from the disk."""
    text, enc = decode_or_refuse(path, raw.data)
    return Snapshot(
        path=path,
        source="disk",
        raw=text,
        encoding=enc,
        hash=content_hash(raw.data),
        size=raw.st.st_size,
        mtime_ns=raw.st.st_mtime_ns,
    )


def from_text(
    path: str, text: str, st: os.stat_result | None, version: int | None, unsaved: bool | None
) -> Snapshot:
    """A snapshot of an open buffer's text."""
    return Snapshot(
        path=path,
        source="buffer",
        raw=text,
        encoding=UTF8,
        hash=text_hash(text),
        size=len(text),
        mtime_ns=st.st_mtime_ns if st else 0,
        version=version,
        unsaved=unsaved,
    )

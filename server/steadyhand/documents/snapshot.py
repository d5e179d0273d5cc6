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
from steadyhand.text.encoding import UTF8, Encoding, decode_anyway, reads_back
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
    #: For buffers: the hash of the disk's bytes the buffer was compared with (None: not
    #: known, or no file), so a record of those bytes compares with the buffer.
    disk_hash: str | None = None

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


def mixed_view(snap: Snapshot) -> str | None:
    """The view text of a snapshot whose line endings are mixed, else None: what
    ``raw_splices`` takes to keep the endings of lines a change leaves as they were."""
    return snap.view if snap.endings.style == "mixed" else None


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


def from_disk(
    path: str, *, links_ok: bool = False, expect: tuple[int, int] | None = None
) -> Snapshot:
    """The file's content now, checked on its descriptor as :func:`read_all` checks it."""
    return from_raw(path, read_all(path, links_ok=links_ok, expect=expect))


# -- the text last decoded for each path -----------------------------------------------


class _Latest:
    """The disk snapshot of each path read or written lately, the oldest going first;
    bounded by count and by the memory of the texts kept. A kept snapshot is a bare copy
    (:func:`_bare`): what was worked out from its text (its lines, say) is not kept."""

    def __init__(self, most: int = 16, budget: int = 8 << 20) -> None:
        self.most = most
        self.budget = budget
        self._items: dict[str, tuple[Snapshot, int]] = {}
        self._total = 0
        self._lock = threading.Lock()

    def put(self, snap: Snapshot) -> None:
        cost = sys.getsizeof(snap.raw)
        with self._lock:
            self._drop(snap.path)
            if cost > self.budget:
                return
            self._items[snap.path] = (_bare(snap), cost)
            self._total += cost
            while len(self._items) > self.most or self._total > self.budget:
                self._drop(next(iter(self._items)))

    def get(self, path: str) -> Snapshot | None:
        """The snapshot kept for ``path``; hand out only a bare copy of it."""
        entry = self._items.get(path)
        return None if entry is None else entry[0]

    def _drop(self, path: str) -> None:
        old = self._items.pop(path, None)
        if old is not None:
            self._total -= old[1]


def _bare(snap: Snapshot, st: os.stat_result | None = None) -> Snapshot:
    """A copy of ``snap`` (with the size and time in ``st``, if given) without what was
    worked out from its text, except its view when that is the text itself (no CR in it:
    nothing to keep, and nothing to search again)."""
    copy = (
        dataclasses.replace(snap)
        if st is None
        else dataclasses.replace(snap, size=st.st_size, mtime_ns=st.st_mtime_ns)
    )
    view = snap.__dict__.get("view")
    if view is snap.raw:
        copy.__dict__["view"] = view
    return copy


_LATEST = _Latest()


def note_written(snap: Snapshot, data: bytes) -> None:
    """Remember ``snap`` (the text just written as ``data``) for :func:`from_raw`, if
    reading ``data`` back gives exactly its text and encoding (:func:`reads_back`, which
    does not decode them again). It need not: text holding a NUL is written as asked but
    reads back as binary."""
    if reads_back(data, snap.raw, snap.encoding):
        _LATEST.put(snap)


def from_raw(path: str, raw: RawFile) -> Snapshot:
    """A snapshot of bytes just read from the disk.

    Bytes with the hash of the text last decoded or written at ``path`` (see
    :func:`note_written`) are those bytes, so that text is taken instead of decoding them
    again: the file Steadyhand just wrote is read back at every edit. The bytes are
    always read and hashed: content decides.
    """
    digest = content_hash(raw.data)
    known = _LATEST.get(path)
    if known is not None and known.hash == digest:
        return _bare(known, raw.st)
    text, enc = decode_or_refuse(path, raw.data)
    snap = Snapshot(
        path=path,
        source="disk",
        raw=text,
        encoding=enc,
        hash=digest,
        size=raw.st.st_size,
        mtime_ns=raw.st.st_mtime_ns,
    )
    _LATEST.put(snap)
    return snap


def from_raw_anyway(path: str, raw: RawFile) -> Snapshot:
    """A snapshot of bytes that :func:`from_raw` refuses as binary (a NUL, control
    bytes), taken as the text they would be (:func:`decode_anyway`): for a file whose
    bytes are known to be a text Steadyhand wrote itself. Not remembered."""
    text, enc = decode_anyway(raw.data)
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
    path: str,
    text: str,
    st: os.stat_result | None,
    version: int | None,
    unsaved: bool | None,
    *,
    disk_hash: str | None = None,
) -> Snapshot:
    """A snapshot of an open buffer's text (``disk_hash``: of the disk's bytes it was
    compared with)."""
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
        disk_hash=disk_hash,
    )

"""The file-state cache: per session, what the agent has seen of each file.

A :class:`FileRecord` is small (a hash, a few numbers, the line ranges shown, where its
text is kept); the text itself lives in the shared
:class:`~steadyhand.state.content_store.ContentStore`. A session is a bounded LRU of packed
records in a few flat arrays, so forking one for a sub-agent copies those arrays and
nothing else.
"""

from __future__ import annotations

import dataclasses
import json
import secrets
import struct
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Literal

from steadyhand.protocol.commands import DEFAULT_SESSION
from steadyhand.state.packed_table import PackedTable

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
    ranges: tuple[Range, ...], first: int, last_old: int, delta: int, written_last: int
) -> tuple[Range, ...]:
    """Ranges after one change: lines ``first..last_old`` were replaced, lines after them
    moved by ``delta``, and the lines ``first..written_last`` of the new text (none when
    ``written_last < first``) count as shown, since the agent wrote them. Shown lines
    inside the replaced stretch are gone with it; nothing else becomes shown."""
    pieces: list[Range] = []
    for a, b in ranges:
        if a < first:
            pieces.append((a, min(b, first - 1)))
        if b > last_old:
            pieces.append((max(a, last_old + 1) + delta, b + delta))
    if written_last >= first:
        pieces.append((first, written_last))
    pieces.sort()
    out: list[Range] = []
    for lo, hi in pieces:  # joined where they touch, as merge_ranges does
        if out and lo <= out[-1][1] + 1:
            if hi > out[-1][1]:
                out[-1] = (out[-1][0], hi)
        else:
            out.append((lo, hi))
    return tuple(out)


def ranges_through(
    ranges: tuple[Range, ...], runs: Sequence[tuple[int, int, int]]
) -> tuple[Range, ...]:
    """Ranges after a diff whose runs of changed lines are ``runs`` (first old line,
    lines removed, lines added; in order, as :func:`changed_runs` gives them): shown
    lines move with the text, shown lines removed are gone, and the added lines count as
    shown (the diff showed them)."""
    for first, removed, added in reversed(runs):  # from the bottom: the tops stay put
        ranges = shift_ranges(
            ranges, first, first + removed - 1, added - removed, first + added - 1
        )
    return ranges


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
    #: Where the content store keeps the text this record stands for (0: not kept).
    stored: int = 0

    @property
    def full_view(self) -> bool:
        if self.total_lines == 0:
            return bool(self.shown) or self.last_read is not None or self.size == 0
        return covers(self.shown, 1, self.total_lines)

    def replace(self, **changes: object) -> FileRecord:
        return dataclasses.replace(self, **changes)  # type: ignore[arg-type]


# -- packed records ---------------------------------------------------------------------
#
# A session may track many thousands of files, so each record is kept as a few dozen bytes
# (see :mod:`steadyhand.state.packed_table`) and becomes a :class:`FileRecord` again when
# it is looked up. Layout: flags, two small-string indexes, the 16-byte hash, mtime, size
# and line count (32-bit unless the flags say otherwise), then the optional parts the
# flags announce: another view hash, the version, the last read, where the text is kept,
# the shown ranges (unless they are exactly the whole file).

_HEAD = struct.Struct("<HBB16sqII")
_HEAD_WIDE = struct.Struct("<HBB16sqQQ")
_DIGEST = struct.Struct("<16s")
_VERSION = struct.Struct("<q")
_LAST_READ = struct.Struct("<qq")
_STORED = struct.Struct("<Q")
_COUNT = struct.Struct("<I")
_RANGE = struct.Struct("<QQ")

# flag bits
_BUFFER = 1  # the source is an editor buffer
_OWN_VIEW = 2  # the view hash differs from the hash (follows the head)
_WHOLE_SHOWN = 4  # shown is exactly (1, total_lines)
_READ_NONE = 8  # last_read is None
_HAS_VERSION = 16
_STALE = 32
_READ_WHOLE = 64  # last_read is (None, None): a whole-file read
_WIDE = 128  # size and line count take 64 bits each
_HAS_STORED = 256

_WHOLE_READ: tuple[int | None, int | None] = (None, None)
_U32 = 1 << 32
_U64 = 1 << 64

#: Encoding and line-ending labels, each stored once; records keep their index.
_LABELS: list[str] = []
_LABEL_INDEX: dict[str, int] = {}


def _label(text: str) -> int | None:
    i = _LABEL_INDEX.get(text)
    if i is None and len(_LABELS) < 255:
        i = _LABEL_INDEX[text] = len(_LABELS)
        _LABELS.append(text)
    return i


def _digest(hex_hash: str) -> bytes | None:
    if len(hex_hash) != 32:
        return None
    try:
        return bytes.fromhex(hex_hash)
    except ValueError:
        return None


def _opt(value: int | None) -> int:
    return -1 if value is None else value


def pack(rec: FileRecord) -> bytes | None:
    """``rec`` as compact bytes, or None when it does not fit the layout."""
    digest = _digest(rec.hash)
    enc, ending = _label(rec.encoding), _label(rec.line_ending)
    if digest is None or enc is None or ending is None or rec.size < 0 or rec.total_lines < 0:
        return None
    if rec.size >= _U64 or rec.total_lines >= _U64 or not -(1 << 63) <= rec.mtime_ns < 1 << 63:
        return None
    flags = _BUFFER if rec.source == "buffer" else 0
    tail: list[bytes] = []
    if rec.view_hash != rec.hash:
        view = _digest(rec.view_hash)
        if view is None:
            return None
        flags |= _OWN_VIEW
        tail.append(view)
    if rec.version is not None:
        if not -(1 << 63) <= rec.version < 1 << 63:
            return None
        flags |= _HAS_VERSION
        tail.append(_VERSION.pack(rec.version))
    if rec.last_read is None:
        flags |= _READ_NONE
    elif rec.last_read == (None, None):
        flags |= _READ_WHOLE
    else:
        offset, limit = rec.last_read
        if not all(v is None or 0 <= v < 1 << 63 for v in rec.last_read):
            return None
        tail.append(_LAST_READ.pack(_opt(offset), _opt(limit)))
    if rec.stored:
        if not 0 < rec.stored < _U64:
            return None
        flags |= _HAS_STORED
        tail.append(_STORED.pack(rec.stored))
    if rec.stale:
        flags |= _STALE
    if rec.shown == ((1, rec.total_lines),):
        flags |= _WHOLE_SHOWN
    else:
        if any(not (0 <= lo < _U64 and 0 <= hi < _U64) for lo, hi in rec.shown):
            return None
        tail.append(_COUNT.pack(len(rec.shown)))
        tail.extend(_RANGE.pack(lo, hi) for lo, hi in rec.shown)
    head_struct = _HEAD
    if rec.size >= _U32 or rec.total_lines >= _U32:
        flags |= _WIDE
        head_struct = _HEAD_WIDE
    head = head_struct.pack(flags, enc, ending, digest, rec.mtime_ns, rec.size, rec.total_lines)
    return head + b"".join(tail) if tail else head


#: First two bytes of a record kept as JSON because it does not fit the packed layout.
_ODD = b"\xff\xff"


def pack_any(rec: FileRecord) -> bytes:
    """``rec`` packed, or as JSON when its fields do not fit the packed layout."""
    packed = pack(rec)
    if packed is not None:
        return packed
    fields = dataclasses.asdict(rec)
    del fields["path"]
    return _ODD + json.dumps(fields).encode("utf-8", "surrogatepass")


def unpack_any(path: str, data: bytes) -> FileRecord:
    if not data.startswith(_ODD):
        return unpack(path, data)
    fields = json.loads(data[len(_ODD) :].decode("utf-8", "surrogatepass"))
    fields["shown"] = tuple(tuple(r) for r in fields["shown"])
    if fields["last_read"] is not None:
        fields["last_read"] = tuple(fields["last_read"])
    return FileRecord(path=path, **fields)


def unpack(path: str, data: bytes) -> FileRecord:
    flags = data[0] | data[1] << 8
    head = _HEAD_WIDE if flags & _WIDE else _HEAD
    _, enc, ending, digest, mtime_ns, size, total = head.unpack_from(data)
    pos = head.size
    hex_hash = digest.hex()
    view_hash = hex_hash
    if flags & _OWN_VIEW:
        view_hash = _DIGEST.unpack_from(data, pos)[0].hex()
        pos += _DIGEST.size
    version: int | None = None
    if flags & _HAS_VERSION:
        version = _VERSION.unpack_from(data, pos)[0]
        pos += _VERSION.size
    last_read: tuple[int | None, int | None] | None = None
    if flags & _READ_WHOLE:
        last_read = _WHOLE_READ
    elif not flags & _READ_NONE:
        offset, limit = _LAST_READ.unpack_from(data, pos)
        pos += _LAST_READ.size
        last_read = (None if offset < 0 else offset, None if limit < 0 else limit)
    stored = 0
    if flags & _HAS_STORED:
        stored = _STORED.unpack_from(data, pos)[0]
        pos += _STORED.size
    shown: tuple[Range, ...]
    if flags & _WHOLE_SHOWN:
        shown = ((1, total),)
    else:
        (n,) = _COUNT.unpack_from(data, pos)
        pos += _COUNT.size
        shown = tuple(_RANGE.unpack_from(data, pos + k * _RANGE.size) for k in range(n))
    return FileRecord(
        path=path,
        hash=hex_hash,
        view_hash=view_hash,
        source="buffer" if flags & _BUFFER else "disk",
        mtime_ns=mtime_ns,
        size=size,
        encoding=_LABELS[enc],
        line_ending=_LABELS[ending],
        total_lines=total,
        shown=shown,
        last_read=last_read,
        version=version,
        stale=bool(flags & _STALE),
        stored=stored,
    )


class Session:
    """One agent's file-state cache: an LRU of :class:`FileRecord` keyed by real path.

    Records are stored packed (see :func:`pack_any`) in a :class:`PackedTable`, which keeps
    them in use order (a record looked up or stored becomes the most recent; the oldest
    goes first when the session is full).
    """

    def __init__(self, name: str, max_files: int, *, read_only: bool = False) -> None:
        self.name = name
        self.max_files = max_files
        self.read_only = read_only
        self._records = PackedTable()
        #: For a fork: the paths this session read itself. The reads it inherited set what
        #: it may edit, but never make a read of its own answer "unchanged since you last
        #: read it" (it has not seen the text). None: not a fork.
        self._own_reads: set[str] | None = None

    def __len__(self) -> int:
        return len(self._records)

    def __iter__(self) -> Iterator[FileRecord]:
        return iter([unpack_any(p, d) for p, d in self._records.items()])

    def __contains__(self, path: str) -> bool:
        return path in self._records

    def paths(self) -> list[str]:
        return [p for p, _ in self._records.items()]

    def peek(self, path: str) -> FileRecord | None:
        """The record of ``path`` without counting it as used."""
        data = self._records.get(path, touch=False)
        return None if data is None else self._own(unpack_any(path, data))

    def get(self, path: str) -> FileRecord | None:
        data = self._records.get(path)
        return None if data is None else self._own(unpack_any(path, data))

    def _own(self, rec: FileRecord) -> FileRecord:
        own = self._own_reads
        if own is not None and rec.last_read is not None and rec.path not in own:
            return rec.replace(last_read=None)
        return rec

    def put(self, record: FileRecord) -> None:
        if self._own_reads is not None and record.last_read is not None:
            self._own_reads.add(record.path)
        self._records.set(record.path, pack_any(record))
        if len(self._records) > self.max_files:
            self._records.evict_to(self.max_files)

    def replace(self, record: FileRecord) -> None:
        """Store ``record`` in place of the current one, keeping its place in the order."""
        self._records.set(record.path, pack_any(record), touch=False, only_existing=True)

    def drop(self, path: str) -> None:
        self._records.pop(path)

    def fork(self, name: str, *, read_only: bool = False) -> Session:
        child = Session(name, self.max_files, read_only=read_only)
        child._records = self._records.copy()
        child._own_reads = set()
        return child


#: Sessions kept by default; the least recently used beyond it are dropped.
MAX_SESSIONS = 256


class SessionRegistry:
    """All sessions of one server, created on first use, in use order.

    At most ``max_sessions`` are kept: creating one more drops the least recently used
    (never the default session), as a session drops its least recently used records. A
    dropped session's records are gone (its next edit of a file asks for a read first).
    A read-only session's name stays read-only when the session is closed or dropped (up
    to ``4 × max_sessions`` such names are remembered), so neither turns its name writable.

    Names are the clients' own and short (every server has a session ``default``); what
    outlives the server (the history two servers may share) records a session as its name
    and :attr:`instance`, drawn at random for each registry (one a server), so that two
    servers' sessions of one name are never taken for one.
    """

    def __init__(
        self, max_files: int, max_sessions: int = MAX_SESSIONS, instance: str | None = None
    ) -> None:
        self.max_files = max_files
        self.max_sessions = max_sessions
        #: This server's instance id (12 hex digits): with a session's name, the session
        #: as history records it.
        self.instance = instance or secrets.token_hex(6)
        self._sessions: dict[str, Session] = {}  # least recently used first
        #: Names of read-only sessions that were closed or dropped, oldest first: such a
        #: name stays read-only, so closing a read-only session (or having it dropped
        #: while idle) and using its name again never gives a session that may write.
        self._read_only_names: dict[str, None] = {}
        #: Sessions dropped so far.
        self.dropped = 0

    def get(self, name: str) -> Session:
        s = self._sessions.pop(name, None)
        if s is None:
            s = Session(name, self.max_files, read_only=name in self._read_only_names)
        self._sessions[name] = s
        self._drop_idle()
        return s

    def exists(self, name: str) -> bool:
        return name in self._sessions

    def is_read_only(self, name: str) -> bool:
        """Whether session ``name`` may not change files: it is read-only, or it is gone
        and was read-only (see above)."""
        s = self._sessions.get(name)
        return (s is not None and s.read_only) or name in self._read_only_names

    def was_read_only(self, name: str) -> bool:
        """Whether ``name`` was a read-only session that was closed or dropped."""
        return name in self._read_only_names

    def fork(self, name: str, parent: str, *, read_only: bool = False) -> Session:
        # forking never widens what a session may do: a read-only parent, or a name that
        # was read-only, gives a read-only child
        read_only = read_only or self.is_read_only(name) or self.is_read_only(parent)
        child = self.get(parent).fork(name, read_only=read_only)
        self._sessions.pop(name, None)
        self._sessions[name] = child
        self._drop_idle()
        return child

    def names(self) -> list[str]:
        """The sessions' names, most recently used first."""
        return list(reversed(self._sessions))

    def _drop_idle(self) -> None:
        if len(self._sessions) <= self.max_sessions:
            return
        for name in list(self._sessions)[:-1]:  # never the one just used
            if len(self._sessions) <= self.max_sessions:
                break
            if name == DEFAULT_SESSION:  # every call without `session` uses it
                continue
            self._remember(self._sessions.pop(name))
            self.dropped += 1

    def _remember(self, s: Session) -> None:
        """Keep a read-only session's name read-only once it is gone (the last
        ``4 × max_sessions`` such names)."""
        if not s.read_only:
            return
        names = self._read_only_names
        names.pop(s.name, None)
        names[s.name] = None
        while len(names) > 4 * self.max_sessions:
            del names[next(iter(names))]

    def close(self, name: str) -> int:
        s = self._sessions.pop(name, None)
        if s is None:
            return 0
        self._remember(s)
        return len(s)

    def __iter__(self) -> Iterator[Session]:
        return iter(list(self._sessions.values()))

    def mark_changed(
        self,
        path: str,
        disk_hash: str | None,
        *,
        disk_stat: tuple[int, int] | None = None,
        buffers: bool = True,
    ) -> int:
        """Mark stale the disk records of ``path`` whose hash differs from ``disk_hash``
        (None: the file is gone, or not hashed). ``disk_stat``: the (size, mtime_ns) of a
        file too large to hash on a watcher's notice; a disk record with exactly those is
        taken as unchanged (this only marks records, never decides a write: every write
        hashes the content). ``buffers``: also mark the records of an open buffer's text.
        Returns how many records were marked."""
        n = 0
        for s in self._sessions.values():
            rec = s.peek(path)
            if rec is None or rec.stale:
                continue
            if rec.source == "disk":
                if disk_hash is not None and rec.hash == disk_hash:
                    continue
                if disk_stat is not None and (rec.size, rec.mtime_ns) == disk_stat:
                    continue
            elif not buffers:
                continue
            s.replace(rec.replace(stale=True, last_read=None))
            n += 1
        return n

    def records(self, path: str) -> list[FileRecord]:
        """Every session's record of ``path`` (none counted as used)."""
        out = []
        for s in self._sessions.values():
            rec = s.peek(path)
            if rec is not None:
                out.append(rec)
        return out

    def tracked_paths(self) -> set[str]:
        return {p for s in self._sessions.values() for p in s.paths()}

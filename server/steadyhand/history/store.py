"""The history store: every version Steadyhand replaced, on disk, for one folder (see
:mod:`steadyhand.history.stores` for how the stores of several folders work together).

Layout under ``<base>/<folder-key>/`` (created on first use, mode 0700, because the
versions may hold anything the files held)::

    meta.json      the folder the store belongs to (several, in an earlier version)
    index.jsonl    one JSON object per line: changes and checkpoints, oldest first
    blobs/ab/<h>   zlib-compressed UTF-8 text, named by the xxh3-128 of the text (a
                   large text is first written as it is, behind a marker, and compressed
                   just after the change's answer: see :data:`COMPRESS_LATER`)

Every entry has an id unique in its store (:func:`new_id`, checked against the index
under its lock before the line is written), and records the session that made it by its
name and the server instance it ran in (:class:`Owner`): every server has a session
``default``, so a name alone does not tell two servers' sessions apart.

Blobs are content-addressed, so a version that comes back (an undo, the same file twice)
is stored once. The blobs are bounded by a byte budget: when it is exceeded, the least
recently used blobs go first (a blob's mtime records its last use, so the order survives
restarts). A change whose earlier content was evicted stays in the index, marked as no
longer restorable. The index is append-only; it is rewritten (atomically) only when it
grows past :data:`MAX_ENTRIES`. Several servers on one workspace share the store: each
re-reads what the others appended before answering, and appends and compactions take
turns under a lock on ``index.lock`` (``flock``; ``LockFileEx`` on Windows), so a compaction
never drops a line another server appended meanwhile.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import logging
import os
import secrets
import threading
import time
import zlib
from collections.abc import Callable, Iterator, Sequence
from dataclasses import MISSING, dataclass, fields
from typing import Any

from steadyhand.fs.checked_open import open_regular
from steadyhand.state.hashing import content_hash, text_hash
from steadyhand.system import flags, locks, rename

try:
    import orjson
except ImportError:  # pragma: no cover - a dependency, but the store works without it
    orjson = None  # type: ignore[assignment]


log = logging.getLogger(__name__)

#: The index is compacted to its newest ``KEEP_ENTRIES`` entries past this many.
MAX_ENTRIES = 20_000
KEEP_ENTRIES = 15_000
#: Texts of this many bytes or more are kept as they are before the change (writing is
#: some ten times faster than compressing) and compressed just after its answer.
COMPRESS_LATER = 16 * 1024
#: The start of a blob kept as it is; no zlib stream starts with a zero byte.
_RAW = b"\x00raw\n"


def _write_all(fd: int, data: bytes | memoryview) -> None:
    """Write all of ``data``: ``os.write`` may write less than it was given."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _write_file(
    path: str, parts: Sequence[bytes | memoryview], ready: Callable[[], bool] | None = None
) -> bool:
    """Write ``parts`` to ``path`` through a temp file and a rename. ``ready``, if given,
    is asked just before the rename; when it says no, nothing is replaced (False). A
    rename another program holds ``path`` against (Windows) is tried for about a second,
    then :class:`~steadyhand.system.rename.FileBusy`; whatever fails, ``path`` is as it
    was and the temp file is gone."""
    tmp = f"{path}.{os.getpid()}.{secrets.token_hex(3)}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | flags.BINARY, 0o600)
    try:
        for part in parts:
            _write_all(fd, part)
        go = ready is None or ready()
    except BaseException:
        os.close(fd)
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    os.close(fd)
    if not go:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        return False
    try:
        # (on Windows, tried again while an indexer or a scanner holds the file)
        rename.replace_own(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    return True


def workspace_key(folders: list[str]) -> str:
    """A folder name for a workspace: the first folder's name and a hash of all of them."""
    real = sorted(os.path.realpath(f) for f in folders)
    digest = text_hash("\n".join(real))[:16]
    name = os.path.basename(real[0].rstrip("/")) if real else "no-workspace"
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in name)[:40] or "root"
    return f"{safe}-{digest}"


@dataclass(frozen=True, slots=True)
class Version:
    """One change Steadyhand made to a file: what was there before, what it left."""

    id: str
    path: str
    time: float
    session: str
    tool: str
    #: Whether the file existed before the change (False: the change created it).
    existed: bool
    #: Blob key of the content before, None if it did not exist or was not kept.
    before: str | None
    #: View hash (LF text) of the content before, None if it did not exist.
    before_view: str | None
    before_size: int
    #: Encoding label of the content before (``utf-8``, ``utf-16-le``, ...).
    encoding: str
    #: View hash of the content the change left, None if the change deleted the file.
    after_view: str | None
    after_size: int
    added: int
    removed: int
    #: Blob key of the content the change left, None if it deleted the file, was too
    #: large to keep, or was recorded by a version that did not keep it.
    after: str | None = None
    #: The server instance whose session made the change (see :class:`Owner`); None in
    #: lines an earlier version wrote.
    instance: str | None = None
    #: Encoding label of the content the change left (``utf-8-sig``: with a BOM); None
    #: when it deleted the file, for a change made in an editor buffer (which holds text
    #: only), and in lines an earlier version wrote.
    after_encoding: str | None = None


@dataclass(frozen=True, slots=True)
class Checkpoint:
    id: str
    session: str
    label: str
    time: float
    #: The server instance whose session set it (None in lines an earlier version wrote).
    instance: str | None = None


Entry = Version | Checkpoint


@dataclass(frozen=True, slots=True)
class Owner:
    """A session as history tells it apart: its name and the server instance it ran in.

    Session names are chosen per server (each server has a session ``default``), so two
    servers sharing a store (two editor windows, an editor and a standalone ``steadyhand
    mcp``) record changes under the same names; the instance, a random id each server
    process draws at its start, keeps them apart. Lines an earlier version wrote have no
    instance: that version could not tell servers apart, so such a line counts as made
    by the session of its name in every server (as it did then).
    """

    session: str
    instance: str | None = None

    def made(self, e: Entry) -> bool:
        """Whether this session made (or set) ``e``."""
        return e.session == self.session and e.instance in (self.instance, None)


def owner_of(e: Entry) -> Owner:
    return Owner(e.session, e.instance)


_FIELDS = {cls: tuple(f.name for f in fields(cls)) for cls in (Version, Checkpoint)}
_KNOWN = {cls: frozenset(names) for cls, names in _FIELDS.items()}


def _entry_from(obj: dict[str, Any]) -> Entry | None:
    """The entry of an index line. Fields this version does not know (written by a newer
    one) are left out; a field it added is missing from older lines and takes its default."""
    kind = obj.pop("t", None)
    cls: type[Version] | type[Checkpoint]
    if kind == "change":
        cls = Version
    elif kind == "checkpoint":
        cls = Checkpoint
    else:
        return None
    known = _KNOWN[cls]
    if not known.issuperset(obj):
        obj = {k: v for k, v in obj.items() if k in known}
    if not _well_typed(cls, obj):
        return None  # not an entry a store wrote (a damaged or foreign line)
    try:
        return cls(**obj)
    except TypeError:
        return None


#: What each field of an entry may hold, by its annotation; numbers within these bounds
#: (a time a clock can show, a size a file can have).
_KINDS: dict[str, tuple[type, ...]] = {
    "str": (str,),
    "str | None": (str, type(None)),
    "bool": (bool,),
    "int": (int,),
    "float": (int, float),
}
_MAX_NUMBER = 1 << 62
_MAX_TIME = 1e11  # the year 5138


def _well_typed(cls: type, obj: dict[str, Any]) -> bool:
    """Whether every field of ``obj`` has its annotation's type (a field with a default
    may be missing), numbers within bounds."""
    for f in fields(cls):
        if f.name not in obj:
            if f.default is MISSING:
                return False
            continue
        value = obj[f.name]
        kinds = _KINDS.get(str(f.type))
        if kinds is None or not isinstance(value, kinds):
            return False
        if isinstance(value, bool) and bool not in kinds:
            return False
        if isinstance(value, int | float) and not isinstance(value, bool):
            top = _MAX_TIME if f.name == "time" else _MAX_NUMBER
            if not 0 <= value <= top:  # (NaN is neither)
                return False
    return True


#: Fields added after the first format, left out of a line when they say nothing.
_OPTIONAL = ("after", "instance", "after_encoding")


def _entry_line(entry: Entry) -> bytes:
    """The entry's line in the index: JSON and a newline, UTF-8. A file name that is not
    valid UTF-8 (its odd bytes decoded as lone surrogates) keeps its bytes as they were."""
    kind = "change" if isinstance(entry, Version) else "checkpoint"
    obj: dict[str, Any] = {"t": kind}
    for name in _FIELDS[type(entry)]:
        obj[name] = getattr(entry, name)
    for name in _OPTIONAL:  # lines as before these fields came, where they say nothing
        if name in obj and obj[name] is None:
            del obj[name]
    if orjson is not None:
        try:
            return orjson.dumps(obj, option=orjson.OPT_APPEND_NEWLINE)
        except orjson.JSONEncodeError:  # it refuses lone surrogates
            pass
    text = json.dumps(obj, separators=(",", ":"), ensure_ascii=False)
    return (text + "\n").encode("utf-8", "surrogatepass")


#: The kind of the line a compaction writes first.
_COMPACTED = "compacted"


def _marker_line(obj: dict[str, Any]) -> bytes:
    return (json.dumps(obj, separators=(",", ":")) + "\n").encode("ascii")


def _parse_line(line: bytes) -> Any:
    """What :func:`_entry_line` wrote (ValueError if the line is damaged)."""
    if orjson is not None:
        try:
            return orjson.loads(line)
        except orjson.JSONDecodeError:
            pass
    return json.loads(line.decode("utf-8", "surrogatepass"))


def _last_byte(fd: int, size: int) -> bytes:
    os.lseek(fd, size - 1, os.SEEK_SET)  # writes still go to the end (O_APPEND)
    return os.read(fd, 1)


#: Random bytes in an id (12 hex digits). Earlier versions drew 4 (8 hex digits), which a
#: store of 20,000 entries held twice about once in twenty; ids are now also checked
#: against the store before they are written (:meth:`HistoryStore.append`).
ID_BYTES = 6
#: The fewest characters of an id (after ``cp-``) taken as an abbreviation of it.
MIN_PREFIX = 6


def new_id(prefix: str = "", taken: Callable[[str], bool] | None = None) -> str:
    """A random id, ``prefix`` first; one for which ``taken`` says no, if given."""
    while True:
        out = prefix + secrets.token_hex(ID_BYTES)
        if taken is None or not taken(out):
            return out


def id_matches(entry_id: str, given: str) -> bool:
    """Whether ``given`` names ``entry_id``: the whole id, or an abbreviation of it (its
    first :data:`MIN_PREFIX` characters or more)."""
    if entry_id == given:
        return True
    body = given[3:] if given.startswith("cp-") else given
    return len(body) >= MIN_PREFIX and entry_id.startswith(given)


class HistoryStore:
    """Versions and checkpoints of one workspace (see the module docstring)."""

    def __init__(
        self, root: str, max_bytes: int, max_file_bytes: int, folders: tuple[str, ...] = ()
    ) -> None:
        self.root = root
        self.folders = folders
        self.max_bytes = max_bytes
        self.max_file_bytes = max_file_bytes
        self.blobs_dir = os.path.join(root, "blobs")
        self.index_path = os.path.join(root, "index.jsonl")
        self._entries: list[Entry] = []
        #: The ids the index holds (each once, but in lines an earlier version wrote).
        self._ids: set[str] = set()
        #: The time of the newest entry a compaction dropped (0: none was dropped): a
        #: checkpoint older than that may have lost changes made after it.
        self.compacted_through = 0.0
        self._offset = 0
        #: The index's first line as last read: every line holds a random id, so another
        #: first line means another server rewrote (compacted) the index. Inode numbers
        #: cannot tell: the file system may give the new index the old one's number.
        self._head = b""
        #: blob key -> (bytes on disk, last use); None until the blob folder is scanned.
        self._blobs: dict[str, tuple[int, float]] | None = None
        self._total = 0
        #: Large texts are stored from a worker thread: blob bookkeeping is locked.
        self._lock = threading.RLock()
        #: Index entries still being prepared (see :meth:`defer`), oldest first.
        self._pending: list[Callable[[], None]] = []
        self._flushing = False
        #: Blobs written as they are, to be compressed after the answer (COMPRESS_LATER).
        self._raw: list[str] = []
        self._compress_queued = False

    # -- deferred entries -----------------------------------------------------------

    def defer(self, job: Callable[[], None]) -> None:
        """Run ``job`` (which appends an entry) just after the current answer is sent.

        Counting a change's lines and appending its index entry need not delay the
        answer. Every method that reads or appends entries runs the jobs still waiting
        first, so nobody ever sees the index without them, and order is kept.
        """
        self._pending.append(job)
        if len(self._pending) > 1:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            self.flush()
            return
        # Two hops: the answer's own callback is already queued and goes first.
        loop.call_soon(loop.call_soon, self.flush)

    def flush(self) -> None:
        """Run the deferred jobs now, in order."""
        if self._flushing:
            return
        self._flushing = True
        try:
            while self._pending:
                job = self._pending.pop(0)
                try:
                    job()
                except Exception:
                    log.exception("history: could not record a change")
        finally:
            self._flushing = False

    # -- layout ---------------------------------------------------------------------

    def _ensure_dirs(self) -> None:
        if os.path.isdir(self.blobs_dir):
            return
        os.makedirs(self.blobs_dir, mode=0o700, exist_ok=True)
        with contextlib.suppress(OSError):
            os.chmod(self.root, 0o700)
        meta = os.path.join(self.root, "meta.json")
        if not os.path.exists(meta):
            with contextlib.suppress(FileExistsError):  # another server made it meanwhile
                fd = os.open(meta, os.O_WRONLY | os.O_CREAT | os.O_EXCL | flags.CLOEXEC, 0o600)
                with open(fd, "w", encoding="utf-8") as f:
                    json.dump({"workspace": list(self.folders), "format": 1}, f)

    def _blob_path(self, key: str) -> str:
        return os.path.join(self.blobs_dir, key[:2], key)

    # -- index ----------------------------------------------------------------------

    def refresh(self) -> None:
        """Read what was appended to the index since the last look (by any server)."""
        self.flush()
        self._read_new()

    def _read_new(self) -> None:
        try:
            f = os.fdopen(open_regular(self.index_path, os.O_RDONLY), "rb")
        except FileNotFoundError:
            self._forget()
            return
        with f:
            size = os.fstat(f.fileno()).st_size
            if self._offset and (size < self._offset or f.read(len(self._head)) != self._head):
                # another server rewrote the index (compacted it): read it all again
                self._forget()
                self.compacted_through = 0.0
            if size == self._offset:
                return
            f.seek(self._offset)
            data = f.read()
        end = data.rfind(b"\n") + 1  # a line still being written waits for next time
        if not self._offset and end:
            self._head = data[: data.index(b"\n") + 1]
        for line in data[:end].splitlines():
            if not line:
                continue
            try:
                obj = _parse_line(line)
            except (ValueError, RecursionError):  # damaged, or nested past any entry
                log.warning("history: skipping a damaged index line in %s", self.index_path)
                continue
            if isinstance(obj, dict) and obj.get("t") == _COMPACTED:
                with contextlib.suppress(TypeError, ValueError):
                    self.compacted_through = max(self.compacted_through, float(obj["time"]))
                continue
            entry = _entry_from(obj) if isinstance(obj, dict) else None
            if entry is not None:
                self._entries.append(entry)
                self._ids.add(entry.id)
        self._offset += end

    def _forget(self) -> None:
        self._entries, self._ids, self._offset, self._head = [], set(), 0, b""

    def taken(self, entry_id: str) -> bool:
        """Whether an entry of the index (as last read) has the id ``entry_id``."""
        return entry_id in self._ids

    @contextlib.contextmanager
    def _turn(self) -> Iterator[None]:
        """Hold the index lock: appends and compactions by every server sharing the store
        take turns, so lines never interleave and a compaction never drops one."""
        fd = open_regular(os.path.join(self.root, "index.lock"), os.O_RDWR | os.O_CREAT, 0o600)
        try:
            locks.lock(fd)  # flock, or LockFileEx on Windows
            yield
        finally:
            os.close(fd)  # which releases the lock

    def append(self, entry: Entry) -> Entry:
        """Append ``entry`` to the index; returns it as written. Its id is unique in the
        store: one already there (by any server, read under the lock) is drawn anew."""
        self.prepare()
        with self._turn():
            self._read_new()  # what any server appended meanwhile: their ids are taken
            if self.taken(entry.id):
                prefix = "cp-" if isinstance(entry, Checkpoint) else ""
                entry = dataclasses.replace(entry, id=new_id(prefix, self.taken))
            self.write_locked(entry)
        return entry

    def prepare(self) -> None:
        """Make the store's folders and write the entries still pending: before the
        index lock is taken (a pending entry takes it too)."""
        self._ensure_dirs()
        self.flush()  # entries still pending go first: order is kept

    @contextlib.contextmanager
    def turn(self) -> Iterator[None]:
        """Hold the index lock, the index read to its end: for writing entries with
        :meth:`write_locked` whose ids were checked against several stores at once."""
        with self._turn():
            self._read_new()
            yield

    def write_locked(self, entry: Entry) -> None:
        """Write ``entry``'s line (the caller holds the index lock and checked its id)."""
        line = _entry_line(entry)
        fd = open_regular(self.index_path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            size = os.fstat(fd).st_size
            if size and _last_byte(fd, size) != b"\n":
                # a line left torn (a server stopped, a disk filled up mid-write): end
                # it, or it would swallow this one
                line = b"\n" + line
            _write_all(fd, line)
        finally:
            os.close(fd)
        self._read_new()  # this line, and any another server appended before it
        if len(self._entries) > MAX_ENTRIES:
            self._compact()

    def _compact(self) -> None:
        """Rewrite the index to its newest entries (the caller holds the index lock). Its
        first line records the time of the newest entry dropped (older servers skip it)."""
        keep = self._entries[-KEEP_ENTRIES:]
        dropped = self._entries[: len(self._entries) - len(keep)]
        through = max([self.compacted_through, *(e.time for e in dropped)])
        marker = {"t": _COMPACTED, "id": new_id(), "time": through}
        data = b"".join([_marker_line(marker), *(_entry_line(entry) for entry in keep)])
        # Without the lock (no flock), an append since the last read would be lost by the
        # rename: then the index is left as it is, to be compacted on a later append.
        try:
            if not _write_file(self.index_path, [data], self._read_all):
                return
        except rename.FileBusy as exc:  # (Windows) held open by another program
            log.warning("history: the index stays as it is for now: %s", exc)
            return
        self._entries, self._offset = list(keep), len(data)
        self._ids = {e.id for e in keep}
        self.compacted_through = through
        self._head = data[: data.index(b"\n") + 1] if data else b""

    def _read_all(self) -> bool:
        """Whether this store has read the index to its end."""
        try:
            return os.stat(self.index_path).st_size == self._offset
        except OSError:
            return False

    @property
    def entries(self) -> list[Entry]:
        self.flush()
        return list(self._entries)

    def versions(self, path: str, who: Owner | None = None) -> list[Version]:
        """The changes to ``path``, oldest first (only ``who``'s, if given)."""
        self.flush()
        return [
            e
            for e in self._entries
            if isinstance(e, Version) and e.path == path and (who is None or who.made(e))
        ]

    def last_change(self, path: str, who: Owner | None = None) -> Version | None:
        self.flush()
        for e in reversed(self._entries):
            if isinstance(e, Version) and e.path == path and (who is None or who.made(e)):
                return e
        return None

    def add_checkpoint(self, who: Owner, label: str) -> Checkpoint:
        cp = Checkpoint(new_id("cp-", self.taken), who.session, label, time.time(), who.instance)
        written = self.append(cp)
        assert isinstance(written, Checkpoint)
        return written

    def find_checkpoint(self, who: Owner, name: str) -> tuple[int, Checkpoint] | None:
        """The checkpoint called ``name`` (its id, or else its latest label) of ``who``."""
        self.flush()
        by_label: tuple[int, Checkpoint] | None = None
        for i, e in enumerate(self._entries):
            if isinstance(e, Checkpoint) and who.made(e):
                if e.id == name:
                    return i, e
                if e.label == name:
                    by_label = (i, e)
        return by_label

    def position(self, entry: Entry) -> int | None:
        """Where ``entry`` is in the index now, None if it is gone: a compaction (by any
        server sharing the store) moves every entry. Found by all its fields, not by its
        id alone: lines an earlier version wrote may share an id."""
        self.flush()
        for i in range(len(self._entries) - 1, -1, -1):
            if self._entries[i] == entry:
                return i
        return None

    def checkpoints(self, who: Owner) -> list[Checkpoint]:
        self.flush()
        return [e for e in self._entries if isinstance(e, Checkpoint) and who.made(e)]

    def changes_since(self, position: int) -> list[Version]:
        self.flush()
        return [e for e in self._entries[position + 1 :] if isinstance(e, Version)]

    # -- blobs ----------------------------------------------------------------------

    def _scan(self) -> dict[str, tuple[int, float]]:
        blobs: dict[str, tuple[int, float]] = {}
        total = 0
        try:
            shards = list(os.scandir(self.blobs_dir))
        except OSError:
            shards = []
        for shard in shards:
            if not shard.is_dir(follow_symlinks=False):
                continue
            for entry in os.scandir(shard.path):
                if entry.name.endswith(".tmp"):
                    continue
                with contextlib.suppress(OSError):
                    st = entry.stat(follow_symlinks=False)
                    blobs[entry.name] = (st.st_size, st.st_mtime)
                    total += st.st_size
        self._blobs, self._total = blobs, total
        return blobs

    @property
    def size_bytes(self) -> int:
        blobs = self._blobs if self._blobs is not None else self._scan()
        return sum(size for size, _ in blobs.values())

    def put_text(self, text: str, key: str | None = None) -> str | None:
        """Keep ``text``; returns its key, or None when it is over the per-file limit or
        cannot be kept within the budget. ``key``: the text's key if already known (the
        hash of its UTF-8 bytes); a text kept before is then only marked as used."""
        if key is not None:
            with self._lock:
                if self._reuse(key):
                    return key
        data = text.encode("utf-8", "surrogatepass")
        if len(data) > self.max_file_bytes:
            return None
        with self._lock:
            key = self._put(data)
        self.compress_soon()
        return key

    def _reuse(self, key: str) -> bool:
        """Whether the blob ``key`` is kept already; if so it is marked as just used."""
        blobs = self._blobs if self._blobs is not None else self._scan()
        path = self._blob_path(key)
        try:
            # an empty blob is a write the system lost (a power cut after the rename):
            # it is written again, not trusted
            kept = key in blobs and os.stat(path).st_size > 0
        except OSError:
            kept = False
        if kept:
            self._touch(key, path, time.time())
        return kept

    def _put(self, data: bytes) -> str | None:
        key = content_hash(data)
        if self._reuse(key):
            return key
        blobs = self._blobs if self._blobs is not None else self._scan()
        path = self._blob_path(key)
        now = time.time()
        later = len(data) >= COMPRESS_LATER and len(data) + len(_RAW) <= self.max_bytes
        parts = [_RAW, data] if later else [zlib.compress(data, 1)]
        size = sum(len(p) for p in parts)
        if size > self.max_bytes:
            return None
        self._ensure_dirs()
        os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
        _write_file(path, parts)
        old = blobs.get(key)
        self._total += size - (old[0] if old else 0)
        blobs[key] = (size, now)
        if self._total > self.max_bytes:
            self._evict(key)
        if later:
            self._raw.append(key)
        return key

    def compress_soon(self) -> None:
        """Have the blobs written as they are compressed just after the current answer.
        Only on the event loop's thread; a call from elsewhere leaves them for the next."""
        if not self._raw or self._compress_queued:
            return
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return
        self._compress_queued = True
        self.defer(self._compress_raw)

    def _compress_raw(self) -> None:
        self._compress_queued = False
        with self._lock:
            keys, self._raw = self._raw, []
        for key in keys:
            self._compress(key)

    def _compress(self, key: str) -> None:
        """Replace the blob ``key``, written as it was, by its compressed copy."""
        path = self._blob_path(key)
        with self._lock:
            try:
                with os.fdopen(open_regular(path, os.O_RDONLY), "rb") as f:
                    data = f.read()
            except OSError:
                return  # evicted meanwhile (perhaps by another server)
            if not data.startswith(_RAW):
                return
            packed = zlib.compress(memoryview(data)[len(_RAW) :], 1)
            try:
                _write_file(path, [packed])
            except OSError:
                return  # the blob as it was stays valid
            blobs = self._blobs
            if blobs is not None and key in blobs:
                self._total += len(packed) - blobs[key][0]
                blobs[key] = (len(packed), blobs[key][1])

    def _touch(self, key: str, path: str, now: float) -> None:
        with contextlib.suppress(OSError):
            os.utime(path, (now, now))
        if self._blobs is not None and key in self._blobs:
            self._blobs[key] = (self._blobs[key][0], now)

    def has(self, key: str | None) -> bool:
        return key is not None and os.path.exists(self._blob_path(key))

    def get_text(self, key: str) -> str | None:
        """The text kept under ``key``, or None if it is gone or damaged."""
        path = self._blob_path(key)
        try:
            with os.fdopen(open_regular(path, os.O_RDONLY), "rb") as f:
                data = f.read()
        except OSError:
            return None
        try:
            data = data[len(_RAW) :] if data.startswith(_RAW) else zlib.decompress(data)
            intact = content_hash(data) == key
        except zlib.error:
            intact = False
        if not intact:
            log.warning("history: blob %s is damaged; dropping it", key)
            self._drop(key, path)  # so that the next change keeping this text writes it anew
            return None
        self._touch(key, path, time.time())
        return data.decode("utf-8", "surrogatepass")

    def _drop(self, key: str, path: str) -> None:
        with self._lock:
            with contextlib.suppress(OSError):
                os.unlink(path)
            blobs = self._blobs
            if blobs is not None and key in blobs:
                self._total -= blobs.pop(key)[0]

    def evict(self, keep: str | None = None) -> list[str]:
        """Drop least recently used blobs until the store is a little under its budget
        (so that a full store does not rescan its folder on every new version)."""
        with self._lock:
            return self._evict(keep)

    def _evict(self, keep: str | None) -> list[str]:
        blobs = self._scan()  # other servers may have added blobs: count them all
        target = self.max_bytes * 9 // 10
        dropped: list[str] = []
        for key, (size, _) in sorted(blobs.items(), key=lambda kv: kv[1][1]):
            if self._total <= target:
                break
            if key == keep:
                continue
            with contextlib.suppress(FileNotFoundError):
                os.unlink(self._blob_path(key))
            del blobs[key]
            self._total -= size
            dropped.append(key)
        if dropped:
            log.info("history: evicted %d version(s) to stay within budget", len(dropped))
        return dropped

    def resize(self, max_bytes: int, max_file_bytes: int) -> None:
        self.max_bytes, self.max_file_bytes = max_bytes, max_file_bytes
        if self._blobs is not None and self._total > max_bytes:
            self.evict()

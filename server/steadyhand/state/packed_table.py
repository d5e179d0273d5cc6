"""A least-recently-used map from paths to small byte values, without an object per entry.

A session may track a hundred thousand files. Kept in a ``dict``, each one costs a path
string, a value object and the dict's own slot: some 250 bytes before the record says
anything. :class:`PackedTable` keeps every entry in a few flat arrays instead:

- ``_heap``: one ``bytearray`` with each entry's key and value, back to back;
- per entry id: its offset in the heap, the path's hash, and when it was last used;
- ``_slots``: an open-addressing index (linear probing) from hash to entry id.

Keys are stored as a folder number (folders are interned: a workspace has far fewer folders
than files) and the file name in UTF-8. A value rewritten with the same length is updated
in place; otherwise the new copy is appended and the heap is compacted once the dead
copies outweigh the live ones. Eviction is exact LRU: the oldest entries are found a batch
at a time and checked against their last use before they go.
"""

from __future__ import annotations

import heapq
import struct
from array import array
from collections.abc import Iterator

_ITEM = struct.Struct("<II")  # key length, value length
_FOLDER = struct.Struct("<I")
_FREE = 0xFFFFFFFF  # offset of a free entry id
_NEVER = (1 << 64) - 1  # last use of a free entry id: never among the oldest

#: Interned folders, shared by all tables: a folder's number is its index here.
_FOLDERS: list[str] = []
_FOLDER_IDS: dict[str, int] = {}


def encode_key(path: str) -> bytes:
    """``path`` as stored: its folder's number, then its last component in UTF-8."""
    cut = path.rfind("/") + 1
    folder = path[:cut]
    fid = _FOLDER_IDS.get(folder)
    if fid is None:
        fid = _FOLDER_IDS[folder] = len(_FOLDERS)
        _FOLDERS.append(folder)
    return _FOLDER.pack(fid) + path[cut:].encode("utf-8", "surrogatepass")


def decode_key(key: bytes | bytearray) -> str:
    fid: int = _FOLDER.unpack_from(key)[0]
    return _FOLDERS[fid] + bytes(key[_FOLDER.size :]).decode("utf-8", "surrogatepass")


class PackedTable:
    """``path -> bytes``, in order of use, with a fixed cost of about 30 bytes per entry
    plus the key and value bytes themselves."""

    def __init__(self) -> None:
        self._heap = bytearray()
        self._off = array("I")  # entry id -> heap offset of its item, _FREE when unused
        self._hash = array("q")  # entry id -> hash(path)
        self._used = array("Q")  # entry id -> clock value at its last use
        self._slots = array("i", bytes(4 * 8))  # entry id + 1; 0 is an empty slot
        self._free = array("i")  # unused entry ids, the lowest last
        self._count = 0
        self._dead = 0  # heap bytes held by replaced or removed items
        self._clock = 0
        self._oldest: list[tuple[int, int]] = []  # eviction candidates, oldest last

    # -- the public map ------------------------------------------------------------------

    def __len__(self) -> int:
        return self._count

    def __contains__(self, path: str) -> bool:
        return self._find(path, hash(path))[1] >= 0

    def get(self, path: str, *, touch: bool = True) -> bytes | None:
        """The value of ``path``; ``touch`` counts it as used."""
        i = self._find(path, hash(path))[1]
        if i < 0:
            return None
        if touch:
            self._touch(i)
        o = self._off[i]
        klen, vlen = _ITEM.unpack_from(self._heap, o)
        start = o + _ITEM.size + klen
        return bytes(self._heap[start : start + vlen])

    def set(
        self, path: str, value: bytes, *, touch: bool = True, only_existing: bool = False
    ) -> None:
        """Store ``value`` for ``path``. ``touch`` counts it as used (new entries always
        are); with ``only_existing``, nothing happens when ``path`` has no entry."""
        h = hash(path)
        pos, i = self._find(path, h)
        if i >= 0:
            heap = self._heap
            o = self._off[i]
            klen, vlen = _ITEM.unpack_from(heap, o)
            if vlen == len(value):
                start = o + _ITEM.size + klen
                heap[start : start + vlen] = value
            else:
                key = bytes(heap[o + _ITEM.size : o + _ITEM.size + klen])
                self._dead += _ITEM.size + klen + vlen
                self._off[i] = self._append(key, value)
                self._maybe_compact()
            if touch:
                self._touch(i)
            return
        if only_existing:
            return
        i = self._new_entry(h, encode_key(path), value)
        self._slots[pos] = i + 1
        self._count += 1
        if self._count * 3 > len(self._slots) * 2:
            self._resize(len(self._slots) * 2)

    def pop(self, path: str) -> bool:
        """Remove ``path``; returns whether it was there."""
        pos, i = self._find(path, hash(path))
        if i < 0:
            return False
        self._remove(pos, i)
        return True

    def evict_to(self, limit: int) -> None:
        """Remove the least recently used entries until at most ``limit`` are left."""
        while self._count > max(0, limit):
            if not self._oldest:
                self._collect_oldest()
            used, i = self._oldest.pop()
            if self._used[i] == used and self._off[i] != _FREE:
                self._remove(self._slot_of(i), i)

    def items(self) -> Iterator[tuple[str, bytes]]:
        """Every entry, least recently used first."""
        heap = self._heap
        live = sorted((u, i) for i, u in enumerate(self._used) if self._off[i] != _FREE)
        for _, i in live:
            o = self._off[i]
            klen, vlen = _ITEM.unpack_from(heap, o)
            k = o + _ITEM.size
            yield decode_key(heap[k : k + klen]), bytes(heap[k + klen : k + klen + vlen])

    def copy(self) -> PackedTable:
        other = PackedTable.__new__(PackedTable)
        other._heap = bytearray(self._heap)
        other._off = array("I", self._off)
        other._hash = array("q", self._hash)
        other._used = array("Q", self._used)
        other._slots = array("i", self._slots)
        other._free = array("i", self._free)
        other._count = self._count
        other._dead = self._dead
        other._clock = self._clock
        other._oldest = []
        return other

    def nbytes(self) -> int:
        """Bytes held by the arrays (for tests and reports)."""
        arrays = (self._off, self._hash, self._used, self._slots, self._free)
        return len(self._heap) + sum(a.itemsize * len(a) for a in arrays)

    # -- inside --------------------------------------------------------------------------

    def _find(self, path: str, h: int) -> tuple[int, int]:
        """(slot, entry id) of ``path``; the entry id is -1 when absent, and the slot is
        then where it would go."""
        slots, hashes, offs, heap = self._slots, self._hash, self._off, self._heap
        mask = len(slots) - 1
        pos = h & mask
        key: bytes | None = None
        while True:
            e = slots[pos]
            if e == 0:
                return pos, -1
            i = e - 1
            if hashes[i] == h:
                if key is None:
                    key = encode_key(path)
                o = offs[i]
                klen = _ITEM.unpack_from(heap, o)[0]
                if klen == len(key) and heap.startswith(key, o + _ITEM.size):
                    return pos, i
            pos = (pos + 1) & mask

    def _slot_of(self, i: int) -> int:
        slots = self._slots
        mask = len(slots) - 1
        pos = self._hash[i] & mask
        while slots[pos] != i + 1:
            pos = (pos + 1) & mask
        return pos

    def _touch(self, i: int) -> None:
        self._clock += 1
        self._used[i] = self._clock

    def _append(self, key: bytes, value: bytes) -> int:
        heap = self._heap
        o = len(heap)
        heap += _ITEM.pack(len(key), len(value))
        heap += key
        heap += value
        if len(heap) >= _FREE:
            raise MemoryError("file-state table over 4 GiB")
        return o

    def _new_entry(self, h: int, key: bytes, value: bytes) -> int:
        o = self._append(key, value)
        self._clock += 1
        if self._free:
            i = self._free.pop()
            self._off[i], self._hash[i], self._used[i] = o, h, self._clock
        else:
            i = len(self._off)
            self._off.append(o)
            self._hash.append(h)
            self._used.append(self._clock)
        return i

    def _remove(self, pos: int, i: int) -> None:
        heap = self._heap
        klen, vlen = _ITEM.unpack_from(heap, self._off[i])
        self._dead += _ITEM.size + klen + vlen
        self._off[i] = _FREE
        self._used[i] = _NEVER
        self._free.append(i)
        self._count -= 1
        self._unslot(pos)
        self._maybe_compact()

    def _unslot(self, pos: int) -> None:
        """Empty slot ``pos``, shifting later entries of its probe run back (no tombstones)."""
        slots, hashes = self._slots, self._hash
        mask = len(slots) - 1
        j = pos
        while True:
            j = (j + 1) & mask
            e = slots[j]
            if e == 0:
                break
            home = hashes[e - 1] & mask
            # The entry at j may move to pos unless its home lies cyclically in (pos, j].
            if (pos < j and pos < home <= j) or (j < pos and (home > pos or home <= j)):
                continue
            slots[pos] = e
            pos = j
        slots[pos] = 0

    def _resize(self, size: int) -> None:
        slots = array("i", bytes(4 * size))
        mask = size - 1
        for i, o in enumerate(self._off):
            if o == _FREE:
                continue
            pos = self._hash[i] & mask
            while slots[pos]:
                pos = (pos + 1) & mask
            slots[pos] = i + 1
        self._slots = slots

    def _maybe_compact(self) -> None:
        live = len(self._heap) - self._dead
        if self._dead < 4096 or self._dead < live:
            return
        old, new = self._heap, bytearray()
        offs = self._off
        for i, o in enumerate(offs):
            if o == _FREE:
                continue
            klen, vlen = _ITEM.unpack_from(old, o)
            offs[i] = len(new)
            new += old[o : o + _ITEM.size + klen + vlen]
        self._heap = new
        self._dead = 0

    def _collect_oldest(self) -> None:
        """The oldest entries, a batch at a time (sorted so the oldest pops first)."""
        batch = max(16, self._count // 64)
        pairs = zip(self._used, range(len(self._used)), strict=True)
        self._oldest = sorted(heapq.nsmallest(batch, pairs), reverse=True)

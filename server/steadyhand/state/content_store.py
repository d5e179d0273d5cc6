"""The texts agents last saw, kept so a later stale refusal can show what changed.

Sessions keep only hashes and a *locator*: where the store put the text. The store is
bounded in bytes and forgets the oldest texts first, so a locator may outlive its text;
:meth:`ContentStore.get` then answers None, and every text it returns is checked against
the hash it was asked for.

Small texts (most files an agent reads) are appended to an open block; a full block is
compressed with zlib, which shrinks source code several times over, and no Python object
is kept per text. Larger texts are kept as they are, one block each, so an edit of a big
file never waits for a compressor.
"""

from __future__ import annotations

import zlib

from steadyhand.state.hashing import text_hash

#: Texts shorter than this (in characters) go into shared, compressed blocks.
SMALL_TEXT = 4096
#: A block is sealed (compressed) once it holds this many bytes.
BLOCK_BYTES = 64 * 1024
#: zlib level for sealed blocks: level 1 is within a few percent of 6 on source code.
_LEVEL = 1
#: How many recent puts are remembered, so re-reading unchanged files adds nothing.
_RECENT = 1024
_LOW = (1 << 32) - 1


def _locator(block: int, offset: int, length: int) -> int:
    """Block number, then (for a text inside a shared block) its offset and length + 1."""
    return block << 32 | offset << 16 | (length + 1) if length >= 0 else block << 32


class ContentStore:
    def __init__(self, max_bytes: int, max_item_bytes: int) -> None:
        self.max_bytes = max_bytes
        self.max_item_bytes = max_item_bytes
        #: sealed blocks, oldest first: compressed bytes, or one large text as it is
        self._blocks: dict[int, bytes | str] = {}
        self._open = bytearray()
        self._open_id = 1
        self._next_id = 2
        self._bytes = 0
        self._recent: dict[str, int] = {}
        self._inflated: tuple[int, bytes] = (0, b"")

    def __len__(self) -> int:
        """How many blocks are kept (the open one included)."""
        return len(self._blocks) + 1

    @property
    def size_bytes(self) -> int:
        return self._bytes

    def put(self, key: str, text: str) -> int:
        """Keep ``text`` (whose hash is ``key``); returns its locator, 0 if not kept."""
        if len(text) > self.max_item_bytes:
            return 0
        where = self._recent.get(key)
        if where is not None and self._fresh(where):
            return where
        over = self._bytes + len(text) > self.max_bytes  # the oldest texts must go
        if len(text) >= SMALL_TEXT:
            if over:
                self._seal()  # so the open block goes before this text
            block = self._next_id
            self._next_id += 1
            self._blocks[block] = text
            self._bytes += len(text)
            where = _locator(block, 0, -1)
        else:
            data = text.encode("utf-8", "surrogatepass")
            if over or len(self._open) + len(data) >= BLOCK_BYTES:
                self._seal()
            where = _locator(self._open_id, len(self._open), len(data))
            self._open += data
            self._bytes += len(data)
        recent = self._recent
        recent.pop(key, None)
        recent[key] = where
        if len(recent) > _RECENT:
            del recent[next(iter(recent))]
        self._shrink()
        return where

    def get(self, key: str, where: int) -> str | None:
        """The text with hash ``key`` kept at ``where``, if it is still there."""
        block, low = where >> 32, where & _LOW
        text: str | None = None
        if low:
            offset, length = low >> 16, (low & 0xFFFF) - 1
            data: bytes | bytearray | None = None
            if block == self._open_id:
                data = self._open
            else:
                data = self._inflate(block)
            if data is not None:
                text = bytes(data[offset : offset + length]).decode("utf-8", "surrogatepass")
        else:
            kept = self._blocks.get(block)
            text = kept if isinstance(kept, str) else None
        if text is None or text_hash(text) != key:
            return None
        return text

    def resize(self, max_bytes: int, max_item_bytes: int) -> None:
        self.max_bytes = max_bytes
        self.max_item_bytes = max_item_bytes
        self._shrink()

    # -- inside ----------------------------------------------------------------------------

    def _fresh(self, where: int) -> bool:
        """Whether ``where`` still holds its text and is in the newer half of the store
        (an older one is written again, so a text in use is not the next to go)."""
        block = where >> 32
        if block == self._open_id:
            return True
        if block not in self._blocks:
            return False
        oldest = next(iter(self._blocks))
        return block - oldest >= (self._next_id - oldest) // 2

    def _seal(self) -> None:
        if self._open:
            packed = zlib.compress(self._open, _LEVEL)
            self._blocks[self._open_id] = packed
            self._bytes += len(packed) - len(self._open)
        self._open = bytearray()
        self._open_id = self._next_id
        self._next_id += 1

    def _inflate(self, block: int) -> bytes | None:
        kept = self._blocks.get(block)
        if not isinstance(kept, bytes):
            return None
        if self._inflated[0] != block:
            self._inflated = (block, zlib.decompress(kept))
        return self._inflated[1]

    def _shrink(self) -> None:
        blocks = self._blocks
        while self._bytes > self.max_bytes and blocks:
            oldest = next(iter(blocks))
            self._bytes -= len(blocks.pop(oldest))
            if self._inflated[0] == oldest:
                self._inflated = (0, b"")
        if self._bytes > self.max_bytes and self._open:
            self._bytes -= len(self._open)
            self._open = bytearray()
            self._open_id = self._next_id
            self._next_id += 1

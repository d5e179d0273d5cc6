"""A content-addressed store of file texts shared by all sessions.

Sessions keep only hashes; the text a session last saw lives here once, however many
sessions saw it. It is bounded in bytes (least recently used texts go first) and takes
only texts under a size threshold, so memory stays flat however many files are tracked.
"""

from __future__ import annotations


def _key(hex_hash: str) -> bytes | str:
    """The 16 bytes a 32-digit hex hash stands for (half the memory of the string)."""
    try:
        return bytes.fromhex(hex_hash) if len(hex_hash) == 32 else hex_hash
    except ValueError:
        return hex_hash


class ContentStore:
    def __init__(self, max_bytes: int, max_item_bytes: int) -> None:
        self.max_bytes = max_bytes
        self.max_item_bytes = max_item_bytes
        #: key -> text, least recently used first (a plain dict keeps the order)
        self._items: dict[bytes | str, str] = {}
        self._bytes = 0

    def __len__(self) -> int:
        return len(self._items)

    @property
    def size_bytes(self) -> int:
        return self._bytes

    def put(self, key: str, text: str) -> None:
        size = len(text)  # characters: a cheap, stable proxy for bytes
        if size > self.max_item_bytes:
            return
        k = _key(key)
        old = self._items.pop(k, None)
        if old is not None:
            self._items[k] = old  # now the most recently used
            return
        self._items[k] = text
        self._bytes += size
        self._shrink()

    def get(self, key: str) -> str | None:
        k = _key(key)
        text = self._items.pop(k, None)
        if text is not None:
            self._items[k] = text
        return text

    def _shrink(self) -> None:
        items = self._items
        while self._bytes > self.max_bytes and items:
            oldest = next(iter(items))
            self._bytes -= len(items.pop(oldest))

    def resize(self, max_bytes: int, max_item_bytes: int) -> None:
        self.max_bytes = max_bytes
        self.max_item_bytes = max_item_bytes
        self._shrink()

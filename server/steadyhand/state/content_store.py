"""A content-addressed store of file texts shared by all sessions.

Sessions keep only hashes; the text a session last saw lives here once, however many
sessions saw it. It is bounded in bytes (least recently used texts go first) and takes
only texts under a size threshold, so memory stays flat however many files are tracked.
"""

from __future__ import annotations

from collections import OrderedDict


class ContentStore:
    def __init__(self, max_bytes: int, max_item_bytes: int) -> None:
        self.max_bytes = max_bytes
        self.max_item_bytes = max_item_bytes
        self._items: OrderedDict[str, str] = OrderedDict()
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
        if key in self._items:
            self._items.move_to_end(key)
            return
        self._items[key] = text
        self._bytes += size
        while self._bytes > self.max_bytes and self._items:
            _, dropped = self._items.popitem(last=False)
            self._bytes -= len(dropped)

    def get(self, key: str) -> str | None:
        text = self._items.get(key)
        if text is not None:
            self._items.move_to_end(key)
        return text

    def resize(self, max_bytes: int, max_item_bytes: int) -> None:
        self.max_bytes = max_bytes
        self.max_item_bytes = max_item_bytes
        while self._bytes > self.max_bytes and self._items:
            _, dropped = self._items.popitem(last=False)
            self._bytes -= len(dropped)

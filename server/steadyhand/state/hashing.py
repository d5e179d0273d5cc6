"""Content hashes: xxh3-128, as 32 hex digits."""

from __future__ import annotations

from typing import Any

import xxhash


def content_hash(data: bytes) -> str:
    return xxhash.xxh3_128_hexdigest(data)


def text_hash(text: str) -> str:
    """Hash of text as UTF-8 (surrogates, which only a broken client sends, are escaped)."""
    return content_hash(text.encode("utf-8", "surrogatepass"))


def streaming_hasher() -> Any:
    return xxhash.xxh3_128()

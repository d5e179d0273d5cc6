"""LSP positions: lines break only at LF, CRLF and CR; characters are counted in the
negotiated position encoding (UTF-16 code units by default, or UTF-8 bytes, or code
points). Pure functions over text, no editor state."""

from __future__ import annotations

import bisect
import re

_BREAK = re.compile(r"\r\n|\r|\n")


def line_starts(text: str) -> list[int]:
    """Offsets at which each line starts (LSP line breaks only)."""
    starts = [0]
    starts.extend(m.end() for m in _BREAK.finditer(text))
    return starts


def units(s: str, encoding: str) -> int:
    """Length of ``s`` in the code units of a position encoding."""
    if encoding == "utf-8":
        return len(s.encode("utf-8", "surrogatepass"))
    if encoding == "utf-32":
        return len(s)
    if s.isascii():
        return len(s)
    return len(s.encode("utf-16-le", "surrogatepass")) // 2


class PositionIndex:
    """Converts string offsets of one text to LSP (line, character) positions."""

    def __init__(self, text: str, encoding: str = "utf-16") -> None:
        self.text = text
        self.encoding = encoding
        self.starts = line_starts(text)

    def position(self, offset: int) -> tuple[int, int]:
        line = bisect.bisect_right(self.starts, offset) - 1
        # An offset between the CR and LF of a CRLF never occurs for splice boundaries
        # produced from view offsets, but stay correct if it does.
        start = self.starts[line]
        return line, units(self.text[start:offset], self.encoding)

    def offset(self, line: int, character: int) -> int:
        """The string offset of a position (clamped to the line, as LSP requires)."""
        if line >= len(self.starts):
            return len(self.text)
        start = self.starts[line]
        end = self.starts[line + 1] if line + 1 < len(self.starts) else len(self.text)
        content = self.text[start:end].rstrip("\r\n")
        if self.encoding == "utf-32":
            return start + min(character, len(content))
        count = 0
        for i, ch in enumerate(content):
            if count >= character:
                return start + i
            count += units(ch, self.encoding)
        return start + len(content)


def encoding_name(kind: str | None) -> str:
    """``utf-16`` / ``utf-8`` / ``utf-32`` from an LSP PositionEncodingKind value."""
    if kind in ("utf-8", "utf-32"):
        return kind
    return "utf-16"

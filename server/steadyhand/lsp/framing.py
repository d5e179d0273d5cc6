"""LSP base-protocol framing, as a pure parser: bytes in, message bodies and frame errors
out, in stream order.

A frame is a block of header lines (``Name: value``, each ended by CRLF or LF; any order,
any case), an empty line, and a body of exactly ``Content-Length`` bytes. A frame whose
header cannot be used — no ``Content-Length``, a length that is not a plain decimal
number of bytes (``abc``, ``-5``, ``1_0``, ``+5``), one over :data:`MAX_BODY_BYTES`, a
line that is no header at all (a body sent without a header), header lines over
:data:`MAX_HEADER_BYTES` — gives one :class:`FrameError`, and the parser looks for the
next ``Content-Length:`` in the stream from just after where that frame began, so the
frames after it are read as usual. Blank lines between frames are allowed. Memory stays
bounded while looking.

A length larger than the bytes the client sent cannot be told from a body still on its
way: the parser waits for the rest, and the frames sent after it become that body (then
a Parse error, and it picks up again).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from steadyhand.runtime.wire import MAX_MESSAGE_BYTES

#: The largest body a frame may announce (a larger one is a frame error).
MAX_BODY_BYTES = MAX_MESSAGE_BYTES
#: The most bytes the header lines of one frame may take.
MAX_HEADER_BYTES = 8192
#: The most digits a Content-Length may have (the largest allowed length has 10).
_MAX_DIGITS = 10

#: A header name (an HTTP token), and what may begin a header line still arriving.
_NAME = re.compile(rb"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
_LINE_START = re.compile(rb"[!#$%&'*+\-.^_`|~0-9A-Za-z]+(?::|\Z)")
_NEXT_FRAME = re.compile(rb"content-length[ \t]*:", re.IGNORECASE)
#: Bytes kept at the end of skipped data: a ``Content-Length:`` cut by a read's end.
_KEEP = 64


@dataclass(frozen=True, slots=True)
class FrameError:
    """A frame that could not be read, and why (for the Parse error's message)."""

    reason: str


def content_length(value: bytes) -> int | str:
    """The byte count a ``Content-Length`` value gives, or why it gives none."""
    digits = value.strip(b" \t\r\n")
    if digits.isdigit() and len(digits) <= _MAX_DIGITS:  # bytes: ASCII digits only
        n = int(digits)
        if n <= MAX_BODY_BYTES:
            return n
    shown = digits[:20].decode("ascii", "backslashreplace")
    if not digits.isdigit():
        return f"Content-Length `{shown}` is not a number of bytes"
    return f"Content-Length `{shown}` is over the {MAX_BODY_BYTES:,}-byte limit"


def can_be_header(line: bytes | bytearray) -> bool:
    """Whether ``line``, a header line still arriving, may yet be one: a header name
    (at least one token character), then ``:`` or nothing more so far."""
    return _LINE_START.match(line) is not None


class FrameParser:
    """Feed it bytes as they arrive; it yields each complete body (``bytes``) and each
    :class:`FrameError`, in stream order.

    :meth:`feed` may be iterated lazily; a consumer that stops early (the server was told
    to exit) leaves the rest unread and does not feed the parser again.
    """

    def __init__(self) -> None:
        #: Bytes received and not used yet: from the current header block's start, the
        #: start of the body being waited for, or the tail of skipped bytes.
        self._rest = bytearray()
        #: Where parsing resumes in ``_rest`` (past the block's complete header lines).
        self._resume = 0
        #: Stream offset of ``_rest[0]`` (of the data being parsed, during :meth:`feed`).
        self._offset = 0
        self._body: int | None = None  # length of the body being waited for
        self._skipping = False  # looking for the next frame after an error
        #: Errors found before this stream offset were answered already (a frame looked
        #: at again while resynchronising is not answered twice).
        self._quiet_until = 0
        # The current header block: whether it has a header line yet, its Content-Length,
        # and why it is unusable.
        self._headers = False
        self._length: int | None = None
        self._bad: str | None = None

    def feed(self, data: bytes) -> Iterator[bytes | FrameError]:
        rest = self._rest
        pos = 0
        if rest:
            rest += data
            if self._body is not None:
                if len(rest) < self._body:
                    return  # the body is still coming: nothing to copy yet
            elif not self._skipping and b"\n" not in data:
                line = rest[self._resume :]
                if len(rest) <= MAX_HEADER_BYTES and (not line.strip(b"\r") or can_be_header(line)):
                    return  # so is the header line
            data = bytes(rest)
            rest.clear()
            pos, self._resume = self._resume, 0
        size = len(data)
        block = 0  # where the current header block starts in ``data``
        while pos < size or self._body == 0:
            if self._skipping:
                found = _NEXT_FRAME.search(data, pos)
                if found is None:
                    pos = max(pos, size - _KEEP)
                    break
                pos = block = found.start()
                self._skipping = False
                continue
            if self._body is not None:
                end = pos + self._body
                if end > size:
                    break
                body = data[pos:end]
                pos = block = end
                self._body = None
                yield body
                continue
            end = data.find(b"\n", pos)
            why = self._header_line(data, block, pos, end)
            if why is None:
                if end < 0:
                    break  # the rest of the line is still coming
                pos = end + 1
                if self._body is not None or not self._headers:
                    block = pos  # a body follows, or a blank line between frames
                continue
            # Look again from just after the block's start: a body sent without a header
            # may run straight into the next frame's header.
            found_at = self._offset + (size if end < 0 else end + 1)
            self._skipping = True
            self._headers = False
            self._length = self._bad = None
            pos = block = block + 1
            if found_at > self._quiet_until:
                self._quiet_until = found_at
                yield FrameError(why)
        keep = block if (self._body is None and not self._skipping) else pos
        if keep < size:
            self._rest += data[keep:]
            self._resume = pos - keep
        self._offset += keep

    def _header_line(self, data: bytes, block: int, pos: int, end: int) -> str | None:
        """Take the header line at ``pos`` (ending at the newline at ``end``; -1: still
        arriving); why the frame cannot be read, or None."""
        if (size := (end + 1 if end >= 0 else len(data)) - block) > MAX_HEADER_BYTES:
            return f"its header lines are over {MAX_HEADER_BYTES:,} bytes ({size:,} seen)"
        if end < 0:
            line = data[pos:]
            if line.strip(b"\r") and not can_be_header(line):
                return "a line that is no header was found where a header belongs"
            return None
        if end - pos <= 1 and data[pos] in b"\r\n":  # an empty line: LF or CRLF
            if not self._headers:
                return None  # a blank line between frames
            self._headers = False
            if self._bad is not None:
                return self._bad
            if self._length is None:
                return "its header has no Content-Length"
            self._body, self._length = self._length, None
            return None
        colon = data.find(b":", pos, end)
        if colon < 0 or _NAME.fullmatch(data, pos, colon) is None:
            return "a line that is no header was found where a header belongs"
        self._headers = True
        if colon - pos == 14 and data[pos:colon].lower() == b"content-length":
            length = content_length(data[colon + 1 : end + 1])
            if isinstance(length, str):
                self._bad = self._bad or length
            elif self._length is not None and self._length != length:
                self._bad = self._bad or "its header has two different Content-Length values"
            else:
                self._length = length
        return None

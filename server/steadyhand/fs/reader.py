"""Reading files without ever blocking or following a swapped-in link.

Files are opened through no symbolic link and checked on the descriptor before a byte is
read (:mod:`steadyhand.fs.checked_open`): a regular file, with one link unless hard links
are allowed (``links_ok``), and, when the caller knows it (``expect``), the device and
inode the path resolved to. A FIFO or device put in place after the path check is never
opened for reading, and a hard link swapped in is never read. Large files are read in a
single streaming pass with bounded memory: the hash, the line count and the requested
window come out together.
"""

from __future__ import annotations

import bisect
import codecs
import os
import threading
from dataclasses import dataclass
from typing import Any

from steadyhand.fs.checked_open import Identity, open_checked
from steadyhand.protocol.errors import ErrorCode, ToolError
from steadyhand.state.hashing import streaming_hasher
from steadyhand.text.encoding import (
    BinaryContent,
    Encoding,
    decode,
    looks_binary,
    sniff_encoding,
)

CHUNK = 1 << 20

#: What to do about a binary file: read shows images and PDFs, and no tool (write
#: included: it reads the file it replaces) changes any other binary file.
BINARY_NEXT_STEP = (
    "it cannot be read or edited as text, and write cannot replace it either. Do not "
    "retry: read shows only images and PDFs, and this file is neither. Leave it as it "
    "is, or ask the user to change or remove it if it must change."
)


@dataclass(frozen=True, slots=True)
class RawFile:
    data: bytes
    st: os.stat_result


def read_failed(path: str, exc: OSError) -> ToolError:
    """The refusal for a read the OS failed part-way."""
    return ToolError(ErrorCode.IO_ERROR, f"Cannot read {path}: {exc.strerror}.", path=path)


def _open(
    path: str, *, links_ok: bool = False, expect: Identity | None = None
) -> tuple[int, os.stat_result]:
    """A reading descriptor of the real path ``path`` and its status, once the file is
    checked on its descriptor (:func:`~steadyhand.fs.checked_open.open_checked`). No
    component may be a symbolic link: the path was resolved to a real one, so a link
    here was swapped in after the check (it would lead outside the workspace)."""
    try:
        return open_checked(path, links_ok=links_ok, expect=expect)
    except FileNotFoundError as exc:
        raise ToolError(ErrorCode.NOT_FOUND, f"{path} does not exist.", path=path) from exc
    except IsADirectoryError as exc:
        raise ToolError(ErrorCode.IS_DIRECTORY, f"{path} is a directory.", path=path) from exc
    except OSError as exc:
        raise ToolError(
            ErrorCode.IO_ERROR,
            f"Cannot open {path}: {exc.strerror}. Check the path and permissions.",
            path=path,
        ) from exc


#: How far past the size it reported when opened a file is read before the read stops:
#: a file that grows without end while it is read (a special file such as
#: ``/proc/self/pagemap`` reports size 0 and never ends) is refused, never read into
#: memory or streamed for ever.
GROWTH_ALLOWANCE = 32 << 20


def _check_growth(path: str, st: os.stat_result, consumed: int) -> None:
    """Refuse (``too_large``) once ``consumed`` bytes are past what a file that reported
    ``st.st_size`` bytes may have grown to while it was read."""
    if consumed > st.st_size + GROWTH_ALLOWANCE:
        raise ToolError(
            ErrorCode.TOO_LARGE,
            f"{path} kept growing while it was read: it reported {st.st_size:,} bytes but "
            f"gave more than {st.st_size + GROWTH_ALLOWANCE:,}, so the read was stopped. If "
            "it is a log being written fast, read a range with offset and limit once it "
            "settles; a special file that is generated as it is read (such as those under "
            "/proc) cannot be read with these tools.",
            path=path,
        )


def read_all(path: str, *, links_ok: bool = False, expect: Identity | None = None) -> RawFile:
    """The whole file (see :func:`_open` for ``links_ok`` and ``expect``)."""
    fd, st = _open(path, links_ok=links_ok, expect=expect)
    try:
        chunks: list[bytes] = []
        consumed = 0
        while True:
            chunk = os.read(fd, max(CHUNK, st.st_size + 1))
            if not chunk:
                break
            chunks.append(chunk)
            consumed += len(chunk)
            _check_growth(path, st, consumed)
    except OSError as exc:
        raise read_failed(path, exc) from exc
    finally:
        os.close(fd)
    return RawFile(b"".join(chunks) if len(chunks) != 1 else chunks[0], st)


def decode_or_refuse(path: str, data: bytes) -> tuple[str, Encoding]:
    try:
        return decode(data)
    except BinaryContent as exc:
        raise ToolError(
            ErrorCode.BINARY,
            f"{path} is a binary file ({exc}); {BINARY_NEXT_STEP}",
            path=path,
        ) from exc


def encode_or_refuse(path: str, text: str, enc: Encoding) -> bytes:
    """``text`` in the encoding ``enc`` the file ``path`` is stored in; ``io_error`` when
    that encoding cannot hold some character of it (a file never changes its encoding
    behind the user's back)."""
    try:
        return enc.encode(text)
    except UnicodeEncodeError as exc:
        bad = exc.object[exc.start : exc.end]
        raise ToolError(
            ErrorCode.IO_ERROR,
            f"{path} is stored as {enc.label}, which cannot hold the character(s) {bad!r} "
            "you sent, so nothing was changed. Use characters that encoding can store (or "
            "an escape), and retry.",
            path=path,
        ) from exc


@dataclass(frozen=True, slots=True)
class Window:
    """A window of lines of a large file, from one streaming pass."""

    lines: list[str]
    total_lines: int
    hash: str
    st: os.stat_result
    encoding: Encoding
    crlf: bool
    cr: bool
    #: The window stopped before ``limit`` lines: its lines hold ``max_bytes`` already.
    capped: bool = False


_MAX_KEPT_LINE = 1 << 20


@dataclass(frozen=True, slots=True)
class LineIndex:
    """What one full pass learned about a large file without CR line breaks: its hash,
    its line count, and where some lines start (one mark per chunk read)."""

    identity: tuple[int, int, int, int, int]  # device, inode, size, mtime, ctime
    hash: str
    total_lines: int
    encoding: Encoding
    #: line numbers (1-based, ascending) and the byte offsets where those lines start
    mark_lines: list[int]
    mark_offsets: list[int]


#: Recent large files' indexes, by path (most recently used last).
_INDEXES: dict[str, LineIndex] = {}
_INDEXES_KEPT = 8
_INDEX_LOCK = threading.Lock()


def _identity(st: os.stat_result) -> tuple[int, int, int, int, int]:
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def _remember_index(path: str, index: LineIndex) -> None:
    with _INDEX_LOCK:
        _INDEXES.pop(path, None)
        _INDEXES[path] = index
        while len(_INDEXES) > _INDEXES_KEPT:
            del _INDEXES[next(iter(_INDEXES))]


def stream_window(
    path: str,
    offset: int,
    limit: int,
    max_bytes: int | None = None,
    *,
    links_ok: bool = False,
    expect: Identity | None = None,
) -> Window:
    """Lines ``offset..offset+limit-1`` (1-based) of a UTF-8 text file, in bounded memory.

    One pass: every byte is hashed, line breaks are counted, and only the lines inside
    the window are kept (each at most 1 MiB; longer ones are cut). ``max_bytes``: the
    window ends early, after the line that brings what it keeps to that many bytes
    (``capped``), however large ``limit`` is. The pass leaves an
    index behind; a later window of the same file, unchanged since (same device, inode,
    size, modification and change times), starts at the nearest line it marked and
    reads only what lies between there and the window's end. (``links_ok``, ``expect``:
    see :func:`_open`.)
    """
    fd, st = _open(path, links_ok=links_ok, expect=expect)
    with _INDEX_LOCK:
        index = _INDEXES.get(path)
    try:
        budget = _Budget(max_bytes)
        if index is not None and index.identity == _identity(st):
            lines = _window_at(fd, path, index, offset, offset + limit - 1, budget)
            return Window(
                lines, index.total_lines, index.hash, st, index.encoding, False, False, budget.full
            )
        return _full_pass(fd, st, path, offset, limit, budget)
    finally:
        os.close(fd)


class _Budget:
    """The bytes a window may keep (None: no limit), and whether they were used up."""

    __slots__ = ("full", "left")

    def __init__(self, max_bytes: int | None) -> None:
        self.left = max_bytes
        self.full = False

    def spend(self, kept: bytes | str) -> bool:
        """Count a kept line; True once the window must keep no more."""
        if self.left is None:
            return False
        self.left -= len(kept) * (2 if isinstance(kept, str) else 1)
        if self.left <= 0:
            self.full = True
        return self.full


def _window_at(
    fd: int, path: str, index: LineIndex, lo: int, hi: int, budget: _Budget
) -> list[str]:
    """Lines ``lo..hi`` read from the nearest marked line at or before ``lo``."""
    k = bisect.bisect_right(index.mark_lines, lo) - 1
    n, pos = (index.mark_lines[k], index.mark_offsets[k]) if k >= 0 else (1, 0)
    if k < 0 and index.encoding.bom:
        pos = len(index.encoding.bom_bytes())
    codec = index.encoding.codec
    lines: list[str] = []
    tail = b""  # the start of line ``n``, when it is inside the window
    try:
        os.lseek(fd, pos, os.SEEK_SET)
        while n <= hi:
            chunk = os.read(fd, CHUNK)
            if not chunk:
                if tail and lo <= n and not budget.full:
                    lines.append(tail[:_MAX_KEPT_LINE].decode(codec, "replace"))
                break
            breaks = chunk.count(b"\n")
            if n + breaks < lo:  # every line this chunk ends or starts is before the window
                n += breaks
                tail = b""
                continue
            parts = chunk.split(b"\n")
            parts[0] = tail + parts[0]
            for part in parts[:-1]:
                if lo <= n:
                    kept = part[:_MAX_KEPT_LINE]
                    lines.append(kept.decode(codec, "replace"))
                    if budget.spend(kept):
                        hi = n
                n += 1
                if n > hi:
                    break
            tail = parts[-1][:_MAX_KEPT_LINE] if lo <= n <= hi else b""
    except OSError as exc:
        raise read_failed(path, exc) from exc
    return lines


def _first_chunk(path: str, chunk: bytes) -> Encoding | None:
    """The byte-order mark's encoding of a large file, refusing what a ranged read cannot
    show as text: what :func:`decode` refuses."""
    try:
        sniffed = sniff_encoding(chunk[:4])
    except BinaryContent as exc:
        raise ToolError(
            ErrorCode.BINARY, f"{path} is a binary file ({exc}); {BINARY_NEXT_STEP}", path=path
        ) from exc
    if sniffed is None and looks_binary(chunk):
        raise ToolError(ErrorCode.BINARY, f"{path} is a binary file; {BINARY_NEXT_STEP}", path=path)
    return sniffed


def _full_pass(
    fd: int, st: os.stat_result, path: str, offset: int, limit: int, budget: _Budget
) -> Window:
    hasher = streaming_hasher()
    kept: list[bytes] = []  # the window's lines, decoded once the encoding is known
    total = 0  # complete lines seen so far
    partial = False  # the current line has content after the last break
    tail = b""  # bytes of the current line, kept only when it is inside the window
    pending_cr = False
    saw_crlf = saw_cr = False
    enc = Encoding("utf-8")
    # Every byte is checked as strict UTF-8, as a whole read decodes it: the first
    # invalid sequence anywhere makes the file Latin-1, like :func:`decode` does, so a
    # range shows the text an edit will match.
    utf8 = codecs.getincrementaldecoder("utf-8")("strict")
    valid = True
    lo, hi = offset, offset + limit - 1
    first = True
    consumed = 0  # bytes read before this chunk
    mark_lines: list[int] = []
    mark_offsets: list[int] = []
    indexable = True  # no CR anywhere: raw offsets are line offsets
    try:
        while True:
            chunk = os.read(fd, CHUNK)
            if not chunk:
                break
            hasher.update(chunk)
            base = consumed
            consumed += len(chunk)
            _check_growth(path, st, consumed)
            if first:
                first = False
                sniffed = _first_chunk(path, chunk)
                if sniffed is not None and sniffed.codec.startswith("utf-16"):
                    return _utf16_pass(fd, st, path, lo, hi, hasher, chunk, sniffed, budget)
                if sniffed is not None:
                    enc = sniffed
                    chunk = chunk[3:]
                    base += 3
            if valid:
                try:
                    utf8.decode(chunk)
                except UnicodeDecodeError:
                    valid = False
            if pending_cr:
                chunk = b"\r" + chunk
                pending_cr = False
            if chunk.endswith(b"\r"):
                chunk = chunk[:-1]
                pending_cr = True
            if b"\r" in chunk:
                indexable = False
                saw_crlf = saw_crlf or b"\r\n" in chunk
                chunk = chunk.replace(b"\r\n", b"\n")
                saw_cr = saw_cr or b"\r" in chunk
                chunk = chunk.replace(b"\r", b"\n")
            if not chunk:
                continue
            breaks = chunk.count(b"\n")
            if indexable and breaks:  # the line after this chunk's last break starts here
                mark_lines.append(total + breaks + 1)
                mark_offsets.append(base + chunk.rfind(b"\n") + 1)
            if total + breaks + 1 < lo or total + 1 > hi:
                # Nothing of this chunk is inside the window: count only.
                total += breaks
                partial = not chunk.endswith(b"\n") if breaks else (partial or True)
                continue
            parts = chunk.split(b"\n")
            for part in parts[:-1]:
                total += 1
                if lo <= total <= hi:
                    kept.append((tail + part)[:_MAX_KEPT_LINE])
                    if budget.spend(kept[-1]):
                        hi = total
                tail = b""
            last = parts[-1]
            if breaks == 0:
                partial = partial or bool(last)
            else:
                partial = bool(last)
            if lo <= total + 1 <= hi and len(tail) < _MAX_KEPT_LINE:
                tail += last
        if pending_cr:
            # A final lone CR ends the last line.
            saw_cr = True
            partial = True
            tail_done = True
        else:
            tail_done = False
        if partial or tail_done:
            total += 1
            if lo <= total <= hi:
                kept.append(tail[:_MAX_KEPT_LINE])
    except OSError as exc:
        raise read_failed(path, exc) from exc
    if valid:
        try:
            utf8.decode(b"", final=True)
        except UnicodeDecodeError:
            valid = False
    if not valid:
        enc = _not_utf8(path, enc)
    digest = hasher.hexdigest()
    if indexable and not saw_cr and consumed == st.st_size:
        _remember_index(
            path, LineIndex(_identity(st), digest, total, enc, mark_lines, mark_offsets)
        )
    # ("replace" only matters for a line cut inside a character: the rest is valid.)
    lines = [b.decode(enc.codec, "replace") for b in kept]
    return Window(lines, total, digest, st, enc, saw_crlf, saw_cr, budget.full)


def _utf16_pass(
    fd: int,
    st: os.stat_result,
    path: str,
    lo: int,
    hi: int,
    hasher: Any,
    first: bytes,
    enc: Encoding,
    budget: _Budget,
) -> Window:
    """:func:`_full_pass` for UTF-16 (LE or BE, after its byte-order mark): the bytes are
    decoded strictly in chunks (an incremental decoder keeps a code unit or a surrogate
    pair cut by a chunk's end for the next one), and lines are counted in the decoded
    text, breaking at LF, CRLF and CR as a whole read does. Every byte is hashed. No
    index is kept: its byte offsets would have to be counted in code units."""
    decoder = codecs.getincrementaldecoder(enc.codec)("strict")
    data = first[len(enc.bom_bytes()) :]
    kept: list[str] = []
    total = 0
    partial = False
    tail = ""
    pending_cr = False
    saw_crlf = saw_cr = False
    consumed = len(first)
    try:
        while True:
            final = not data
            try:
                text = decoder.decode(data, final=final)
            except UnicodeDecodeError as exc:
                raise ToolError(
                    ErrorCode.BINARY,
                    f"{path} is a binary file (invalid {enc.codec} after its byte-order "
                    f"mark); {BINARY_NEXT_STEP}",
                    path=path,
                ) from exc
            if pending_cr:
                text = "\r" + text
                pending_cr = False
            if not final and text.endswith("\r"):
                text = text[:-1]
                pending_cr = True
            if "\r" in text:
                saw_crlf = saw_crlf or "\r\n" in text
                text = text.replace("\r\n", "\n")
                saw_cr = saw_cr or "\r" in text
                text = text.replace("\r", "\n")
            if text:
                breaks = text.count("\n")
                if total + breaks + 1 < lo or total + 1 > hi:
                    total += breaks
                    partial = not text.endswith("\n") if breaks else True
                else:
                    parts = text.split("\n")
                    for part in parts[:-1]:
                        total += 1
                        if lo <= total <= hi:
                            kept.append((tail + part)[:_MAX_KEPT_LINE])
                            if budget.spend(kept[-1]):
                                hi = total
                        tail = ""
                    last = parts[-1]
                    partial = (partial or bool(last)) if breaks == 0 else bool(last)
                    if lo <= total + 1 <= hi and len(tail) < _MAX_KEPT_LINE:
                        tail += last
            if final:
                break
            data = os.read(fd, CHUNK)
            hasher.update(data)
            consumed += len(data)
            _check_growth(path, st, consumed)
    except OSError as exc:
        raise read_failed(path, exc) from exc
    if partial:
        total += 1
        if lo <= total <= hi:
            kept.append(tail[:_MAX_KEPT_LINE])
    return Window(kept, total, hasher.hexdigest(), st, enc, saw_crlf, saw_cr, budget.full)


def _not_utf8(path: str, enc: Encoding) -> Encoding:
    """The encoding of a file that is not valid UTF-8, as :func:`decode` decides it."""
    if enc.bom:
        raise ToolError(
            ErrorCode.BINARY,
            f"{path} is a binary file (invalid utf-8 after its byte-order mark); "
            f"{BINARY_NEXT_STEP}",
            path=path,
        )
    return Encoding("latin-1")

"""Reading files without ever blocking or following a swapped-in link.

Files are opened with ``O_NONBLOCK | O_NOFOLLOW`` and checked with ``fstat`` to be the
regular file that was resolved, so a FIFO or device put in place after the path check
cannot hang the server. Large files are read in a single streaming pass with bounded
memory: the hash, the line count and the requested window come out together.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass

from steadyhand.fs.atomic import open_confined
from steadyhand.protocol.errors import ErrorCode, ToolError
from steadyhand.state.hashing import streaming_hasher
from steadyhand.text.encoding import BinaryContent, Encoding, decode, sniff_encoding

CHUNK = 1 << 20


@dataclass(frozen=True, slots=True)
class RawFile:
    data: bytes
    st: os.stat_result


def read_failed(path: str, exc: OSError) -> ToolError:
    """The refusal for a read the OS failed part-way."""
    return ToolError(ErrorCode.IO_ERROR, f"Cannot read {path}: {exc.strerror}.", path=path)


def _open(path: str) -> tuple[int, os.stat_result]:
    try:
        # No component may be a symbolic link: the path was resolved to a real one, so a
        # link here was swapped in after the check (it would lead outside the workspace).
        fd = open_confined(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
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
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode):
        os.close(fd)
        code = ErrorCode.IS_DIRECTORY if stat.S_ISDIR(st.st_mode) else ErrorCode.NOT_REGULAR_FILE
        raise ToolError(code, f"{path} is not a regular file.", path=path)
    return fd, st


def read_all(path: str) -> RawFile:
    fd, st = _open(path)
    try:
        chunks: list[bytes] = []
        while True:
            chunk = os.read(fd, max(CHUNK, st.st_size + 1))
            if not chunk:
                break
            chunks.append(chunk)
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
            f"{path} is a binary file ({exc}); it cannot be read or edited as text.",
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


_MAX_KEPT_LINE = 1 << 20


def stream_window(path: str, offset: int, limit: int) -> Window:
    """Lines ``offset..offset+limit-1`` (1-based) of a UTF-8 text file, in bounded memory.

    One pass: every byte is hashed, line breaks are counted, and only the lines inside
    the window are kept (each at most 1 MiB; longer ones are cut).
    """
    fd, st = _open(path)
    hasher = streaming_hasher()
    lines: list[str] = []
    total = 0  # complete lines seen so far
    partial = False  # the current line has content after the last break
    tail = b""  # bytes of the current line, kept only when it is inside the window
    pending_cr = False
    saw_crlf = saw_cr = False
    enc = Encoding("utf-8")
    lo, hi = offset, offset + limit - 1
    first = True
    try:
        while True:
            chunk = os.read(fd, CHUNK)
            if not chunk:
                break
            hasher.update(chunk)
            if first:
                first = False
                sniffed = sniff_encoding(chunk[:4])
                if sniffed is not None and sniffed.codec != "utf-8":
                    raise ToolError(
                        ErrorCode.TOO_LARGE,
                        f"{path} is a large UTF-16 file; ranged reads of files over the read "
                        "cap support UTF-8 only.",
                        path=path,
                    )
                if sniffed is not None:
                    enc = sniffed
                    chunk = chunk[3:]
                if b"\x00" in chunk[:8192]:
                    raise ToolError(
                        ErrorCode.BINARY,
                        f"{path} is a binary file; it cannot be read as text.",
                        path=path,
                    )
            if pending_cr:
                chunk = b"\r" + chunk
                pending_cr = False
            if chunk.endswith(b"\r"):
                chunk = chunk[:-1]
                pending_cr = True
            if b"\r" in chunk:
                saw_crlf = saw_crlf or b"\r\n" in chunk
                chunk = chunk.replace(b"\r\n", b"\n")
                saw_cr = saw_cr or b"\r" in chunk
                chunk = chunk.replace(b"\r", b"\n")
            if not chunk:
                continue
            breaks = chunk.count(b"\n")
            if total + breaks + 1 < lo or total + 1 > hi:
                # Nothing of this chunk is inside the window: count only.
                total += breaks
                partial = not chunk.endswith(b"\n") if breaks else (partial or True)
                continue
            parts = chunk.split(b"\n")
            for part in parts[:-1]:
                total += 1
                if lo <= total <= hi:
                    lines.append((tail + part)[:_MAX_KEPT_LINE].decode(enc.codec, "replace"))
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
                lines.append(tail[:_MAX_KEPT_LINE].decode(enc.codec, "replace"))
    except OSError as exc:
        raise read_failed(path, exc) from exc
    finally:
        os.close(fd)
    return Window(lines, total, hasher.hexdigest(), st, enc, saw_crlf, saw_cr)

"""In-process baselines: the least work each operation needs, done directly in Python.

No protocol, no checks beyond what the operation itself needs. ``fsync=True`` adds the
same durability Steadyhand's default has (fsync of the file and of its folder).
"""

from __future__ import annotations

import os


def _write_replace(path: str, data: bytes, *, fsync: bool) -> None:
    tmp = f"{path}.floor.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        os.write(fd, data)
        if fsync:
            os.fsync(fd)
    finally:
        os.close(fd)
    os.rename(tmp, path)
    if fsync:
        _fsync_dir(os.path.dirname(path))


def _fsync_dir(folder: str) -> None:
    dfd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(dfd)
    finally:
        os.close(dfd)


def read(path: str, lines: int | None = None) -> str:
    """The file's text, or its first ``lines`` lines."""
    with open(path, "rb") as f:
        if lines is None:
            return f.read().decode("utf-8")
        return b"".join(f.readline() for _ in range(lines)).decode("utf-8")


def edit(path: str, old: str, new: str, *, fsync: bool = False) -> None:
    """read -> count -> replace -> write temp -> rename."""
    with open(path, "rb") as f:
        text = f.read().decode("utf-8")
    if text.count(old) != 1:
        raise ValueError("old text must occur exactly once")
    _write_replace(path, text.replace(old, new, 1).encode("utf-8"), fsync=fsync)


def write(path: str, content: str, *, fsync: bool = False) -> None:
    _write_replace(path, content.encode("utf-8"), fsync=fsync)


def create(path: str, content: str, *, fsync: bool = False) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    try:
        os.write(fd, content.encode("utf-8"))
        if fsync:
            os.fsync(fd)
    finally:
        os.close(fd)
    if fsync:
        _fsync_dir(os.path.dirname(path))


def ranged_read(path: str, offset: int, limit: int) -> list[str]:
    """Lines offset..offset+limit-1 of a big file: one chunked pass counting line breaks
    (no hashing, no encoding checks)."""
    out: list[str] = []
    seen = 0  # complete lines before the current chunk
    carry = b""  # the start of line seen+1 (bytes after the last line break)
    with open(path, "rb", buffering=0) as f:
        while True:
            chunk = f.read(1 << 20)
            if not chunk:
                break
            n = chunk.count(b"\n")
            if seen + n + 1 < offset:
                seen += n
                carry = chunk[chunk.rfind(b"\n") + 1 :] if n else carry + chunk
                continue
            parts = (carry + chunk).split(b"\n")
            carry = parts.pop()
            for j, part in enumerate(parts):
                if seen + 1 + j >= offset:
                    out.append(part.decode("utf-8", "replace"))
                    if len(out) >= limit:
                        return out
            seen += n
    if carry and len(out) < limit and seen + 1 >= offset:
        out.append(carry.decode("utf-8", "replace"))
    return out

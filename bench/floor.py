"""In-process baselines: the least work each operation needs, done directly in Python.

No protocol, no checks beyond what the operation itself needs. ``fsync=True`` adds the
same durability Steadyhand's default has (fsync of the file and of its folder).
"""

from __future__ import annotations

import contextlib
import os
import statistics
import time


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


def read(path: str) -> str:
    with open(path, "rb") as f:
        return f.read().decode("utf-8")


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


def create_cost(folder: str, n: int = 25) -> float:
    """The median time (ms) of an exclusive create of an empty file in ``folder``; the
    files are removed again. Every atomic write creates a file, and what that costs
    depends on the file system's state (docs/performance.md, "The file system's state")."""
    dfd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    names = [f".probe-{os.getpid()}-{i}" for i in range(n)]
    times: list[float] = []
    try:
        for name in names:
            t0 = time.perf_counter_ns()
            fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600, dir_fd=dfd)
            times.append((time.perf_counter_ns() - t0) / 1e6)
            os.close(fd)
    finally:
        for name in names:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(name, dir_fd=dfd)
        os.close(dfd)
    return statistics.median(times)


def file_system(path: str) -> str:
    """The kind of file system ``path`` is on, and for ext4 whether it keeps a journal
    (without one, ext4 does not hand out the numbers of files deleted in the last minute
    or so again, and skipping them makes creating files slower)."""
    best, kind, dev = "", "unknown", ""
    try:
        with open("/proc/mounts", encoding="utf-8") as f:
            for line in f:
                parts = line.split()
                if len(parts) < 3:
                    continue
                mnt = parts[1]
                inside = path == mnt or path.startswith(mnt.rstrip("/") + "/")
                if inside and len(mnt) >= len(best):
                    best, kind, dev = mnt, parts[2], parts[0]
    except OSError:
        return kind
    if kind == "ext4":
        try:
            with open(f"/sys/fs/ext4/{os.path.basename(dev)}/journal_task", encoding="utf-8") as f:
                journal = f.read().strip()
        except OSError:
            return kind
        return "ext4 without a journal" if journal == "<none>" else "ext4 with a journal"
    return kind

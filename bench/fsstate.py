"""The file system's state, as far as it moves the benchmark's figures.

Every atomic write and every create makes a file, and on ext4 without a journal what that
costs depends on how many files were deleted nearby in the last minutes
(docs/performance.md, "The file system's state"). The benchmark spreads its folders over
the disk (:func:`spread`), so that one row's deletions do not slow the next row's creates,
and records what a create costs before and after each row (:func:`create_cost`).
"""

from __future__ import annotations

import array
import contextlib
import fcntl
import os
import statistics
import time

#: ``FS_IOC_GETFLAGS`` / ``FS_IOC_SETFLAGS`` (Linux, 64-bit) and the "top of a directory
#: hierarchy" flag (``chattr +T``): ext4 places the sub-folders of such a folder in block
#: groups of their own, spread over the disk, instead of next to it.
_FS_IOC_GETFLAGS = 0x80086601
_FS_IOC_SETFLAGS = 0x40086602
_FS_TOPDIR_FL = 0x00020000


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


def spread(folder: str) -> bool:
    """Mark ``folder`` so that the file system places its sub-folders apart from each
    other and from it; False where that cannot be done (another file system, no right)."""
    try:
        fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    except OSError:
        return False
    try:
        flags = array.array("i", [0])
        fcntl.ioctl(fd, _FS_IOC_GETFLAGS, flags, True)
        flags[0] |= _FS_TOPDIR_FL
        fcntl.ioctl(fd, _FS_IOC_SETFLAGS, flags, True)
        return True
    except OSError:
        return False
    finally:
        with contextlib.suppress(OSError):
            os.close(fd)

"""Atomic replacement of a file's bytes: temp file in the same folder, fsync, rename.

A reader of the path sees either the old bytes or the new ones, never a mix, and a
failure at any step leaves the old file exactly as it was and no temp file behind.
"""

from __future__ import annotations

import contextlib
import os
import re
import secrets
import stat
import time

from steadyhand.fs.syscalls import Syscalls

TEMP_PATTERN = re.compile(r"^\..*\.steadyhand-(\d+)-[0-9a-f]{8}\.tmp$")
_MAX_BASE = 100


def temp_name(path: str) -> str:
    folder, base = os.path.split(path)
    return os.path.join(
        folder, f".{base[:_MAX_BASE]}.steadyhand-{os.getpid()}-{secrets.token_hex(4)}.tmp"
    )


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def make_parents(folder: str, sys: Syscalls) -> list[str]:
    """Create ``folder`` and missing parents; returns what was created (outermost first)."""
    created: list[str] = []
    missing: list[str] = []
    cur = folder
    while not os.path.isdir(cur):
        missing.append(cur)
        parent = os.path.dirname(cur)
        if parent == cur:
            break
        cur = parent
    for d in reversed(missing):
        sys.mkdir(d, 0o777)
        created.append(d)
    return created


def atomic_write(path: str, data: bytes, *, sys: Syscalls, fsync: bool = True) -> os.stat_result:
    """Replace ``path`` (a real path, no symlink) with ``data`` atomically.

    Keeps the file's permission bits (and owner, where allowed). Creates missing parent
    folders for a new file, removing them again if the write fails.
    """
    folder = os.path.dirname(path)
    try:
        existing: os.stat_result | None = os.lstat(path)
    except FileNotFoundError:
        existing = None
    created = make_parents(folder, sys) if existing is None else []
    mode = stat.S_IMODE(existing.st_mode) if existing else (0o666 & ~_umask())
    tmp = temp_name(path)
    fd = -1
    try:
        fd = sys.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC | os.O_NOFOLLOW)
        view = memoryview(data)
        while view:
            n = sys.write(fd, view)
            if n <= 0:
                raise OSError(5, "write made no progress")
            view = view[n:]
        sys.fchmod(fd, mode)
        if existing is not None and hasattr(os, "fchown"):
            with contextlib.suppress(OSError):
                os.fchown(fd, existing.st_uid, existing.st_gid)
        if fsync:
            sys.fsync(fd)
        fd_to_close, fd = fd, -1
        sys.close(fd_to_close)
        sys.rename(tmp, path)
    except BaseException:
        if fd >= 0:
            with contextlib.suppress(OSError):
                os.close(fd)
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        for d in reversed(created):
            with contextlib.suppress(OSError):
                os.rmdir(d)
        raise
    if fsync:
        _fsync_folder(folder)
    return os.stat(path)


def _fsync_folder(folder: str) -> None:
    try:
        dfd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    except OSError:
        return
    try:
        os.fsync(dfd)
    except OSError:
        pass
    finally:
        os.close(dfd)


def _pid_alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def clean_stale_temps(folder: str, *, min_age_s: float = 0.0) -> list[str]:
    """Remove temp files left in ``folder`` by a Steadyhand process that no longer runs.

    Only names of Steadyhand's own temp pattern are considered, only regular files, and
    only when the process that made them is gone; a user's file is never touched.
    """
    removed: list[str] = []
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return removed
    now = time.time()
    for entry in entries:
        m = TEMP_PATTERN.match(entry.name)
        if not m:
            continue
        try:
            st = entry.stat(follow_symlinks=False)
        except OSError:
            continue
        if not stat.S_ISREG(st.st_mode) or now - st.st_mtime < min_age_s:
            continue
        if _pid_alive(int(m.group(1))):
            continue
        with contextlib.suppress(OSError):
            os.unlink(entry.path)
            removed.append(entry.path)
    return removed

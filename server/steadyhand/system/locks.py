"""Locks between processes on a file held open: ``flock`` on POSIX, ``LockFileEx`` on Windows.

Both are released when the descriptor is closed, and by the system when the process
ends, however it ends: a crashed server never leaves a lock behind. Folders cannot be
locked on Windows; :func:`folder_lock_file` names a file in the state folder that stands
for a folder there.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import sys
from collections.abc import Iterator

from steadyhand.system import at, flags
from steadyhand.system.dirs import state_dir

if sys.platform == "win32":
    from steadyhand.system import win32

    def lock(fd: int) -> None:
        """Wait for the exclusive lock on the file ``fd``."""
        win32.lock_handle(win32.fd_handle(fd), "")

    def unlock(fd: int) -> None:
        win32.unlock_handle(win32.fd_handle(fd))

else:
    import fcntl

    def lock(fd: int) -> None:
        """Wait for the exclusive lock on the file (or folder) ``fd``."""
        fcntl.flock(fd, fcntl.LOCK_EX)

    def unlock(fd: int) -> None:
        fcntl.flock(fd, fcntl.LOCK_UN)


def folder_lock_file(folder: str) -> str:
    """The file that stands for ``folder`` in the lock of :func:`folder_locked` where a
    folder cannot be locked itself (Windows): one per folder, in the state folder."""
    key = hashlib.sha256(os.path.normcase(folder).encode("utf-8", "surrogatepass")).hexdigest()
    return os.path.join(state_dir(), "locks", key[:32] + ".lock")


@contextlib.contextmanager
def folder_locked(dfd: int) -> Iterator[None]:
    """Hold the exclusive lock of the folder ``dfd`` (best effort: where the lock cannot
    be had, the body runs unlocked)."""
    fd = _folder_lock_fd(dfd)
    if fd is None:
        yield
        return
    try:
        try:
            lock(fd)
        except OSError:
            yield
            return
        try:
            yield
        finally:
            with contextlib.suppress(OSError):
                unlock(fd)
    finally:
        if fd != dfd:
            os.close(fd)


def _folder_lock_fd(dfd: int) -> int | None:
    if sys.platform != "win32":
        return dfd
    path = folder_lock_file(at.path_of(dfd))
    try:
        os.makedirs(os.path.dirname(path), 0o700, exist_ok=True)
        return os.open(path, os.O_RDWR | os.O_CREAT | flags.CLOEXEC | flags.BINARY, 0o600)
    except OSError:
        return None

"""The C library's calls only Linux has: the pipe size, glibc's allocator, inotify."""

from __future__ import annotations

import contextlib
import os
import stat
import sys
from functools import cache
from typing import Any


@cache
def glibc() -> Any | None:
    """The process's C library if it is glibc, with ``mallopt`` and ``malloc_trim``
    (None elsewhere: musl, macOS's libSystem, Windows's CRT). Told by the library
    itself, not by the system's name."""
    try:
        import ctypes

        libc = ctypes.CDLL(None)
        libc.gnu_get_libc_version  # noqa: B018 - glibc's own
        libc.mallopt  # noqa: B018
        libc.malloc_trim  # noqa: B018
    except (OSError, TypeError, AttributeError):  # Windows: no CDLL(None)
        return None
    return libc


def inotify() -> tuple[Any, int] | None:
    """The C library and a new non-blocking, close-on-exec inotify descriptor (Linux);
    None where there is no inotify (then ``errno`` says why, on Linux)."""
    if sys.platform != "linux":
        return None
    import ctypes

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        init = libc.inotify_init1
        libc.inotify_add_watch.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_uint32]
    except (OSError, AttributeError):
        return None
    fd = int(init(os.O_NONBLOCK | os.O_CLOEXEC))
    if fd < 0:
        return None
    return libc, fd


def widen_pipe(fd: int, size: int) -> None:
    """Ask for a pipe of ``size`` bytes (Linux's ``F_SETPIPE_SZ``; elsewhere pipes keep
    their size, 64 KiB on macOS, and a write of a large answer waits for the reader)."""
    if sys.platform != "linux":
        return
    import fcntl

    with contextlib.suppress(OSError, ValueError):
        if stat.S_ISFIFO(os.fstat(fd).st_mode):
            fcntl.fcntl(fd, fcntl.F_SETPIPE_SZ, size)

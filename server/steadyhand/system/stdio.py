"""The standard streams of a server a host started: which the event loop can wait on, and
making one non-blocking for the time the server runs.

On POSIX systems a pipe or a socket can be waited on by the event loop and written
without blocking. On Windows the pipes a host hands over are not overlapped: the proactor
event loop cannot read them, so they are read on a thread and written in place.
"""

from __future__ import annotations

import contextlib
import os
import stat
import sys


def loop_can_wait_on(fd: int) -> bool:
    """Whether the event loop can wait on ``fd`` (a pipe or socket, not on Windows)."""
    if sys.platform == "win32":
        return False
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or stat.S_ISCHR(mode)


def make_nonblocking(fd: int) -> bool | None:
    """Make the pipe or socket ``fd`` non-blocking; whether it was blocking before, or
    None when it was left as it is (not a pipe or socket, or Windows)."""
    if sys.platform == "win32":
        return None
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        return None
    if not (stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)):
        return None
    was = os.get_blocking(fd)
    os.set_blocking(fd, False)
    return was


def restore_blocking(fd: int, was_blocking: bool | None) -> None:
    """Undo :func:`make_nonblocking` (given what it answered)."""
    if sys.platform == "win32" or not was_blocking:
        return
    with contextlib.suppress(OSError):
        os.set_blocking(fd, True)

"""The pipes a server talks over: stdin and stdout made wide enough for a whole answer."""

from __future__ import annotations

import contextlib
import os
import stat
from typing import BinaryIO

#: Pipe capacity asked for on stdin and stdout (Linux; the default is 64 KiB).
PIPE_BYTES = 1 << 20


def widen_pipes(*streams: BinaryIO) -> None:
    """Let a whole answer (a read of 1,000 lines is about 75 KB) fit in the pipe at once,
    so that writing it never waits for the client to drain the first 64 KiB."""
    try:
        import fcntl
    except ImportError:  # not a POSIX system
        return
    set_size = getattr(fcntl, "F_SETPIPE_SZ", None)
    if set_size is None:
        return
    for stream in streams:
        with contextlib.suppress(OSError, ValueError):
            fd = stream.fileno()
            if stat.S_ISFIFO(os.fstat(fd).st_mode):
                fcntl.fcntl(fd, set_size, PIPE_BYTES)

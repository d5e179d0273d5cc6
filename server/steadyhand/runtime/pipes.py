"""The pipes a server talks over: stdin and stdout made wide enough for a whole answer."""

from __future__ import annotations

import contextlib
from typing import BinaryIO

from steadyhand.system.native import widen_pipe

#: Pipe capacity asked for on stdin and stdout (Linux; the default is 64 KiB).
PIPE_BYTES = 1 << 20


def widen_pipes(*streams: BinaryIO) -> None:
    """Let a whole answer (a read of 1,000 lines is about 75 KB) fit in the pipe at once,
    so that writing it never waits for the client to drain the first 64 KiB (Linux;
    elsewhere nothing happens: :func:`steadyhand.system.native.widen_pipe`)."""
    for stream in streams:
        with contextlib.suppress(OSError, ValueError):
            widen_pipe(stream.fileno(), PIPE_BYTES)

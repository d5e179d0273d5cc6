"""``os.open`` flags, as each system spells them (0 where a system has no such flag)."""

from __future__ import annotations

import os
import sys

if sys.platform == "win32":
    #: Not inherited by child processes.
    CLOEXEC = os.O_NOINHERIT
    #: Windows follows no link named last unless asked (:mod:`steadyhand.system.checked`).
    NOFOLLOW = 0
    NONBLOCK = 0
    #: Bytes as they are: no newline translation.
    BINARY = os.O_BINARY
    #: Folders are never opened with ``os.open`` there (:mod:`steadyhand.system.at`).
    FOLDER = 0
else:
    CLOEXEC = os.O_CLOEXEC
    NOFOLLOW = os.O_NOFOLLOW
    NONBLOCK = os.O_NONBLOCK
    BINARY = 0
    FOLDER = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC

#: Reading a file Steadyhand checked: never blocks (a FIFO swapped in is never waited on).
READ = os.O_RDONLY | NONBLOCK | CLOEXEC | BINARY

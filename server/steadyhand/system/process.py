"""Whether a process is still running (the maker of a temp file, a journal, a socket),
asked without touching it.

On POSIX systems this is signal 0 (``kill(pid, 0)``), which checks and sends nothing. On
Windows ``os.kill`` with any signal but a console event ends the process, so the process
is opened for its exit code instead (``OpenProcess`` + ``GetExitCodeProcess``).
"""

from __future__ import annotations

import os
import sys

if sys.platform == "win32":
    from steadyhand.system import win32


def alive(pid: int) -> bool:
    """Whether process ``pid`` is running (one that exists but is not this user's counts;
    a pid that cannot be a process does not)."""
    if pid == os.getpid():
        return True
    if pid <= 0:
        return False
    if sys.platform == "win32":
        return pid <= 0xFFFFFFFF and win32.process_alive(pid)
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    except OverflowError:
        return False
    return True

"""Whether a process is still running (the maker of a temp file, of a journal)."""

from __future__ import annotations

import os
import sys

if sys.platform == "win32":
    from steadyhand.system import win32

    def pid_alive(pid: int) -> bool:
        """``OpenProcess`` + ``GetExitCodeProcess`` (``os.kill`` would end the process
        on Windows, whatever the signal)."""
        if pid == os.getpid():
            return True
        return win32.process_alive(pid)

else:

    def pid_alive(pid: int) -> bool:
        """``kill(pid, 0)``: no signal is sent, only whether the process exists."""
        if pid == os.getpid():
            return True
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
        return True

"""The one place that chooses per operating system.

Every call that exists on one system and not another (how a file is opened without
following a link, how a file is replaced atomically, locks, where state and sockets live,
who is at the other end of a socket) is made here, behind a function that has the same
meaning on Linux, macOS and Windows. Nothing outside this package branches on
``sys.platform`` or reaches for a name only one system has.

- :mod:`~steadyhand.system.flags`: ``os.open`` flags as each system spells them;
- :mod:`~steadyhand.system.at`: calls inside a folder held open (``dir_fd`` on POSIX, a
  pinned folder path on Windows);
- :mod:`~steadyhand.system.checked`: looking at what a name holds, then opening that file;
- :mod:`~steadyhand.system.rename`: replace, swap, never-replace renames; one open through
  no symbolic link;
- :mod:`~steadyhand.system.locks`: locks between processes;
- :mod:`~steadyhand.system.metadata`: extended attributes and ACLs a replaced file keeps;
- :mod:`~steadyhand.system.names`: whether a volume ignores case, a name's stored spelling;
- :mod:`~steadyhand.system.dirs`: the state folder;
- :mod:`~steadyhand.system.process`: whether a process is alive;
- :mod:`~steadyhand.system.native`: Linux's pipe size, glibc's allocator, inotify;
- :mod:`~steadyhand.system.win32`: the kernel32 calls, through ctypes.
"""

from __future__ import annotations

import sys

#: Whether paths follow Windows' rules (drive letters, ``\\``, UNC, streams, devices).
WINDOWS_PATHS = sys.platform == "win32"

#: The system the mechanisms below were chosen for.
if sys.platform == "win32":
    NAME = "windows"
    MECHANISMS: dict[str, str] = {
        "checked_open": "CreateFileW(FILE_FLAG_OPEN_REPARSE_POINT) + ReOpenFile"
        " + GetFinalPathNameByHandleW",
        "atomic_replace": "ReplaceFileW / MoveFileExW(MOVEFILE_WRITE_THROUGH), retried"
        " while another program holds the file",
        "locks": "LockFileEx",
        "watch": "watchdog (ReadDirectoryChangesW)",
    }
elif sys.platform == "darwin":
    NAME = "macos"
    MECHANISMS = {
        "checked_open": "fstatat + O_NOFOLLOW|O_NONBLOCK + fcntl(F_GETPATH)",
        "atomic_replace": "renameatx_np(RENAME_SWAP, RENAME_EXCL)",
        "locks": "flock",
        "watch": "watchdog (FSEvents)",
    }
elif sys.platform == "linux":
    NAME = "linux"
    MECHANISMS = {
        "checked_open": "openat2(RESOLVE_NO_SYMLINKS) + O_PATH + /proc/self/fd",
        "atomic_replace": "renameat2(RENAME_EXCHANGE, RENAME_NOREPLACE), O_TMPFILE",
        "locks": "flock",
        "watch": "inotify",
    }
else:
    NAME = sys.platform
    MECHANISMS = {
        "checked_open": "fstatat + O_NOFOLLOW|O_NONBLOCK",
        "atomic_replace": "rename, checked just before",
        "locks": "flock",
        "watch": "watchdog",
    }


def describe() -> dict[str, object]:
    """Which system this is and the mechanism each promise uses here (for a health
    check, and the log at start-up)."""
    from steadyhand.system.dirs import state_dir

    return {"os": NAME, **MECHANISMS, "state_dir": state_dir()}

"""An emulated macOS for the Steadyhand server's process (and no other).

On ``PYTHONPATH`` with ``STEADYHAND_EMULATE=macos``, this runs at the start of every
Python process; in a Steadyhand server (``python -m steadyhand ...`` or the
``steadyhand`` script) it sets ``sys.platform`` to ``"darwin"`` and removes the names of
``os``, ``socket`` and ``fcntl`` that macOS does not have, before any of the server is
imported. The standard library keeps working (asyncio picks its selector by feature,
watchdog falls back to its polling observer, ``ctypes.util.find_library("c")`` answers
None), so the server takes its macOS branches on a Linux kernel: what cannot start or
run without a Linux-only call is caught; what a macOS kernel would do differently is
not. With ``STEADYHAND_EMULATE_HIDE_PROC=1`` and root, the process also gets a mount
namespace of its own in which ``/proc`` is an empty folder.
"""

from __future__ import annotations

import itertools
import os
import sys

#: Names of ``os`` that exist on Linux and not on macOS.
_OS_NAMES = (
    "O_PATH",
    "O_TMPFILE",
    "O_DIRECT",
    "O_NOATIME",
    "O_LARGEFILE",
    "O_RSYNC",
    "getxattr",
    "setxattr",
    "listxattr",
    "removexattr",
    "XATTR_CREATE",
    "XATTR_REPLACE",
    "XATTR_SIZE_MAX",
    "memfd_create",
    "eventfd",
    "eventfd_read",
    "eventfd_write",
    "pidfd_open",
    "splice",
    "copy_file_range",
    "fdatasync",
    "pipe2",
    "posix_fadvise",
    "posix_fallocate",
    "sched_setaffinity",
    "sched_getaffinity",
    "getrandom",
    "pwritev",
    "preadv",
    "statx",
)
_SOCKET_NAMES = (
    "SO_PEERCRED",
    "SO_PASSCRED",
    "SO_PEERSEC",
    "AF_NETLINK",
    "AF_PACKET",
    "SOCK_CLOEXEC",
    "SOCK_NONBLOCK",
)
_FCNTL_NAMES = ("F_SETPIPE_SZ", "F_GETPIPE_SZ", "F_OFD_SETLK", "F_OFD_SETLKW", "F_OFD_GETLK")


def _is_server() -> bool:
    argv = getattr(sys, "orig_argv", sys.argv)
    if any(a == "-m" and b == "steadyhand" for a, b in itertools.pairwise(argv)):
        return True
    return len(argv) > 1 and os.path.basename(argv[1]) == "steadyhand"


def _hide_proc() -> None:
    """A mount namespace of this process's own, with ``/proc`` an empty tmpfs."""
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    clone_newns, ms_rec, ms_private = 0x00020000, 0x4000, 0x40000
    if libc.unshare(clone_newns) != 0:
        return
    libc.mount(b"none", b"/", None, ms_rec | ms_private, None)
    libc.mount(b"none", b"/proc", b"tmpfs", 0, None)


def _emulate() -> None:
    if os.environ.get("STEADYHAND_EMULATE_HIDE_PROC") == "1" and os.geteuid() == 0:
        _hide_proc()
    import fcntl
    import socket

    sys.platform = "darwin"
    for module, names in ((os, _OS_NAMES), (socket, _SOCKET_NAMES), (fcntl, _FCNTL_NAMES)):
        for name in names:
            if hasattr(module, name):
                delattr(module, name)
    os.supports_dir_fd.discard(getattr(os, "statx", None))


if os.environ.get("STEADYHAND_EMULATE") == "macos" and _is_server():
    _emulate()

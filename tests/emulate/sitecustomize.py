"""An emulated macOS for the Steadyhand server's process (and no other).

On ``PYTHONPATH`` with ``STEADYHAND_EMULATE=macos``, this runs at the start of every
Python process; in a Steadyhand server (``python -m steadyhand ...`` or the
``steadyhand`` script) it sets ``sys.platform`` to ``"darwin"`` and removes the names of
``os``, ``socket`` and ``fcntl`` that macOS does not have, before any of the server is
imported. The standard library keeps working (asyncio picks its selector by feature,
watchdog falls back to its polling observer, ``ctypes.util.find_library("c")`` answers
None), so the server takes its macOS branches on a Linux kernel: what cannot start or
run without a Linux-only call is caught; what a macOS kernel would do differently is
not. One macOS call is carried out by its Linux equivalent, as an emulator would: an
``open`` with macOS 11's ``O_NOFOLLOW_ANY`` (no symbolic link anywhere on the path) is
made with ``openat2(RESOLVE_NO_SYMLINKS)``, and ``platform.mac_ver()`` reports 14.0, so
the branch that uses it runs (a Linux kernel would silently ignore the flag); and where a
C compiler is at hand, ``ctypes.util.find_library("c")`` names a small library
(``libc_shim.c``) whose ``renameatx_np`` is Linux's ``renameat2``, ``fcopyfile`` does
nothing and ``getpeereid`` reads Linux's ``SO_PEERCRED``, so the macOS calls behind the
atomic swap run, and attached mode's peer check takes the path it takes on a BSD
without ``LOCAL_PEERCRED`` (which a Linux kernel refuses on a Unix socket). Without a
compiler it answers None, as a plain emulation does: the server falls back to a check
right before a plain rename, and, unable to tell who is at the other end of its
socket, trusts no one, so the tests of attached mode fail (closed). With
``STEADYHAND_EMULATE_HIDE_PROC=1`` and root, the process also gets a mount namespace of
its own in which ``/proc`` is an empty folder.
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


_O_NOFOLLOW_ANY = 0x20000000


def _nofollow_any() -> None:
    """``os.open`` with ``O_NOFOLLOW_ANY`` (macOS) made by ``openat2`` (Linux)."""
    import ctypes
    import errno
    import platform

    libc = ctypes.CDLL(None, use_errno=True)
    syscall = libc.syscall
    syscall.restype = ctypes.c_long

    class OpenHow(ctypes.Structure):
        _fields_ = [
            ("flags", ctypes.c_uint64),
            ("mode", ctypes.c_uint64),
            ("resolve", ctypes.c_uint64),
        ]

    real_open = os.open

    def emulated_open(path, flags, mode=0o777, *, dir_fd=None):  # type: ignore[no-untyped-def]
        if not flags & _O_NOFOLLOW_ANY:
            return real_open(path, flags, mode, dir_fd=dir_fd)
        flags &= ~_O_NOFOLLOW_ANY
        # openat2 takes a mode only with O_CREAT (else EINVAL); RESOLVE_NO_SYMLINKS
        how = OpenHow(flags | os.O_CLOEXEC, mode if flags & os.O_CREAT else 0, 0x04)
        raw = os.fsencode(path)
        at = -100 if dir_fd is None else dir_fd
        while True:
            fd = syscall(437, at, ctypes.c_char_p(raw), ctypes.byref(how), ctypes.sizeof(how))
            if fd >= 0:
                return int(fd)
            err = ctypes.get_errno()
            if err != errno.EINTR:
                raise OSError(err, os.strerror(err), path)

    os.open = emulated_open
    platform.mac_ver = lambda *a, **k: ("14.0", ("", "", ""), "x86_64")  # type: ignore[assignment]


def _libc_shim() -> None:
    """``find_library("c")`` answers the shim library, built once (when ``cc`` is there)."""
    import ctypes.util
    import hashlib
    import shutil
    import subprocess
    import tempfile

    here = os.path.dirname(os.path.abspath(__file__))
    source = os.path.join(here, "libc_shim.c")
    cc = shutil.which("cc")
    if cc is None or not os.path.exists(source):
        return
    with open(source, "rb") as f:
        tag = hashlib.sha256(f.read()).hexdigest()[:16]
    cache = os.path.join(tempfile.gettempdir(), f"steadyhand-emulate-{os.geteuid()}")
    built = os.path.join(cache, f"libc_shim-{tag}.so")
    if not os.path.exists(built):
        os.makedirs(cache, exist_ok=True)
        part = f"{built}.{os.getpid()}"
        done = subprocess.run(
            [cc, "-shared", "-fPIC", "-O2", "-o", part, source], capture_output=True
        )
        if done.returncode != 0:
            return
        os.replace(part, built)
    real = ctypes.util.find_library

    def find_library(name: str) -> str | None:
        return built if name == "c" else real(name)

    ctypes.util.find_library = find_library


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
    _nofollow_any()
    _libc_shim()


if os.environ.get("STEADYHAND_EMULATE") == "macos" and _is_server():
    _emulate()

"""The system calls of the write path, behind one seam.

All disk writes go through a :class:`Syscalls` object. The default one calls the OS;
:class:`FaultPlan` lets tests make a named call fail (ENOSPC, EIO, a short write, ...)
on its n-th use, inside a real server process, selected by the ``STEADYHAND_FAULTS``
environment variable (see docs/reliability.md). Nothing else in the server touches
``os.write``/``os.rename`` for user files.
"""

from __future__ import annotations

import ctypes
import errno
import os
import platform
import sys
import threading
import time
from dataclasses import dataclass, field
from typing import Any

#: ``renameat2`` flags (Linux >= 3.15).
RENAME_NOREPLACE = 1
RENAME_EXCHANGE = 2
#: A file without a name (Linux; 0 elsewhere, where the open then fails with EINVAL or
#: EISDIR and the caller writes a named temp file instead).
_ANONYMOUS_FLAGS = getattr(os, "O_TMPFILE", 0) | os.O_WRONLY | os.O_CLOEXEC

_libc: ctypes.CDLL | None
try:
    _libc = ctypes.CDLL(None, use_errno=True)
    _renameat2: Any = getattr(_libc, "renameat2", None)
except OSError:  # pragma: no cover - no C library to load
    _libc, _renameat2 = None, None
if _renameat2 is not None:
    _renameat2.argtypes = [
        ctypes.c_int,
        ctypes.c_char_p,
        ctypes.c_int,
        ctypes.c_char_p,
        ctypes.c_uint,
    ]
    _renameat2.restype = ctypes.c_int

_AT_FDCWD = -100

#: ``openat2`` (Linux >= 5.6): its number is the same on every architecture listed.
_NR_OPENAT2 = 437
_OPENAT2_MACHINES = frozenset({"x86_64", "amd64", "aarch64", "arm64", "riscv64"})
#: ``open_how.resolve``: fail with ELOOP if any component of the path is a symbolic link.
RESOLVE_NO_SYMLINKS = 0x04


class _OpenHow(ctypes.Structure):
    _fields_ = [
        ("flags", ctypes.c_uint64),
        ("mode", ctypes.c_uint64),
        ("resolve", ctypes.c_uint64),
    ]


_syscall: Any = getattr(_libc, "syscall", None) if _libc is not None else None
if _syscall is not None:
    _syscall.restype = ctypes.c_long
#: Cleared when the kernel turns out not to know ``openat2``.
_openat2_known = (
    _syscall is not None
    and sys.platform.startswith("linux")
    and platform.machine().lower() in _OPENAT2_MACHINES
)


def open_no_symlinks(path: str, flags: int) -> int:
    """Open the absolute ``path`` in one call in which no component, the last one
    included, may be a symbolic link (``openat2`` with ``RESOLVE_NO_SYMLINKS``).

    Raises ``OSError``: ``ELOOP`` if a component is a link, ``ENOSYS`` where the kernel
    or the C library cannot do this (callers then walk the path one folder at a time).
    The descriptor is close-on-exec. ``flags`` must not create a file.
    """
    global _openat2_known
    if not _openat2_known:
        raise OSError(errno.ENOSYS, "openat2 is not available", path)
    how = _OpenHow(flags | os.O_CLOEXEC, 0, RESOLVE_NO_SYMLINKS)
    raw = os.fsencode(path)
    while True:
        fd = _syscall(
            ctypes.c_long(_NR_OPENAT2),
            ctypes.c_long(_AT_FDCWD),
            ctypes.c_char_p(raw),
            ctypes.byref(how),
            ctypes.c_size_t(ctypes.sizeof(how)),
        )
        if fd >= 0:
            return int(fd)
        err = ctypes.get_errno()
        if err != errno.EINTR:
            break
    if err == errno.ENOSYS:
        _openat2_known = False
    raise OSError(err, os.strerror(err), path)


def renameat2(src: str, dst: str, flags: int, dir_fd: int | None = None) -> None:
    """``renameat2(2)``; raises ``OSError(ENOSYS)`` where the C library lacks it."""
    if _renameat2 is None:
        raise OSError(errno.ENOSYS, "renameat2 is not available", src)
    fd = _AT_FDCWD if dir_fd is None else dir_fd
    if _renameat2(fd, os.fsencode(src), fd, os.fsencode(dst), flags) != 0:
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err), src)


class Syscalls:
    """Thin wrappers over the OS calls used to write files.

    ``dir_fd`` pins a call to a folder opened earlier, so a folder swapped for a symbolic
    link after the path was checked cannot redirect the write.
    """

    def open(self, path: str, flags: int, mode: int = 0o600, dir_fd: int | None = None) -> int:
        return os.open(path, flags, mode, dir_fd=dir_fd)

    def open_dir(self, name: str, dir_fd: int) -> int:
        """Open the folder ``name`` inside ``dir_fd``, never through a symbolic link."""
        return os.open(
            name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=dir_fd
        )

    def open_folder(self, path: str) -> int:
        """Open the folder at the absolute ``path`` in one call, through no symbolic link
        (:func:`open_no_symlinks`; ``ENOSYS`` where that cannot be done)."""
        return open_no_symlinks(path, os.O_RDONLY | os.O_DIRECTORY)

    def open_anonymous(self, dir_fd: int, mode: int = 0o600) -> int:
        """A new file without a name in the folder ``dir_fd`` (``O_TMPFILE``), to be
        given one by :meth:`link_anonymous` once complete; it vanishes if it never is."""
        return os.open(".", _ANONYMOUS_FLAGS, mode, dir_fd=dir_fd)

    def link_anonymous(self, fd: int, name: str, dir_fd: int) -> None:
        """Give the file ``fd`` made by :meth:`open_anonymous` the name ``name`` in
        ``dir_fd``; ``FileExistsError`` if the name is taken (it is never replaced).
        Through ``/proc/self/fd``, which needs no privilege (``AT_EMPTY_PATH`` would)."""
        os.link(f"/proc/self/fd/{fd}", name, dst_dir_fd=dir_fd, follow_symlinks=True)

    def write(self, fd: int, data: bytes | memoryview) -> int:
        return os.write(fd, data)

    def fsync(self, fd: int) -> None:
        os.fsync(fd)

    def fchmod(self, fd: int, mode: int) -> None:
        os.fchmod(fd, mode)

    def fchown(self, fd: int, uid: int, gid: int) -> None:
        os.fchown(fd, uid, gid)

    def close(self, fd: int) -> None:
        os.close(fd)

    def rename(self, src: str, dst: str, dir_fd: int | None = None, flags: int = 0) -> None:
        """Rename within one folder: replace (``flags=0``), or ``RENAME_EXCHANGE`` /
        ``RENAME_NOREPLACE``."""
        if flags:
            renameat2(src, dst, flags, dir_fd)
        else:
            os.replace(src, dst, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)

    def unlink(self, path: str, dir_fd: int | None = None) -> None:
        os.unlink(path, dir_fd=dir_fd)

    def mkdir(self, path: str, mode: int = 0o777, dir_fd: int | None = None) -> None:
        os.mkdir(path, mode, dir_fd=dir_fd)

    def fsync_dir(self, fd: int) -> None:
        os.fsync(fd)


@dataclass
class Fault:
    call: str  # a Syscalls method name
    error: int  # errno, or 0 for a short write / a pause
    at: int = 1  # fail on this use of the call (1 = first)
    seen: int = 0
    pause_s: float = 0.0  # > 0: sleep this long before the call instead of failing


@dataclass
class FaultPlan(Syscalls):
    """Syscalls that fail (or pause) as planned; each fault fires once."""

    faults: list[Fault] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def _check(self, call: str) -> Fault | None:
        hit: Fault | None = None
        with self._lock:
            for f in self.faults:
                if f.call == call and f.seen < f.at:
                    f.seen += 1
                    if f.seen == f.at:
                        hit = f
                        break
        if hit is None:
            return None
        if hit.pause_s > 0:
            time.sleep(hit.pause_s)
            return None
        if hit.error:
            raise OSError(hit.error, os.strerror(hit.error) + " (injected)")
        return hit

    def open(self, path: str, flags: int, mode: int = 0o600, dir_fd: int | None = None) -> int:
        self._check("open")
        return super().open(path, flags, mode, dir_fd)

    def open_dir(self, name: str, dir_fd: int) -> int:
        self._check("open_dir")
        return super().open_dir(name, dir_fd)

    def open_folder(self, path: str) -> int:
        self._check("open_dir")  # the same step as the walk's open_dir: opening a folder
        return super().open_folder(path)

    def open_anonymous(self, dir_fd: int, mode: int = 0o600) -> int:
        self._check("open")  # the same step as opening a named temp file
        return super().open_anonymous(dir_fd, mode)

    def link_anonymous(self, fd: int, name: str, dir_fd: int) -> None:
        self._check("rename")  # the same step as renaming a temp file into place
        super().link_anonymous(fd, name, dir_fd)

    def write(self, fd: int, data: bytes | memoryview) -> int:
        if self._check("write") is not None and len(data) > 1:
            return super().write(fd, memoryview(data)[: len(data) // 2])
        return super().write(fd, data)

    def fsync(self, fd: int) -> None:
        self._check("fsync")
        super().fsync(fd)

    def fchmod(self, fd: int, mode: int) -> None:
        self._check("fchmod")
        super().fchmod(fd, mode)

    def fchown(self, fd: int, uid: int, gid: int) -> None:
        self._check("fchown")
        super().fchown(fd, uid, gid)

    def close(self, fd: int) -> None:
        self._check("close")
        super().close(fd)

    def rename(self, src: str, dst: str, dir_fd: int | None = None, flags: int = 0) -> None:
        self._check("rename")
        super().rename(src, dst, dir_fd, flags)

    def unlink(self, path: str, dir_fd: int | None = None) -> None:
        self._check("unlink")
        super().unlink(path, dir_fd)

    def mkdir(self, path: str, mode: int = 0o777, dir_fd: int | None = None) -> None:
        self._check("mkdir")
        super().mkdir(path, mode, dir_fd)

    def fsync_dir(self, fd: int) -> None:
        self._check("fsync_dir")
        super().fsync_dir(fd)


#: Every call of the write path, in the order a write makes them (for fault sweeps).
WRITE_PATH_CALLS = (
    "open_dir",
    "mkdir",
    "open",
    "write",
    "fchmod",
    "fchown",
    "fsync",
    "close",
    "rename",
    "unlink",
    "fsync_dir",
)


def parse_faults(spec: str) -> FaultPlan:
    """``"write:ENOSPC:1,rename:EIO:2,write:short:1,open:pause0.5:1"`` -> a :class:`FaultPlan`.

    Each item is ``call:what:n``: on the n-th use of ``call`` (default 1), fail with the
    errno named ``what``, write only half the bytes (``short``), or sleep (``pauseSECONDS``,
    so a test can change the disk while a write is in progress).
    """
    faults: list[Fault] = []
    for item in filter(None, (s.strip() for s in spec.split(","))):
        call, err, *rest = item.split(":")
        at = int(rest[0]) if rest else 1
        if err.startswith("pause"):
            faults.append(Fault(call, 0, at, pause_s=float(err[5:])))
        else:
            faults.append(Fault(call, 0 if err == "short" else getattr(errno, err), at))
    return FaultPlan(faults)


def from_environment() -> Syscalls:
    spec = os.environ.get("STEADYHAND_FAULTS", "")
    return parse_faults(spec) if spec else Syscalls()

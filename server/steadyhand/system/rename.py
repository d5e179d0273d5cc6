"""Renames that replace atomically, swap two names, or never replace: each system's own call.

- swap two names (the compare-and-swap): Linux ``renameat2(RENAME_EXCHANGE)``, macOS
  ``renameatx_np(RENAME_SWAP)``, Windows ``ReplaceFileW`` with a backup name, the backup
  then renamed to the other name;
- never replace: ``renameat2(RENAME_NOREPLACE)``, ``renameatx_np(RENAME_EXCL)``,
  ``MoveFileExW`` without ``MOVEFILE_REPLACE_EXISTING``;
- replace: ``renameat`` on POSIX; on Windows ``ReplaceFileW`` (the file keeps its ACL,
  attributes and streams), or ``MoveFileExW(MOVEFILE_REPLACE_EXISTING |
  MOVEFILE_WRITE_THROUGH)`` where nothing is there yet.

Where a call is missing (an old kernel, a C library without the symbol, a file system
that refuses the flag) :func:`rename_flags` raises ``OSError`` with ``ENOSYS`` or
``EINVAL``, and the caller falls back to a check right before a plain replace.

On Windows a file another program holds open without ``FILE_SHARE_DELETE`` (an editor,
an indexer, an antivirus scanner) cannot be replaced for a while: each call is tried
again for about a second (:data:`BUSY_TRIES`, :func:`tried`), then :class:`FileBusy` is
raised and nothing has changed. :func:`replace_own` is the same for Steadyhand's own
files (the history store's index and blobs), replaced by a plain ``os.replace``.
"""

from __future__ import annotations

import ctypes
import errno
import os
import platform
import secrets
import sys
import time
from collections.abc import Callable
from typing import Any, TypeVar

from steadyhand.system import at, win32

_T = TypeVar("_T")

#: Swap the two names (both must exist).
RENAME_EXCHANGE = 2
#: Fail with ``FileExistsError`` if the new name exists.
RENAME_NOREPLACE = 1

#: Delays between the tries of a Windows rename a busy file refuses (about 1.3 s in all).
BUSY_DELAYS = (0.01, 0.02, 0.05, 0.1, 0.2, 0.3, 0.3, 0.3)
BUSY_TRIES = len(BUSY_DELAYS) + 1


class FileBusy(OSError):
    """Another program holds the file open in a way that forbids replacing it (Windows:
    opened without ``FILE_SHARE_DELETE``), try after try. Nothing was changed."""

    def __init__(self, path: str, cause: OSError) -> None:
        super().__init__(errno.EBUSY, f"held open by another program ({cause.strerror})", path)
        self.cause = cause


def is_busy(exc: OSError) -> bool:
    """Whether ``exc`` says another program holds the file open so that it cannot be
    replaced for now (Windows's sharing, lock and access errors). Never so elsewhere: a
    POSIX rename does not wait on a file being open."""
    return getattr(exc, "winerror", None) in win32.BUSY_ERRORS


#: How :func:`tried` waits between tries (a test puts its own here).
_sleep: Callable[[float], None] = time.sleep


def tried(call: Callable[[], _T], path: str, busy: Callable[[OSError], bool] | None = None) -> _T:
    """``call()``, tried again after each of :data:`BUSY_DELAYS` while it fails because
    another program holds ``path`` (``busy``, by default :func:`is_busy`); then
    :class:`FileBusy`. Any other error is raised at once. ``call`` must change all or
    nothing when it fails (a rename does), so nothing has changed when this raises."""
    judge = busy if busy is not None else is_busy
    for delay in (*BUSY_DELAYS, None):
        try:
            return call()
        except OSError as exc:
            if not judge(exc):
                raise
            if delay is None:
                raise FileBusy(path, exc) from exc
            _sleep(delay)
    raise AssertionError("unreachable")  # pragma: no cover


def replace_own(src: str, dst: str) -> None:
    """``os.replace(src, dst)`` for Steadyhand's own files (nothing of the replaced file
    to keep), tried again for about a second while another program holds ``dst`` open
    (Windows), then :class:`FileBusy` with ``dst`` as it was."""
    tried(lambda: os.replace(src, dst), dst)


_AT_FDCWD = -100

if sys.platform == "linux":
    _libc: Any
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

    def rename_flags(src: str, dst: str, flags: int, dfd: int | None = None) -> None:
        """``renameat2(2)``; ``OSError(ENOSYS)`` where the C library lacks it."""
        if _renameat2 is None:
            raise OSError(errno.ENOSYS, "renameat2 is not available", src)
        fd = _AT_FDCWD if dfd is None else dfd
        if _renameat2(fd, os.fsencode(src), fd, os.fsencode(dst), flags) != 0:
            err = ctypes.get_errno()
            raise OSError(err, os.strerror(err), src)

elif sys.platform == "darwin":
    import ctypes.util

    #: ``renameatx_np`` flags (``<stdio.h>``, macOS 10.12).
    _RENAME_SWAP = 0x2
    _RENAME_EXCL = 0x4
    _found = ctypes.util.find_library("c")
    _renameatx: Any = None
    if _found:  # None where no libc can be named (an emulated macOS): fall back
        try:
            _renameatx = getattr(ctypes.CDLL(_found, use_errno=True), "renameatx_np", None)
        except OSError:
            _renameatx = None
    if _renameatx is not None:
        _renameatx.argtypes = [
            ctypes.c_int,
            ctypes.c_char_p,
            ctypes.c_int,
            ctypes.c_char_p,
            ctypes.c_uint,
        ]
        _renameatx.restype = ctypes.c_int

    def rename_flags(src: str, dst: str, flags: int, dfd: int | None = None) -> None:
        """``renameatx_np(2)``; ``OSError(ENOSYS)`` where the C library lacks it."""
        if _renameatx is None:
            raise OSError(errno.ENOSYS, "renameatx_np is not available", src)
        mac = (_RENAME_SWAP if flags & RENAME_EXCHANGE else 0) | (
            _RENAME_EXCL if flags & RENAME_NOREPLACE else 0
        )
        fd = _AT_FDCWD if dfd is None else dfd
        if _renameatx(fd, os.fsencode(src), fd, os.fsencode(dst), mac) != 0:
            err = ctypes.get_errno()
            raise OSError(err, os.strerror(err), src)

elif sys.platform == "win32":

    def rename_flags(src: str, dst: str, flags: int, dfd: int | None = None) -> None:
        """The swap by ``ReplaceFileW`` and the no-replace rename by ``MoveFileExW``."""
        a, b = at.full(src, dfd), at.full(dst, dfd)
        if flags & RENAME_EXCHANGE:
            _swap(a, b)
        elif flags & RENAME_NOREPLACE:
            try:
                _tried(lambda: win32.move(a, b, win32.MOVEFILE_WRITE_THROUGH), b)
            except FileBusy:
                raise
            except OSError as exc:
                if exc.errno == errno.EEXIST:
                    raise FileExistsError(errno.EEXIST, "the name exists", b) from None
                raise
        else:
            replace(src, dst, dfd)

    def _swap(a: str, b: str) -> None:
        """``b`` gets ``a``'s file and ``a`` the file ``b`` had, through a backup name
        (``ReplaceFileW`` keeps ``b``'s ACL and attributes on the new file)."""
        folder, name = os.path.split(b)
        backup = os.path.join(
            folder, f".{name[:100]}.steadyhand-{os.getpid()}-{secrets.token_hex(4)}.tmp"
        )
        try:
            _tried(lambda: win32.replace_file(b, a, backup), b)
        except OSError as exc:
            if getattr(exc, "winerror", None) == win32.ERROR_UNABLE_TO_MOVE_REPLACEMENT_2:
                # b was moved to the backup and a could not take its place: undo
                win32.move(backup, b, win32.MOVEFILE_WRITE_THROUGH)
            raise
        win32.move(backup, a, win32.MOVEFILE_WRITE_THROUGH)

    def replace(src: str, dst: str, dfd: int | None = None) -> None:
        a, b = at.full(src, dfd), at.full(dst, dfd)

        def once() -> None:
            try:
                win32.replace_file(b, a, None)
            except FileNotFoundError:  # nothing to replace: a plain move
                win32.move(a, b, win32.MOVEFILE_REPLACE_EXISTING | win32.MOVEFILE_WRITE_THROUGH)

        _tried(once, b)

    _tried = tried

else:

    def rename_flags(src: str, dst: str, flags: int, dfd: int | None = None) -> None:
        raise OSError(errno.ENOSYS, "no rename with flags on this system", src)


if sys.platform != "win32":

    def replace(src: str, dst: str, dfd: int | None = None) -> None:
        """Put ``src`` in place of ``dst`` in one step (``dst`` may not exist)."""
        os.replace(src, dst, src_dir_fd=dfd, dst_dir_fd=dfd)


# -- one open in which no component may be a symbolic link ------------------------------

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


if sys.platform == "linux":
    _syscall: Any = getattr(_libc, "syscall", None) if _libc is not None else None
    if _syscall is not None:
        _syscall.restype = ctypes.c_long
    #: Cleared when the kernel turns out not to know ``openat2``.
    _openat2_known = _syscall is not None and platform.machine().lower() in _OPENAT2_MACHINES

    def open_no_symlinks(path: str, flags: int) -> int:
        """Open the absolute ``path`` in one call in which no component, the last one
        included, may be a symbolic link (``openat2`` with ``RESOLVE_NO_SYMLINKS``).

        Raises ``OSError``: ``ELOOP`` if a component is a link, ``ENOSYS`` where the
        kernel or the C library cannot do this (callers then walk the path one folder at
        a time). The descriptor is close-on-exec. ``flags`` must not create a file.
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

elif sys.platform == "darwin":
    #: ``O_NOFOLLOW_ANY`` (macOS 11): no component of the path may be a symbolic link.
    _O_NOFOLLOW_ANY = 0x20000000
    _release = platform.mac_ver()[0]
    #: Only a real macOS 11 or later knows the flag (an emulated one reports no release).
    _nofollow_any = bool(_release) and int(_release.split(".")[0]) >= 11

    def open_no_symlinks(path: str, flags: int) -> int:
        """Open ``path`` in one call through no symbolic link (``O_NOFOLLOW_ANY``);
        ``ENOSYS`` before macOS 11 (callers walk the path instead)."""
        if not _nofollow_any:
            raise OSError(errno.ENOSYS, "O_NOFOLLOW_ANY is not available", path)
        return os.open(path, flags | _O_NOFOLLOW_ANY | os.O_CLOEXEC)

else:

    def open_no_symlinks(path: str, flags: int) -> int:
        """Not in one call here (Windows pins each folder: :mod:`steadyhand.system.at`)."""
        raise OSError(errno.ENOSYS, "no one-call open without links on this system", path)

"""Calls made inside a folder held open: the folder is a descriptor, names are looked up in it.

On Linux and macOS a folder descriptor is what ``openat(2)`` and its kin take
(``dir_fd=``): a folder renamed, or swapped for a symbolic link, after it was opened
cannot redirect a call, since the call names the folder itself and not its path.

Windows has no ``dir_fd``. There a folder "descriptor" is a number this module hands
out, standing for the folder's path and for handles that pin the folder and each folder
above it: every one is opened without ``FILE_SHARE_DELETE``, through no reparse point
(``FILE_FLAG_OPEN_REPARSE_POINT``; a junction or a symbolic link is refused as a link
is on POSIX), so none of them can be renamed, removed or replaced by a junction while
the descriptor is held, and a call made by path inside it lands where the descriptor
was opened. Close such a descriptor with :func:`close` (on every system).
"""

from __future__ import annotations

import errno
import os
import sys
import threading
from dataclasses import dataclass, field

from steadyhand.system import flags

#: Folders held to read in them (Linux: ``O_PATH``, which needs no read permission).
if sys.platform == "linux":
    LOOK = os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC
else:
    LOOK = flags.FOLDER
#: Folders held to write in them (and to sync them).
WRITE = flags.FOLDER


def split_root(folder: str) -> tuple[str, list[str]]:
    """The root a folder walk starts from and the names below it, in order:
    ``("/", ["a", "b"])`` for ``/a/b``; on Windows ``("C:\\", [...])`` or
    ``("\\\\server\\share\\", [...])``."""
    if sys.platform == "win32":
        drive, rest = os.path.splitdrive(folder)
        return drive + "\\", [p for p in rest.replace("/", "\\").split("\\") if p]
    return "/", [p for p in folder.split("/") if p]


if sys.platform == "win32":
    from steadyhand.system import win32

    @dataclass
    class _Pin:
        """A handle that keeps one folder where it is (no FILE_SHARE_DELETE)."""

        handle: int
        users: int = 1

    @dataclass
    class _Held:
        path: str
        pins: list[_Pin] = field(default_factory=list)

    _held: dict[int, _Held] = {}
    _held_lock = threading.Lock()
    _PIN_SHARE = win32.FILE_SHARE_READ | win32.FILE_SHARE_WRITE
    _PIN_FLAGS = win32.FILE_FLAG_BACKUP_SEMANTICS | win32.FILE_FLAG_OPEN_REPARSE_POINT

    def _pin(path: str) -> _Pin:
        """Pin the folder ``path`` (its last component not followed if a reparse point):
        ``ELOOP`` for a junction or a symbolic link, ``ENOTDIR`` for a file."""
        h = win32.create_file(
            path, win32.FILE_READ_ATTRIBUTES, _PIN_SHARE, win32.OPEN_EXISTING, _PIN_FLAGS
        )
        try:
            attrs = win32.attributes(h, path)[0]
        except BaseException:
            win32.close_handle(h)
            raise
        if attrs & win32.FILE_ATTRIBUTE_REPARSE_POINT:
            win32.close_handle(h)
            raise OSError(errno.ELOOP, "a junction or a symbolic link", path)
        if not attrs & win32.FILE_ATTRIBUTE_DIRECTORY:
            win32.close_handle(h)
            raise OSError(errno.ENOTDIR, "not a folder", path)
        return _Pin(h)

    def _register(path: str, pins: list[_Pin]) -> int:
        fd = os.open(os.devnull, os.O_RDONLY | os.O_NOINHERIT)  # a number of our own
        with _held_lock:
            _held[fd] = _Held(path, pins)
        return fd

    def _release(pins: list[_Pin]) -> None:
        with _held_lock:
            for p in pins:
                p.users -= 1
                if p.users == 0:
                    win32.close_handle(p.handle)

    def path_of(dfd: int) -> str:
        """The path of the folder ``dfd`` was opened on."""
        with _held_lock:
            held = _held.get(dfd)
        if held is None:
            raise OSError(errno.EBADF, "not a folder held by this process")
        return held.path

    def _at(dfd: int | None, name: str) -> str:
        return name if dfd is None else os.path.join(path_of(dfd), name)

    def root(folder: str, how: int = WRITE) -> int:
        top = split_root(folder)[0]
        return _register(top, [_pin(top)])

    def open_dir(dfd: int, name: str, how: int = WRITE) -> int:
        with _held_lock:
            held = _held.get(dfd)
        if held is None:
            raise OSError(errno.EBADF, "not a folder held by this process")
        path = os.path.join(held.path, name)
        pin = _pin(path)
        with _held_lock:
            for p in held.pins:
                p.users += 1
        return _register(path, [*held.pins, pin])

    def open_folder(path: str, how: int = WRITE) -> int:
        """The folder at the absolute ``path``, each folder on the way pinned and none a
        reparse point."""
        parts = split_root(path)[1]
        fd = root(path, how)
        try:
            for part in parts:
                nfd = open_dir(fd, part, how)
                close(fd)
                fd = nfd
        except BaseException:
            close(fd)
            raise
        return fd

    def close(dfd: int) -> None:
        with _held_lock:
            held = _held.pop(dfd, None)
        os.close(dfd)
        if held is not None:
            _release(held.pins)

    def dup(dfd: int) -> int:
        with _held_lock:
            held = _held[dfd]
            for p in held.pins:
                p.users += 1
        return _register(held.path, list(held.pins))

    def lstat(name: str, dfd: int | None) -> os.stat_result:
        return os.stat(_at(dfd, name), follow_symlinks=False)

    def open(name: str, how: int, mode: int = 0o600, dfd: int | None = None) -> int:
        return os.open(_at(dfd, name), how | os.O_BINARY | os.O_NOINHERIT, mode)

    def mkdir(name: str, mode: int, dfd: int | None) -> None:
        os.mkdir(_at(dfd, name), mode)

    def unlink(name: str, dfd: int | None) -> None:
        os.unlink(_at(dfd, name))

    def rename(src: str, dst: str, dfd: int | None) -> None:
        """Rename to a new name (Windows refuses an existing one; POSIX would replace
        it: callers pick names nobody else uses)."""
        os.rename(_at(dfd, src), _at(dfd, dst))

    def link(src: str, dst: str, dfd: int | None) -> None:
        os.link(_at(dfd, src), _at(dfd, dst))

    def writable(name: str, dfd: int | None) -> bool:
        return os.access(_at(dfd, name), os.W_OK)

    def sync_dir(dfd: int) -> None:
        """Folders cannot be flushed on Windows; NTFS journals the names themselves."""

    def set_mode(fd: int, mode: int) -> None:
        """Windows has no permission bits (a replaced file keeps its ACL and its
        read-only attribute through ``ReplaceFileW``)."""

    def set_owner(fd: int, uid: int, gid: int) -> None:
        """The owner is part of the ACL, kept by ``ReplaceFileW``."""

    def full(name: str, dfd: int | None) -> str:
        return _at(dfd, name)

else:

    def path_of(dfd: int) -> str:
        """Unknown on POSIX (the descriptor itself is what counts): ``""``."""
        return ""

    def root(folder: str, how: int = WRITE) -> int:
        return os.open("/", how)

    def open_dir(dfd: int, name: str, how: int = WRITE) -> int:
        """The folder ``name`` inside ``dfd``, never through a symbolic link (``ELOOP``)."""
        return os.open(name, how | os.O_NOFOLLOW, dir_fd=dfd)

    def open_folder(path: str, how: int = WRITE) -> int:
        """The folder at the absolute ``path``, walked one folder at a time, none a link."""
        parts = split_root(path)[1]
        fd = root(path, how)
        try:
            for part in parts:
                nfd = open_dir(fd, part, how)
                os.close(fd)
                fd = nfd
        except BaseException:
            os.close(fd)
            raise
        return fd

    def close(dfd: int) -> None:
        os.close(dfd)

    def dup(dfd: int) -> int:
        return os.dup(dfd)

    def lstat(name: str, dfd: int | None) -> os.stat_result:
        return os.stat(name, dir_fd=dfd, follow_symlinks=False)

    def open(name: str, how: int, mode: int = 0o600, dfd: int | None = None) -> int:
        return os.open(name, how, mode, dir_fd=dfd)

    def mkdir(name: str, mode: int, dfd: int | None) -> None:
        os.mkdir(name, mode, dir_fd=dfd)

    def unlink(name: str, dfd: int | None) -> None:
        os.unlink(name, dir_fd=dfd)

    def rename(src: str, dst: str, dfd: int | None) -> None:
        """Rename to a new name (callers pick names nobody else uses)."""
        os.rename(src, dst, src_dir_fd=dfd, dst_dir_fd=dfd)

    def link(src: str, dst: str, dfd: int | None) -> None:
        os.link(src, dst, src_dir_fd=dfd, dst_dir_fd=dfd, follow_symlinks=False)

    def writable(name: str, dfd: int | None) -> bool:
        return os.access(name, os.W_OK, dir_fd=dfd, effective_ids=True, follow_symlinks=False)

    def sync_dir(dfd: int) -> None:
        os.fsync(dfd)

    def set_mode(fd: int, mode: int) -> None:
        os.fchmod(fd, mode)

    def set_owner(fd: int, uid: int, gid: int) -> None:
        os.fchown(fd, uid, gid)

    def full(name: str, dfd: int | None) -> str:
        """A path for ``name`` in ``dfd`` (POSIX: only meaningful with ``dfd`` None)."""
        return name


if sys.platform == "linux":

    def open_unnamed(dfd: int, mode: int) -> int:
        """A new file without a name in ``dfd`` (``O_TMPFILE``)."""
        return os.open(".", os.O_TMPFILE | os.O_WRONLY | os.O_CLOEXEC, mode, dir_fd=dfd)

    def link_unnamed(fd: int, name: str, dfd: int) -> None:
        """Name the file :func:`open_unnamed` made (through ``/proc/self/fd``, which
        needs no privilege; ``AT_EMPTY_PATH`` would); never over an existing name."""
        os.link(f"/proc/self/fd/{fd}", name, dst_dir_fd=dfd, follow_symlinks=True)

else:

    def open_unnamed(dfd: int, mode: int) -> int:
        """No file without a name here: ``EOPNOTSUPP`` (a named temp file is used)."""
        raise OSError(errno.EOPNOTSUPP, "no file without a name on this system")

    def link_unnamed(fd: int, name: str, dfd: int) -> None:
        raise OSError(errno.EOPNOTSUPP, "no file without a name on this system")

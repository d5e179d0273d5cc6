"""The system calls of the write path, behind one seam.

All disk writes go through a :class:`Syscalls` object. The default one calls the OS;
:class:`FaultPlan` lets tests make a named call fail (ENOSPC, EIO, a short write, ...)
on its n-th use, inside a real server process, selected by the ``STEADYHAND_FAULTS``
environment variable (see docs/reliability.md). Nothing else in the server touches
``os.write``/``os.rename`` for user files.
"""

from __future__ import annotations

import errno
import os
import threading
import time
from dataclasses import dataclass, field

from steadyhand.system import at
from steadyhand.system.rename import (
    RENAME_EXCHANGE,
    RENAME_NOREPLACE,
    open_no_symlinks,
    rename_flags,
    replace,
)

__all__ = [
    "RENAME_EXCHANGE",
    "RENAME_NOREPLACE",
    "WRITE_PATH_CALLS",
    "Fault",
    "FaultPlan",
    "Syscalls",
    "from_environment",
    "open_no_symlinks",
    "parse_faults",
    "renameat2",
]

#: A rename with flags: ``renameat2`` on Linux, ``renameatx_np`` on macOS, ``ReplaceFileW``
#: and ``MoveFileExW`` on Windows (:mod:`steadyhand.system.rename`).
renameat2 = rename_flags


class Syscalls:
    """Thin wrappers over the OS calls used to write files.

    ``dir_fd`` pins a call to a folder opened earlier, so a folder swapped for a symbolic
    link after the path was checked cannot redirect the write.
    """

    def open(self, path: str, flags: int, mode: int = 0o600, dir_fd: int | None = None) -> int:
        return at.open(path, flags, mode, dir_fd)

    def open_dir(self, name: str, dir_fd: int) -> int:
        """Open the folder ``name`` inside ``dir_fd``, never through a symbolic link."""
        return at.open_dir(dir_fd, name, at.WRITE)

    def open_folder(self, path: str) -> int:
        """Open the folder at the absolute ``path`` in one call, through no symbolic link
        (:func:`open_no_symlinks`; ``ENOSYS`` where that cannot be done: then the path
        is walked, :meth:`open_dir` by :meth:`open_dir`)."""
        return open_no_symlinks(path, at.WRITE)

    def open_anonymous(self, dir_fd: int, mode: int = 0o600) -> int:
        """A new file without a name in the folder ``dir_fd`` (``O_TMPFILE``, Linux), to
        be given one by :meth:`link_anonymous` once complete; it vanishes if it never
        is. ``EOPNOTSUPP`` elsewhere (the caller writes a named temp file instead)."""
        return at.open_unnamed(dir_fd, mode)

    def link_anonymous(self, fd: int, name: str, dir_fd: int) -> None:
        """Give the file ``fd`` made by :meth:`open_anonymous` the name ``name`` in
        ``dir_fd``; ``FileExistsError`` if the name is taken (it is never replaced).
        Through ``/proc/self/fd``, which needs no privilege (``AT_EMPTY_PATH`` would)."""
        at.link_unnamed(fd, name, dir_fd)

    def write(self, fd: int, data: bytes | memoryview) -> int:
        return os.write(fd, data)

    def fsync(self, fd: int) -> None:
        os.fsync(fd)

    def fchmod(self, fd: int, mode: int) -> None:
        """The permission bits (POSIX; on Windows only the read-only attribute exists,
        and a new file keeps the replaced one's through ``ReplaceFileW``)."""
        at.set_mode(fd, mode)

    def fchown(self, fd: int, uid: int, gid: int) -> None:
        at.set_owner(fd, uid, gid)

    def close(self, fd: int) -> None:
        os.close(fd)

    def rename(self, src: str, dst: str, dir_fd: int | None = None, flags: int = 0) -> None:
        """Rename within one folder: replace (``flags=0``), or ``RENAME_EXCHANGE`` /
        ``RENAME_NOREPLACE``."""
        if flags:
            rename_flags(src, dst, flags, dir_fd)
        else:
            replace(src, dst, dir_fd)

    def unlink(self, path: str, dir_fd: int | None = None) -> None:
        at.unlink(path, dir_fd)

    def mkdir(self, path: str, mode: int = 0o777, dir_fd: int | None = None) -> None:
        at.mkdir(path, mode, dir_fd)

    def fsync_dir(self, fd: int) -> None:
        at.sync_dir(fd)


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
        nth = int(rest[0]) if rest else 1
        if err.startswith("pause"):
            faults.append(Fault(call, 0, nth, pause_s=float(err[5:])))
        else:
            faults.append(Fault(call, 0 if err == "short" else getattr(errno, err), nth))
    return FaultPlan(faults)


def from_environment() -> Syscalls:
    spec = os.environ.get("STEADYHAND_FAULTS", "")
    return parse_faults(spec) if spec else Syscalls()

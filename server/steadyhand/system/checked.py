"""Looking at what a name holds before opening it, then opening that very file.

:func:`probe` finds what lies at a name in a folder without following a link there and
without opening it for input or output; :meth:`Probe.open` then opens it for reading or
writing. The caller checks the probe's status (a regular file, its links, the device
and inode it expects) in between, and the opened descriptor's status after.

- Linux: the probe is ``openat(O_PATH | O_NOFOLLOW)`` and ``fstat``; the file probed is
  opened through ``/proc/self/fd/N`` (the inode itself; by name where ``/proc`` is
  missing); the name is confirmed by ``fstatat``.
- macOS: the probe is ``fstatat(AT_SYMLINK_NOFOLLOW)``; the file is opened by name with
  ``O_NOFOLLOW | O_NONBLOCK`` and the caller compares device and inode; the name is
  confirmed by ``fstatat`` and ``fcntl(F_GETPATH)``.
- Windows: the probe is ``CreateFileW(FILE_READ_ATTRIBUTES, FILE_FLAG_OPEN_REPARSE_POINT)``
  (a reparse point refused), ``GetFileType`` and ``fstat`` (a device is no regular file);
  the file is opened by ``ReOpenFile`` of the probe's handle (the file itself); the name
  is confirmed by its status and ``GetFinalPathNameByHandleW``.

On macOS a FIFO or a device swapped in between the probe and the open (microseconds)
is opened without blocking and refused before anything is read; on Linux and Windows
it is never opened at all.
"""

from __future__ import annotations

import errno
import os
import stat
import sys
import unicodedata

from steadyhand.system import at, flags
from steadyhand.system.rename import open_no_symlinks


def _fold(path: str) -> str:
    return unicodedata.normalize("NFC", path).casefold()


def same_name(a: str, b: str) -> bool:
    """Whether two spellings of a path name one file on a volume that may ignore case
    and Unicode normalization (a comparison for a name the system reported back)."""
    return a == b or _fold(a) == _fold(b)


def names_agree(told: str, path: str) -> bool:
    """Whether the path the system reports for an open file (``F_GETPATH``,
    ``GetFinalPathNameByHandleW``) names ``path``: the same path, or one that ends with
    its folder and name (the system may name the volume its own way: a mapped drive as
    its UNC share, a macOS firmlink by the data volume)."""
    if same_name(told, path):
        return True
    sep = "\\" if "\\" in told and "/" not in told else "/"
    mine = [p for p in path.replace("\\", "/").split("/") if p][-2:]
    theirs = [p for p in told.replace(sep, "/").split("/") if p][-2:]
    return len(mine) == len(theirs) and all(map(same_name, mine, theirs))


if sys.platform == "win32":
    from steadyhand.system import win32

    _SHARE_ALL = win32.FILE_SHARE_READ | win32.FILE_SHARE_WRITE | win32.FILE_SHARE_DELETE

    class Probe:
        """A handle on what the name holds, opened for its attributes only."""

        def __init__(self, name: str, dfd: int | None) -> None:
            self.path = at.full(name, dfd)
            h = win32.create_file(
                self.path,
                win32.FILE_READ_ATTRIBUTES,
                _SHARE_ALL,
                win32.OPEN_EXISTING,
                win32.FILE_FLAG_BACKUP_SEMANTICS | win32.FILE_FLAG_OPEN_REPARSE_POINT,
            )
            try:
                attrs = win32.attributes(h, self.path)[0]
                if attrs & win32.FILE_ATTRIBUTE_REPARSE_POINT:
                    raise OSError(errno.ELOOP, "a junction or a symbolic link", self.path)
                self._fd = win32.handle_fd(h, os.O_RDONLY)
            except BaseException:
                win32.close_handle(h)
                raise
            self._handle = h
            #: the status of what the name holds (``fstat``: a device is no regular file)
            self.st = os.fstat(self._fd)

        def open(self, how: int) -> int:
            """The file probed, opened for reading (or writing, with ``O_WRONLY`` or
            ``O_RDWR`` in ``how``), never by its name again."""
            access = win32.GENERIC_READ
            if how & (os.O_WRONLY | os.O_RDWR):
                access |= win32.GENERIC_WRITE
            h = win32.reopen(self._handle, access, _SHARE_ALL, self.path)
            try:
                return win32.handle_fd(h, (how & ~(os.O_CREAT | os.O_EXCL)) | os.O_BINARY)
            except BaseException:
                win32.close_handle(h)
                raise

        def final_name(self) -> str | None:
            """The path the probed file has, as the system stores it."""
            return final_name(self._fd)

        def close(self) -> None:
            os.close(self._fd)  # closes the handle

    def final_name(fd: int) -> str | None:
        """The path the open file ``fd`` has, as the system stores it
        (``GetFinalPathNameByHandleW``, ``\\\\?\\`` taken off)."""
        try:
            name = win32.final_path(win32.fd_handle(fd), "")
        except OSError:
            return None
        if name.startswith("\\\\?\\UNC\\"):
            return "\\\\" + name[8:]
        return name.removeprefix("\\\\?\\")

elif sys.platform == "linux":

    class Probe:
        """An ``O_PATH`` descriptor of what the name holds: nothing is read, a FIFO or a
        device is not opened for input or output, no access time moves."""

        def __init__(self, name: str, dfd: int | None) -> None:
            self._name, self._dfd = name, dfd
            self._fd = os.open(name, os.O_PATH | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=dfd)
            try:
                self.st = os.fstat(self._fd)
            except BaseException:
                os.close(self._fd)
                raise

        def open(self, how: int) -> int:
            """The very inode probed, through ``/proc/self/fd``; by name (never through
            a link, never blocking) where ``/proc`` is not mounted."""
            try:
                return os.open(f"/proc/self/fd/{self._fd}", how & ~os.O_NOFOLLOW)
            except FileNotFoundError:  # no /proc here (or the descriptor vanished)
                return os.open(self._name, how | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=self._dfd)

        def final_name(self) -> str | None:
            return None

        def close(self) -> None:
            os.close(self._fd)

    def final_name(fd: int) -> str | None:
        """Not needed on Linux: the name is confirmed by its status (``fstatat``)."""
        return None

else:

    class Probe:
        """The status of what the name holds (``fstatat``, no link followed); nothing
        is opened until :meth:`open`."""

        def __init__(self, name: str, dfd: int | None) -> None:
            self._name, self._dfd = name, dfd
            self.st = os.stat(name, dir_fd=dfd, follow_symlinks=False)

        def open(self, how: int) -> int:
            """The name opened again, through no link and without blocking; the caller
            compares its device and inode with the probe's."""
            return os.open(self._name, how | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=self._dfd)

        def final_name(self) -> str | None:
            return None

        def close(self) -> None:
            pass

    if sys.platform == "darwin":
        import fcntl

        #: ``F_GETPATH`` (``<sys/fcntl.h>``): the path of an open file.
        _F_GETPATH = 50
        _MAXPATHLEN = 1024

        def final_name(fd: int) -> str | None:
            """``fcntl(F_GETPATH)``: the path macOS knows the open file by (None where
            the call is refused, as a Linux kernel under an emulated macOS does)."""
            try:
                raw = fcntl.fcntl(fd, _F_GETPATH, bytes(_MAXPATHLEN))
            except OSError:
                return None
            return os.fsdecode(raw.split(b"\0", 1)[0])

    else:

        def final_name(fd: int) -> str | None:
            return None


def probe(name: str, dfd: int | None) -> Probe:
    """What ``name`` in the folder ``dfd`` holds, looked at without opening it for I/O
    (a symbolic link is looked at itself: ``S_ISLNK``; a Windows junction or link raises
    ``ELOOP``)."""
    return Probe(name, dfd)


#: Reading flags for :meth:`Probe.open`.
READ = flags.READ


def status_without_links(path: str) -> tuple[os.stat_result | None] | None:
    """``(lstat,)`` of the absolute ``path`` (``(None,)`` if it does not exist but its
    folder does) when no component of it is a symbolic link, found in one or two system
    calls; None when there is a link, or where the system cannot tell so quickly (the
    caller then resolves the path the long way). Nothing is opened for input or output.

    Linux: ``openat2(O_PATH, RESOLVE_NO_SYMLINKS)``; macOS 11+: the folder opened with
    ``O_NOFOLLOW_ANY``, then ``fstatat`` of the name; Windows: never (``realpath``)."""
    if sys.platform == "linux":
        try:
            fd = open_no_symlinks(path, os.O_PATH)
        except OSError as exc:
            if exc.errno != errno.ENOENT:
                return None
            try:  # a file still to be created: its folder must be link-free, and there
                os.close(open_no_symlinks(os.path.dirname(path), os.O_PATH | os.O_DIRECTORY))
            except OSError:
                return None
            return (None,)
        try:
            return (os.fstat(fd),)
        finally:
            os.close(fd)
    if sys.platform == "win32":
        return None
    folder, name = os.path.split(path)
    try:
        dfd = open_no_symlinks(folder, os.O_RDONLY | os.O_DIRECTORY)
    except OSError:
        return None
    try:
        st = os.stat(name, dir_fd=dfd, follow_symlinks=False) if name else os.fstat(dfd)
    except FileNotFoundError:
        return (None,)
    except OSError:
        return None
    finally:
        os.close(dfd)
    return None if stat.S_ISLNK(st.st_mode) else (st,)

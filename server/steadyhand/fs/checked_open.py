"""Opening a file only once the file actually opened is known to be one that may be read.

A path is checked when it is resolved, but what lies at that path can be replaced before
it is opened: by a hard link to a file outside the workspace, a FIFO, a device. A check
made on the path then says nothing of the file read. So every file Steadyhand reads is
opened in two steps:

1. The path is opened with ``O_PATH`` (through no symbolic link): nothing is read, a FIFO
   or a device is not opened for input or output (a writer blocked on a FIFO stays
   blocked), no access time moves.
2. That descriptor is checked with ``fstat``: a regular file; a single link unless hard
   links are allowed; and, when the caller knows what resolving the path found, the same
   device and inode. Only then is the file opened for reading, through
   ``/proc/self/fd/N``: the very inode checked, never a new look-up of the path. The
   reading descriptor is checked once more (its link count may have grown meanwhile).

Where ``/proc`` is not mounted, step 2 opens the path again (without blocking, through
no link) and checks that it is the inode of step 1; a FIFO swapped in during those
microseconds would then be opened, never read.

That is Linux. Each system's own calls for the two steps are chosen in
:mod:`steadyhand.system.checked` (macOS: ``fstatat``, then ``O_NOFOLLOW | O_NONBLOCK``
and ``F_GETPATH``; Windows: ``FILE_FLAG_OPEN_REPARSE_POINT``, ``ReOpenFile`` and
``GetFinalPathNameByHandleW``), and the folders are held by :mod:`steadyhand.system.at`.
"""

from __future__ import annotations

import errno
import os
import stat

from steadyhand.fs.syscalls import open_no_symlinks
from steadyhand.protocol.errors import ErrorCode, ToolError
from steadyhand.system import at, checked, flags

#: (device, inode) of the file a path resolved to.
Identity = tuple[int, int]

_READ = flags.READ


def identity(st: os.stat_result | None) -> Identity | None:
    return None if st is None else (st.st_dev, st.st_ino)


def too_many_links(st: os.stat_result, *, links_ok: bool) -> bool:
    """Whether a regular file's link count says another name of it may lie anywhere on
    the file system (refused unless the ``allowHardLinks`` setting is on)."""
    return stat.S_ISREG(st.st_mode) and st.st_nlink > 1 and not links_ok


def hard_linked(shown: str, real: str, nlink: int) -> ToolError:
    """The refusal for a file with more than one hard link."""
    return ToolError(
        ErrorCode.OUTSIDE_WORKSPACE,
        f"{shown} has {nlink} hard links, so the same file may also be reachable "
        "outside the workspace; Steadyhand does not read or write it. Ask the user to "
        "replace it with an independent copy, or to turn on the allowHardLinks setting.",
        path=real,
    )


class Replaced(ToolError):
    """The file opened is not the one the path resolved to (another device or inode):
    it was replaced in between. The caller resolves the path again."""

    def __init__(self, path: str) -> None:
        super().__init__(
            ErrorCode.IO_ERROR,
            f"{path} kept being replaced while Steadyhand opened it, so it was not read. "
            "Retry in a moment, once whatever is rewriting it has finished.",
            path=path,
            replaced=True,
        )


def _became_link(path: str) -> ToolError:
    return ToolError(
        ErrorCode.INVALID_PATH,
        f"{path} became a symbolic link after the path was checked, so Steadyhand did not "
        "follow it. Retry to have the path checked again.",
        path=path,
    )


def _not_regular(path: str, st: os.stat_result) -> ToolError:
    if stat.S_ISDIR(st.st_mode):
        return ToolError(ErrorCode.IS_DIRECTORY, f"{path} is a directory.", path=path)
    if stat.S_ISLNK(st.st_mode):
        return _became_link(path)
    return ToolError(
        ErrorCode.NOT_REGULAR_FILE,
        f"{path} is not a regular file (no longer: something else was put in its place), "
        "so it was not opened. Leave it alone and work on a regular file; ask the user if "
        "you need what it holds.",
        path=path,
    )


def check_opened(path: str, st: os.stat_result, *, links_ok: bool, expect: Identity | None) -> None:
    """Raise unless ``st`` (the ``fstat`` of a descriptor) is a file that may be read:
    a regular file, with one link unless ``links_ok``, and the one resolved (``expect``)."""
    if not stat.S_ISREG(st.st_mode):
        raise _not_regular(path, st)
    if too_many_links(st, links_ok=links_ok):
        raise hard_linked(path, path, st.st_nlink)
    if expect is not None and (st.st_dev, st.st_ino) != expect:
        raise Replaced(path)


_FOLDER = at.LOOK
#: How many times a file whose name moved to another file while it was being opened is
#: opened again before the open gives up (``Replaced``).
_TRIES = 3


def open_folder(folder: str, path: str) -> int:
    """A descriptor of the real folder ``folder`` (holding ``path``), opened through no
    symbolic link: in one call where the system can, else folder by folder. Close it
    with :func:`steadyhand.system.at.close`. ``FileNotFoundError`` if it is gone;
    ``invalid_path`` if a part of it became a link or a file after the path was
    checked."""
    try:
        return open_no_symlinks(folder, _FOLDER)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR):
            raise _folder_changed(path) from exc
        if exc.errno not in (errno.ENOSYS, errno.EPERM):
            raise
    try:
        return at.open_folder(folder, _FOLDER)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR):
            raise _folder_changed(path) from exc
        raise


def _folder_changed(path: str) -> ToolError:
    return ToolError(
        ErrorCode.INVALID_PATH,
        f"A folder on the way to {path} became a symbolic link (or a file) after the path "
        "was checked, so Steadyhand did not go through it. Retry to have the path checked "
        "again.",
        path=path,
    )


def open_checked(
    path: str, *, links_ok: bool = False, expect: Identity | None = None
) -> tuple[int, os.stat_result]:
    """Open the real path ``path`` for reading once the file is checked
    (:func:`check_opened`); the reading descriptor and its status. No component of the
    path may be a symbolic link. ``ToolError`` for what may not be read; ``OSError``
    (``FileNotFoundError``...) from the opens themselves.

    Once open, the file's name is looked up again in its folder, in one call that also
    gives the link count: the name must still lead to the file opened, and the file
    have one link. A file with a second name elsewhere cannot pass by losing its name in
    the workspace while it is opened (its link count then drops to one, but the name no
    longer leads to it)."""
    folder, name = os.path.split(path)
    dfd = open_folder(folder, path)
    try:
        for _ in range(_TRIES):
            opened = _open_in(dfd, name, path, links_ok=links_ok, expect=expect)
            if opened is not None:
                return opened
        raise Replaced(path)
    finally:
        at.close(dfd)


def _open_in(
    dfd: int, name: str, path: str, *, links_ok: bool, expect: Identity | None
) -> tuple[int, os.stat_result] | None:
    """:func:`open_checked` in the folder ``dfd``; None when the name moved to another
    file while it was opened (try again)."""
    try:
        probe = checked.probe(name, dfd)
    except OSError as exc:
        if exc.errno == errno.ELOOP:  # a Windows junction or link
            raise _became_link(path) from exc
        raise
    try:
        first = probe.st
        check_opened(path, first, links_ok=links_ok, expect=expect)
        fd = probe.open(_READ)
    finally:
        probe.close()
    try:
        st = os.fstat(fd)
        if (st.st_dev, st.st_ino) != (first.st_dev, first.st_ino):
            raise Replaced(path)
        if not _still_named(dfd, name, st, links_ok=links_ok) or not _named_as(fd, path, st):
            os.close(fd)
            return None
    except BaseException:
        os.close(fd)
        raise
    return fd, st


def _named_as(fd: int, path: str, st: os.stat_result) -> bool:
    """Whether the system, asked for the open file's name (macOS ``F_GETPATH``, Windows
    ``GetFinalPathNameByHandleW``), names ``path``; true where it cannot tell, and for a
    file with several names (it tells one of them)."""
    if st.st_nlink > 1:
        return True
    told = checked.final_name(fd)
    return told is None or checked.names_agree(told, path)


def _still_named(dfd: int, name: str, st: os.stat_result, *, links_ok: bool) -> bool:
    """Whether ``name`` in ``dfd`` leads to the file ``st`` and, unless ``links_ok``, the
    file has one link: both told by one ``fstatat``, so both hold at one instant."""
    try:
        now = at.lstat(name, dfd)
    except FileNotFoundError:
        return False
    if (now.st_dev, now.st_ino) != (st.st_dev, st.st_ino):
        return False
    return not too_many_links(now, links_ok=links_ok)


def open_checked_at(dfd: int, name: str, *, links_ok: bool) -> int | None:
    """A reading descriptor of the regular file ``name`` in the folder ``dfd`` (never
    through a symbolic link), or None when there is nothing there that may be read: no
    such name, a link, a folder, a FIFO or a device (never opened), or a file with more
    than one link unless ``links_ok``."""
    try:
        probe = checked.probe(name, dfd)
    except OSError as exc:
        if exc.errno in (errno.ENOENT, errno.ELOOP, errno.ENOTDIR):
            return None
        raise
    try:
        first = probe.st
        if not stat.S_ISREG(first.st_mode) or too_many_links(first, links_ok=links_ok):
            return None
        fd = probe.open(_READ)
    finally:
        probe.close()
    st = os.fstat(fd)
    if (
        (st.st_dev, st.st_ino) != (first.st_dev, first.st_ino)
        or not stat.S_ISREG(st.st_mode)
        or not _still_named(dfd, name, st, links_ok=links_ok)
    ):
        os.close(fd)
        return None
    return fd


def open_regular(path: str, how: int, mode: int = 0o600) -> int:
    """``os.open`` for Steadyhand's own files (the history store, the temp journal):
    never opens a FIFO, a device or a link put in their place. With ``O_CREAT`` a new
    file is made (``O_EXCL``) or an existing regular file opened. ``OSError``
    (``EINVAL``) for a name that holds anything else."""
    how |= flags.CLOEXEC | flags.NOFOLLOW | flags.BINARY
    if how & os.O_CREAT:
        try:
            return os.open(path, how | os.O_EXCL, mode)
        except FileExistsError:
            if how & os.O_EXCL:
                raise
        how &= ~os.O_CREAT
    try:
        probe = checked.probe(path, None)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise OSError(errno.EINVAL, "not a regular file", path) from exc
        raise
    try:
        first = probe.st
        if not stat.S_ISREG(first.st_mode):
            raise OSError(errno.EINVAL, "not a regular file", path)
        fd = probe.open(how)
    finally:
        probe.close()
    st = os.fstat(fd)
    if (st.st_dev, st.st_ino) != (first.st_dev, first.st_ino) or not stat.S_ISREG(st.st_mode):
        os.close(fd)
        raise OSError(errno.EINVAL, "not a regular file", path)
    return fd

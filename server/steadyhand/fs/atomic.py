"""Atomic replacement of a file's bytes: temp file in the same folder, fsync, rename.
(A new file is written without a name, ``O_TMPFILE``, and given its name when complete.)

A reader of the path sees either the old bytes or the new ones, never a mix, and a
failure at any step leaves the old file exactly as it was and no temp file behind.

Three more guarantees, for writes that know what they replace:

- **No lost update.** With ``expect`` (the hash of the bytes the change was checked
  against), the new file is swapped in with ``renameat2(RENAME_EXCHANGE)`` and the bytes
  it displaced are hashed: if someone else wrote the file between the check and the swap,
  their version is swapped back and the write is refused as ``stale``. Steadyhand
  processes take an ``flock`` on the folder around this, so they never undo each other.
  With ``create``, the file is written without a name and linked to its name, or (where
  that cannot be done) put in place with ``RENAME_NOREPLACE``, so a file that appeared in
  the meantime is never clobbered. (Where the file system lacks these flags, the check
  runs right before a plain rename.)
- **Confinement.** The folder is opened component by component with ``O_NOFOLLOW`` and
  every later call is made relative to that folder, so a folder swapped for a symbolic
  link after the path was checked cannot redirect the write.
- **Crash cleanup.** Before its first temp file in a folder, a process notes the folder
  in a small journal under the user's state directory; at start-up the server removes
  the temp files of journaled folders whose writer is dead (:func:`sweep_journals`).
"""

from __future__ import annotations

import atexit
import contextlib
import errno
import functools
import json
import logging
import os
import re
import secrets
import stat
import threading
import time
from collections.abc import Callable, Iterator

from steadyhand.fs import syncer
from steadyhand.fs.checked_open import open_checked_at, open_regular, too_many_links
from steadyhand.fs.state_dir import state_dir
from steadyhand.fs.syscalls import (
    RENAME_EXCHANGE,
    RENAME_NOREPLACE,
    Syscalls,
)
from steadyhand.protocol.errors import ErrorCode, ToolError
from steadyhand.state.hashing import streaming_hasher
from steadyhand.system import at, flags, locks, metadata
from steadyhand.system.process import alive
from steadyhand.system.rename import FileBusy, replace

log = logging.getLogger(__name__)

#: Steadyhand's temp names (``\Z``, not ``$``: a name may end with a newline, and
#: ``.x.steadyhand-1-0000abcd.tmp`` followed by one is a user's file, never removed).
TEMP_PATTERN = re.compile(r"\A\..*\.steadyhand-(\d+)-[0-9a-f]{8}\.tmp\Z", re.DOTALL)
_MAX_BASE = 100
_DIR_FLAGS = at.WRITE
#: A new temp file: never an existing name, never through a link, bytes as they are.
_NEW_TEMP = os.O_WRONLY | os.O_CREAT | os.O_EXCL | flags.CLOEXEC | flags.NOFOLLOW | flags.BINARY
#: errnos meaning "this file system / kernel cannot do renameat2 with flags".
_NO_RENAMEAT2 = frozenset({errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP})
#: errnos of a one-call open (no symbolic link on the path) that the folder-by-folder
#: walk handles: a missing folder to create, a link or a file to name in the refusal,
#: a kernel (or a sandbox) without ``openat2``.
_WALK_INSTEAD = frozenset({errno.ENOENT, errno.ELOOP, errno.ENOTDIR, errno.ENOSYS, errno.EPERM})
#: errnos of ``fchmod`` on a file system that has no permission bits.
_NO_MODES = frozenset({errno.ENOSYS, errno.EOPNOTSUPP, errno.ENOTSUP})
#: Undoing a swap is never fault-injected: it only runs to protect someone else's bytes.
_PLAIN = Syscalls()

#: Runs a job once the current answer has gone out (see ``atomic_write``'s ``later``).
Later = Callable[[Callable[[], None]], None]


def temp_basename(name: str) -> str:
    """A temp name beside ``name``: its first 100 bytes (a name may take 255 bytes, in
    any script, and the temp name must fit too), the process and a random tag."""
    stem = os.fsdecode(os.fsencode(name)[:_MAX_BASE])
    return f".{stem}.steadyhand-{os.getpid()}-{secrets.token_hex(4)}.tmp"


@functools.cache
def _umask() -> int:
    """The process's umask (read once: nothing in the server changes it), read without
    changing it where Linux tells it (setting it to read it would widen, for that
    instant, files other threads create)."""
    try:
        with open("/proc/self/status", "rb") as f:
            for line in f:
                if line.startswith(b"Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _open_folder(folder: str, sys: Syscalls, *, make: bool, path: str) -> tuple[int, list[str]]:
    """Open ``folder`` (an absolute real path) without following any symbolic link.

    Missing folders are created when ``make``; returns the folder's fd and what was made.
    One call does it when the folder is there and no link is on the way; otherwise the
    path is walked one folder at a time, which creates and names what it must.
    """
    try:
        return sys.open_folder(folder), []
    except OSError as exc:
        if exc.errno not in _WALK_INSTEAD:
            raise
    top, parts = at.split_root(folder)
    fd = at.root(folder, _DIR_FLAGS)
    created: list[str] = []
    cur = top
    try:
        for part in parts:
            cur = os.path.join(cur, part)
            try:
                nfd = sys.open_dir(part, fd)
            except FileNotFoundError:
                if not make:
                    raise
                sys.mkdir(part, 0o777, dir_fd=fd)
                created.append(cur)
                nfd = sys.open_dir(part, fd)
            except OSError as exc:
                # ELOOP: it was a symbolic link when opened (O_NOFOLLOW); ENOTDIR: no longer
                # a folder. Either way it changed after the check (it may change back before
                # anyone looks again), so it is never gone through.
                if exc.errno in (errno.ELOOP, errno.ENOTDIR):
                    what = "became a symbolic link" if _is_link(fd, part) else "changed"
                    raise ToolError(
                        ErrorCode.INVALID_PATH,
                        f"The folder {cur} on the way to {path} {what} after the path was "
                        "checked, so Steadyhand did not go through it. Retry to have the "
                        "path checked again.",
                        path=path,
                    ) from exc
                raise
            at.close(fd)
            fd = nfd
    except BaseException:
        at.close(fd)
        for d in reversed(created):
            with contextlib.suppress(OSError):
                os.rmdir(d)
        raise
    return fd, created


def make_folders(folder: str, sys: Syscalls, *, fsync: bool) -> list[str]:
    """Make the folder at the absolute real path ``folder`` and the folders missing on
    the way (``mkdir -p``), never going through a symbolic link; the folders made, in
    order. With ``fsync`` each new folder's name is made durable in its parent."""
    fd, created = _open_folder(folder, sys, make=True, path=folder)
    try:
        if fsync:
            for made in created:
                pfd, _ = _open_folder(os.path.dirname(made), sys, make=False, path=folder)
                try:
                    sys.fsync_dir(pfd)
                finally:
                    os.close(pfd)
    except BaseException:
        for d in reversed(created):
            with contextlib.suppress(OSError):
                os.rmdir(d)
        raise
    finally:
        os.close(fd)
    return created


def _is_link(dfd: int, name: str) -> bool:
    try:
        return stat.S_ISLNK(at.lstat(name, dfd).st_mode)
    except OSError:
        return False


def _changed(path: str, what: str) -> ToolError:
    return ToolError(
        ErrorCode.STALE,
        f"{path} {what} by someone else while your change was being saved, so it was not "
        "applied and their version is kept. Read the file again, then redo your change.",
        path=path,
        refreshed=False,
    )


def _hash_at(dfd: int, name: str, links_ok: bool = False) -> str | None:
    """Hash of the regular file ``name`` in the folder ``dfd``; None if it is not one,
    or has more than one link (unless ``links_ok``). Anything else put under that name (a
    FIFO, a device, a link) is never opened (:func:`open_checked_at`)."""
    fd = open_checked_at(dfd, name, links_ok=links_ok)
    if fd is None:
        return None
    try:
        hasher = streaming_hasher()
        while chunk := os.read(fd, 1 << 20):
            hasher.update(chunk)
        return str(hasher.hexdigest())
    finally:
        os.close(fd)


def _moved_hash(dfd: int, tmp: str, links_ok: bool = False) -> str | None:
    """:func:`_hash_at` of a copy just moved aside to ``tmp``; None when it cannot be
    read, which its callers take as "not the content expected"."""
    try:
        return _hash_at(dfd, tmp, links_ok)
    except OSError:
        return None


def _ino_at(dfd: int, name: str) -> int | None:
    try:
        return at.lstat(name, dfd).st_ino
    except OSError:
        return None


def atomic_write(
    path: str,
    data: bytes,
    *,
    sys: Syscalls,
    fsync: bool = True,
    expect: str | None = None,
    expect_stat: tuple[int, int] | None = None,
    create: bool = False,
    later: Later | None = None,
    links_ok: bool = False,
    mode: int | None = None,
) -> os.stat_result:
    """Replace ``path`` (a real path, no symlink) with ``data`` atomically.

    Keeps the file's permission bits (and owner, where allowed). Creates missing parent
    folders for a new file, removing them again if the write fails. ``expect``: the
    content hash the file must still have (else ``stale``); ``create``: the file must
    not exist (else ``stale``). ``expect_stat``: the (size, mtime_ns) the file had when
    it had the ``expect`` hash; when it still has them the file is not hashed before the
    swap (the copy the swap displaces is always hashed, so a change is still caught).
    ``later``: what removes that displaced copy once it is checked, so the removal (which
    frees the old file's pages) need not delay the answer; by default it is removed at
    once. ``links_ok``: the ``allowHardLinks`` setting; without it a file that has more
    than one name when it is replaced (a hard link swapped in since the check) is
    ``stale``, and is never opened. ``mode``: the permission bits of a new file (default:
    as the umask makes them; a file replaced keeps its own). Returns the new file's status.

    :func:`stage_write` does the same in two steps, with the syncs on a thread of their
    own so that other work can be done while they run.
    """
    staged = stage_write(
        path,
        data,
        sys=sys,
        fsync=fsync,
        expect=expect,
        expect_stat=expect_stat,
        create=create,
        later=later,
        links_ok=links_ok,
        mode=mode,
    )
    st, folder_synced = staged.commit()
    folder_synced.wait()
    return st


def stage_write(
    path: str,
    data: bytes,
    *,
    sys: Syscalls,
    fsync: bool = True,
    expect: str | None = None,
    expect_stat: tuple[int, int] | None = None,
    create: bool = False,
    later: Later | None = None,
    links_ok: bool = False,
    overlap: bool = False,
    mode: int | None = None,
) -> Staged:
    """The first step of :func:`atomic_write` (same arguments): the new bytes written
    beside the file (without a name, for a new file, where the system allows), with the
    checks that come before (``stale``, a file that is no longer regular, one that may
    not be written), and synced with ``fsync``. :meth:`Staged.commit` puts them in place;
    :meth:`Staged.discard` takes them back, leaving everything as it was.

    ``overlap``: the syncs run on a thread of their own (:mod:`steadyhand.fs.syncer`),
    this one's and the folder's after :meth:`Staged.commit`, so that the caller works
    while they run; it waits for them only where it must (:meth:`Staged.commit` waits
    for the bytes' sync before they take the name, and the caller for the folder's
    before it answers). Without it they are made inline, as they come."""
    folder, name = os.path.split(path)
    try:
        dfd, created = _open_folder(folder, sys, make=expect is None, path=path)
    except FileNotFoundError:
        raise _changed(path, "was deleted (with its folder)") from None
    plan = (expect, expect_stat, create, later, links_ok)
    staged = Staged(dfd, created, path, name, data, sys, fsync, overlap, plan, new_mode=mode)
    try:
        staged._prepare()
    except FileBusy as exc:
        staged._fail()
        raise in_use(path, exc, "written") from exc
    except BaseException:
        staged._fail()
        raise
    return staged


#: A sync already made (nothing to wait for).
_NO_SYNC = syncer.done()
#: What a staged write checks and does when it is committed: ``expect``,
#: ``expect_stat``, ``create``, ``later`` and ``links_ok``, as :func:`atomic_write` takes them.
_Plan = tuple[str | None, tuple[int, int] | None, bool, Later | None, bool]


class Staged:
    """A file's new bytes, written beside it (and being synced), not yet in its place:
    see :func:`stage_write`. Holds the folder open until it is committed or discarded."""

    def __init__(
        self,
        dfd: int,
        created: list[str],
        path: str,
        name: str,
        data: bytes,
        sys: Syscalls,
        fsync: bool,
        overlap: bool,
        plan: _Plan,
        *,
        new_mode: int | None = None,
    ) -> None:
        self.path = path
        self._dfd = dfd
        self._created = created
        self._name = name
        self._data = data
        self._sys = sys
        self._fsync = fsync
        self._overlap = overlap
        #: expect, expect_stat, create, later, links_ok: as :func:`atomic_write` takes them
        self._plan = plan
        self._fd = -1
        #: the temp name of the new file (None: it has none, ``O_TMPFILE``)
        self._tmp: str | None = None
        self._mode = 0
        #: the permission bits of a new file (None: as the umask makes them)
        self._new_mode = new_mode
        self._written: os.stat_result | None = None
        self._synced: syncer.Sync = _NO_SYNC
        self._open = True  # neither committed nor discarded

    # -- the first step ------------------------------------------------------------------

    def _prepare(self) -> None:
        expect, _, create, _, links_ok = self._plan
        dfd, name, path = self._dfd, self._name, self.path
        try:
            existing: os.stat_result | None = at.lstat(name, dfd)
        except FileNotFoundError:
            existing = None
        if existing is not None and too_many_links(existing, links_ok=links_ok):
            # a second name of it may lie anywhere: its mode and extended attributes are
            # not to be copied, nor its bytes hashed (it was one name when checked)
            raise _changed(path, "was replaced (by a file with another name elsewhere)")
        if create and existing is not None:
            raise _changed(path, "was created")
        if expect is not None and (existing is None or not stat.S_ISREG(existing.st_mode)):
            raise _changed(path, "was deleted or replaced")
        if existing is not None and not stat.S_ISREG(existing.st_mode):
            raise ToolError(
                ErrorCode.NOT_REGULAR_FILE,
                f"{path} is no longer a regular file, so nothing was written to it.",
                path=path,
            )
        if existing is not None and not at.writable(name, dfd):
            # The file is replaced, which its folder's permissions would allow; its own
            # say whether it may be written at all, as for an editor saving it.
            raise OSError(errno.EACCES, "the file's permissions do not allow writing it", path)
        if existing is not None:
            self._mode = stat.S_IMODE(existing.st_mode)
        elif self._new_mode is not None:
            self._mode = self._new_mode
        else:
            self._mode = 0o666 & ~_umask()
        if create:
            try:
                fd = self._sys.open_anonymous(dfd)
            except OSError as exc:
                if exc.errno not in _NO_ANONYMOUS:
                    raise
            else:
                self._fd = fd
                self._fill(None, None)
                return
        self._named(existing)

    def _named(self, existing: os.stat_result | None) -> None:
        """Write the new bytes to a temp file beside the file."""
        if _journal is not None:
            _journal.note(os.path.dirname(self.path))
        tmp = temp_basename(self._name)
        self._fd = self._sys.open(tmp, _NEW_TEMP, 0o600, self._dfd)
        self._tmp = tmp
        self._fill(existing, (self._dfd, self._name))

    def _fill(self, owner: os.stat_result | None, old: tuple[int, str] | None) -> None:
        fd, sys = self._fd, self._sys
        self._written = _fill(fd, self._data, sys, self._mode, False, owner, old)
        if self._fsync:
            run = syncer.start if self._overlap else syncer.inline
            self._synced = run(functools.partial(sys.fsync, fd))

    # -- the second step -----------------------------------------------------------------

    def commit(self) -> tuple[os.stat_result, syncer.Sync]:
        """Put the new bytes in place, once they are synced: the new file's status, and
        the folder's sync (made, or running: wait for it before saying the change is
        durable; it fails quietly, as the file's own bytes are synced already)."""
        assert self._open, "a staged write is committed once"
        self._open = False
        expect, expect_stat, create, later, links_ok = self._plan
        try:
            self._synced.wait()  # the bytes are on the disk before they take the name
            if self._tmp is None:
                self._link(create)
            else:
                self._swap(expect, expect_stat, create, later, links_ok)
        except FileBusy as exc:
            self._fail()
            raise in_use(self.path, exc, "written") from exc
        except BaseException:
            self._fail()
            raise
        written = self._written
        assert written is not None
        dfd, sys, fsync = self._dfd, self._sys, self._fsync

        def sync_folder() -> None:
            try:
                _sync_folder(dfd, sys, fsync)
            finally:
                at.close(dfd)

        if not fsync:
            sync_folder()
            return written, _NO_SYNC
        return written, (syncer.start if self._overlap else syncer.inline)(sync_folder)

    def _link(self, create: bool) -> None:
        """Give the new file made without a name its name (never over another file)."""
        fd, dfd, name, sys = self._fd, self._dfd, self._name, self._sys
        try:
            sys.link_anonymous(fd, name, dfd)
        except FileExistsError:
            raise _changed(self.path, "was created") from None
        except OSError as exc:
            if exc.errno in _NO_LINK and _ino_at(dfd, name) is None:
                # this file system cannot name it: write a named temp file instead
                self._fd = -1
                with contextlib.suppress(OSError):
                    os.close(fd)
                self._overlap = False
                self._named(None)
                self._synced.wait()
                self._swap(None, None, create, None, False)
                return
            raise
        self._fd = -1
        try:
            sys.close(fd)
        except OSError:
            # The bytes may not all be stored: take back the name just given (if it is
            # still this file's) rather than leave a file that may be incomplete.
            written = self._written
            if written is not None and _ino_at(dfd, name) == written.st_ino:
                with contextlib.suppress(OSError):
                    at.unlink(name, dfd)
            raise

    def _swap(
        self,
        expect: str | None,
        expect_stat: tuple[int, int] | None,
        create: bool,
        later: Later | None,
        links_ok: bool,
    ) -> None:
        fd, self._fd = self._fd, -1
        self._sys.close(fd)
        tmp, self._tmp = self._tmp, None  # from here on _commit owns the temp name
        written = self._written
        assert tmp is not None and written is not None
        _commit(
            self._dfd,
            self.path,
            self._name,
            tmp,
            written.st_ino,
            self._sys,
            expect,
            expect_stat,
            create,
            later,
            links_ok,
        )

    def discard(self) -> None:
        """Take the staged bytes back: the file, its folder and the folders made for it
        are as they were."""
        if not self._open:
            return
        self._open = False
        self._fail()

    def _fail(self) -> None:
        """Remove what was made (waiting for a sync still running on its file)."""
        with contextlib.suppress(BaseException):
            self._synced.wait()
        if self._fd >= 0:
            with contextlib.suppress(OSError):
                os.close(self._fd)
            self._fd = -1
        if self._tmp is not None:
            with contextlib.suppress(OSError):
                at.unlink(self._tmp, self._dfd)
            self._tmp = None
        for d in reversed(self._created):
            with contextlib.suppress(OSError):
                os.rmdir(d)
        at.close(self._dfd)


def in_use(path: str, exc: FileBusy, what: str) -> ToolError:
    """The refusal for a file another program holds open so that it cannot be replaced
    (Windows, after :data:`steadyhand.system.rename.BUSY_DELAYS`): nothing changed."""
    return ToolError(
        ErrorCode.FILE_IN_USE,
        f"{path} is open in another program (an editor, an indexer or an antivirus "
        f"scanner) that does not let it be replaced, so it was not {what}: the file is "
        "exactly as it was. Retry in a moment, or ask the user to close it there.",
        path=path,
        cause=exc.cause.strerror or str(exc.cause),
    )


def _sync_folder(dfd: int, sys: Syscalls, fsync: bool) -> None:
    """With ``fsync``, make a new name in the folder durable (best effort: the file's own
    bytes are synced already)."""
    if fsync:
        with contextlib.suppress(OSError):
            sys.fsync_dir(dfd)


def _fill(
    fd: int,
    data: bytes,
    sys: Syscalls,
    mode: int,
    fsync: bool,
    owner: os.stat_result | None,
    old: tuple[int, str] | None = None,
) -> os.stat_result:
    """Write all of ``data`` to the new file ``fd``, give it ``mode`` (and ``owner``'s
    owner and group, where allowed) and the extended attributes of the file it replaces
    (``old``: its folder's fd and its name), sync it if asked; its status."""
    view = memoryview(data)
    while view:
        n = sys.write(fd, view)
        if n <= 0:
            raise OSError(errno.EIO, "write made no progress")
        view = view[n:]
    if owner is not None:  # before the mode: a change of owner clears setuid and setgid
        with contextlib.suppress(OSError):
            sys.fchown(fd, owner.st_uid, owner.st_gid)
    try:
        sys.fchmod(fd, mode)
    except OSError as exc:
        # a file system without permission bits (FAT, exFAT through FUSE): there is no
        # mode to keep, and the write goes on
        if exc.errno not in _NO_MODES:
            raise
    if old is not None:
        _copy_xattrs(*old, fd)
    if fsync:
        sys.fsync(fd)
    return os.fstat(fd)


def _copy_xattrs(dfd: int, name: str, fd: int) -> None:
    """Give the new file ``fd`` what the file ``name`` in the folder ``dfd`` carries
    beside its bytes and mode: extended attributes, access control lists, security labels
    where allowed (:func:`steadyhand.system.metadata.copy`: Linux's xattrs, macOS's
    ``fcopyfile``; Windows keeps them through ``ReplaceFileW``). Best effort, as for the
    owner: what the system refuses to set is left out."""
    metadata.copy(dfd, name, fd)


#: errnos of an anonymous file (``O_TMPFILE``) the file system, the kernel or the
#: missing ``/proc`` cannot give: a named temp file is written instead.
_NO_ANONYMOUS = frozenset(
    {errno.EOPNOTSUPP, errno.EISDIR, errno.EINVAL, errno.ENOSYS, errno.ENOENT, errno.EXDEV}
)
#: ... and of a link the file system refuses (some cannot hold hard links at all).
_NO_LINK = _NO_ANONYMOUS | {errno.EPERM}


def _commit(
    dfd: int,
    path: str,
    name: str,
    tmp: str,
    ino: int,
    sys: Syscalls,
    expect: str | None,
    expect_stat: tuple[int, int] | None,
    create: bool,
    later: Later | None = None,
    links_ok: bool = False,
) -> None:
    """Put the temp file ``tmp`` (inode ``ino``) in place of ``name``.

    On failure nothing of ours is left behind and nobody else's bytes are removed.
    """
    try:
        if create:
            _commit_new(dfd, path, name, tmp, sys)
        elif expect is None:
            sys.rename(tmp, name, dfd)
        else:
            with _folder_lock(dfd):
                _swap_checked(dfd, path, name, tmp, ino, sys, expect, expect_stat, later, links_ok)
    except BaseException:
        if _ino_at(dfd, tmp) == ino:
            with contextlib.suppress(OSError):
                at.unlink(tmp, dfd)
        raise


def _commit_new(dfd: int, path: str, name: str, tmp: str, sys: Syscalls) -> None:
    try:
        sys.rename(tmp, name, dfd, RENAME_NOREPLACE)
        return
    except FileExistsError:
        raise _changed(path, "was created") from None
    except OSError as exc:
        if exc.errno not in _NO_RENAMEAT2:
            raise
    try:  # a hard link never replaces an existing name either
        at.link(tmp, name, dfd)
    except FileExistsError:
        raise _changed(path, "was created") from None
    except OSError:
        if _ino_at(dfd, name) is not None:
            raise _changed(path, "was created") from None
        sys.rename(tmp, name, dfd)
        return
    with contextlib.suppress(OSError):
        at.unlink(tmp, dfd)


def _folder_lock(dfd: int) -> contextlib.AbstractContextManager[None]:
    """Serialize checked commits in one folder across Steadyhand processes.

    Two servers swapping the same file at once could each undo the other's swap; under
    this lock only outside writers (who never take it) race a commit, and the swap check
    handles them. Best effort: where the lock fails the commit goes on unlocked
    (:func:`steadyhand.system.locks.folder_locked`: ``flock`` on the folder, ``LockFileEx``
    on a file standing for it on Windows).
    """
    return locks.folder_locked(dfd)


def _same_stat(
    dfd: int, name: str, expect_stat: tuple[int, int] | None, links_ok: bool = False
) -> bool:
    if expect_stat is None:
        return False
    try:
        st = at.lstat(name, dfd)
    except OSError:
        return False
    if too_many_links(st, links_ok=links_ok):
        return False
    return stat.S_ISREG(st.st_mode) and (st.st_size, st.st_mtime_ns) == expect_stat


def _swap_checked(
    dfd: int,
    path: str,
    name: str,
    tmp: str,
    ino: int,
    sys: Syscalls,
    expect: str,
    expect_stat: tuple[int, int] | None,
    later: Later | None = None,
    links_ok: bool = False,
) -> None:
    # A quick look first: a file whose size or time moved is hashed before the swap (a
    # changed file is refused without touching it); the displaced copy is hashed anyway.
    if not _same_stat(dfd, name, expect_stat, links_ok) and _hash_at(dfd, name, links_ok) != expect:
        raise _changed(path, "was changed")
    try:
        sys.rename(tmp, name, dfd, RENAME_EXCHANGE)
    except FileNotFoundError:
        raise _changed(path, "was deleted") from None
    except OSError as exc:
        if exc.errno not in _NO_RENAMEAT2:
            raise
        sys.rename(tmp, name, dfd)  # checked just above: the best this file system allows
        return
    # ``name`` now holds our file and ``tmp`` what it displaced.
    displaced = _moved_hash(dfd, tmp, links_ok)
    if displaced == expect:
        # Committed: from here on nothing may fail the write. The old copy is removed
        # after the answer where that can be arranged, else now.
        if later is not None:
            try:
                own = at.dup(dfd)
            except OSError:
                own = -1
            if own >= 0:
                try:
                    later(functools.partial(_remove_displaced, sys, own, tmp, path, close=True))
                    return
                except Exception:
                    at.close(own)
        _remove_displaced(sys, dfd, tmp, path)
        return
    kept, ours_stays = _put_back(dfd, name, tmp, ino)
    if ours_stays:
        raise ToolError(
            ErrorCode.STALE,
            f"{path} was changed by someone else while your change was being saved, and "
            f"their version could not be put back: the file now holds your content and "
            f"theirs was kept as {kept}. Read both, then write what belongs in {path}.",
            path=path,
            refreshed=False,
            kept=kept,
        )
    err = _changed(path, "was changed")
    if kept:
        err.message += f" An older copy of their version was kept as {kept}."
        err.fields["kept"] = kept
    raise err


def checked_delete(
    path: str, *, sys: Syscalls, expect: str | None, fsync: bool, links_ok: bool = False
) -> None:
    """Delete ``path`` (a real path, no symlink) if it still holds the content hashed
    ``expect`` (any content when None); a missing file is fine.

    The folder is opened without following symbolic links, as for a write. The file is
    first moved aside under a temp name and hashed there, so a change made at any moment
    before the move is seen: then it goes back under its name (or, if a new file took
    the name meanwhile, stays beside it as a conflict copy) and ``stale`` is raised.
    """
    folder, name = os.path.split(path)
    try:
        dfd, _ = _open_folder(folder, sys, make=False, path=path)
    except FileNotFoundError:
        return
    try:
        with _folder_lock(dfd), _busy_is_in_use(path):
            if expect is None:
                try:
                    sys.unlink(name, dfd)
                except FileNotFoundError:
                    return
            else:
                _delete_checked(dfd, path, name, sys, expect, links_ok)
        _sync_folder(dfd, sys, fsync)
    finally:
        at.close(dfd)


@contextlib.contextmanager
def _busy_is_in_use(path: str) -> Iterator[None]:
    try:
        yield
    except FileBusy as exc:
        raise in_use(path, exc, "deleted") from exc


def _delete_checked(
    dfd: int, path: str, name: str, sys: Syscalls, expect: str, links_ok: bool = False
) -> None:
    tmp = temp_basename(name)
    try:
        sys.rename(name, tmp, dfd)
    except FileNotFoundError:
        return
    now = _moved_hash(dfd, tmp, links_ok)
    if now == expect:
        sys.unlink(tmp, dfd)
        return
    err = _changed(path, "was changed")
    try:
        sys.rename(tmp, name, dfd, RENAME_NOREPLACE)
    except OSError:
        kept = _keep_aside(dfd, name, tmp) or tmp
        err.message += f" Their version was kept as {kept}."
        err.fields["kept"] = kept
    raise err


def _keep_aside(dfd: int, name: str, tmp: str) -> str | None:
    """Give ``tmp`` a conflict copy's name beside ``name``; that name, or None."""
    kept = f"{name}.steadyhand-conflict-{secrets.token_hex(4)}"
    try:
        at.rename(tmp, kept, dfd)
    except OSError:
        return None
    return kept


def _remove_displaced(sys: Syscalls, dfd: int, tmp: str, path: str, *, close: bool = False) -> None:
    """Remove the old copy a checked swap displaced to ``tmp`` (closing ``dfd`` if asked)."""
    try:
        sys.unlink(tmp, dfd)
    except OSError:
        # The new bytes are in place; the old copy is removed at exit or the next start.
        log.warning("could not remove %s after writing %s", tmp, path)
    finally:
        if close:
            at.close(dfd)


def _put_back(dfd: int, name: str, tmp: str, ino: int) -> tuple[str | None, bool]:
    """Someone wrote ``name`` between our check and our swap: restore their version.

    Returns the name of a copy kept aside, if any, and whether our file stayed under
    ``name``: a copy is kept when a yet newer version arrived meanwhile (the older of the
    two), or when theirs cannot go back under its name (theirs, and ours stays).
    """
    try:
        _PLAIN.rename(tmp, name, dfd, RENAME_EXCHANGE)
    except OSError:
        try:
            replace(tmp, name, dfd)
        except OSError:
            # Theirs is under the temp name, which the clean-up of temp files would
            # remove: give it a name of its own (the temp name only if even that fails).
            return _keep_aside(dfd, name, tmp) or tmp, True
        return None, False
    if _ino_at(dfd, tmp) == ino:
        with contextlib.suppress(OSError):
            at.unlink(tmp, dfd)
        return None, False
    # Our file was itself replaced after the swap: ``tmp`` holds that newest version and
    # ``name`` the one before it. Keep the newest in place and the other aside.
    with contextlib.suppress(OSError):
        _PLAIN.rename(tmp, name, dfd, RENAME_EXCHANGE)
    return _keep_aside(dfd, name, tmp), False


# -- changes to the tree: a move, and a removal of files and folders ----------------------


class FolderHandles:
    """Folders held open (through no symbolic link) by their paths, closed together."""

    def __init__(self, sys: Syscalls) -> None:
        self.sys = sys
        self._held: dict[str, int] = {}

    def get(self, folder: str, path: str) -> int:
        """The folder ``folder`` (on the way to ``path``, for refusals), opened once."""
        dfd = self._held.get(folder)
        if dfd is None:
            dfd, _ = _open_folder(folder, self.sys, make=False, path=path)
            self._held[folder] = dfd
        return dfd

    def close(self) -> None:
        for dfd in self._held.values():
            with contextlib.suppress(OSError):
                at.close(dfd)
        self._held.clear()


@contextlib.contextmanager
def _locked(folders: dict[str, int]) -> Iterator[None]:
    """The folder locks of ``folders`` (real paths, each with its descriptor), taken in
    the order of their paths, so two servers never wait on each other."""
    with contextlib.ExitStack() as stack:
        for _, dfd in sorted(folders.items()):
            stack.enter_context(_folder_lock(dfd))
        yield


def move_checked(
    source: str,
    destination: str,
    *,
    sys: Syscalls,
    fsync: bool,
    identity: tuple[int, int] | None = None,
    replace: str | None = None,
    links_ok: bool = False,
) -> None:
    """Rename ``source`` to ``destination`` (real paths, a file or a folder) in one step,
    never a copy. Both folders are opened through no symbolic link and the rename is made
    in them, so a folder swapped for a link after the check redirects nothing.

    ``identity``: the (device, inode) ``source`` had when it was checked; another file
    there now is ``stale``. Without ``replace`` nothing may be at ``destination``
    (``renameat2(RENAME_NOREPLACE)``: ``stale`` if something appeared meanwhile). With
    ``replace`` (the hash of the file ``destination`` holds) the two names are swapped
    (``RENAME_EXCHANGE``) and the file displaced is hashed at the old name before it is
    removed: if it changed since it was checked, the swap is undone and the move is
    ``stale``. Across volumes the system refuses (``OSError`` with ``EXDEV``): nothing
    is copied. Any failure leaves both names as they were."""
    sfolder, sname = os.path.split(source)
    dfolder, dname = os.path.split(destination)
    held = FolderHandles(sys)
    try:
        try:
            sdfd = held.get(sfolder, source)
        except FileNotFoundError:
            raise _changed(source, "was deleted (with its folder)") from None
        ddfd = held.get(dfolder, destination)  # the same descriptor for the same folder
        with _locked({sfolder: sdfd, dfolder: ddfd}), _busy_is_in_use(source):
            try:
                st = at.lstat(sname, sdfd)
            except FileNotFoundError:
                raise _changed(source, "was deleted") from None
            if identity is not None and (st.st_dev, st.st_ino) != identity:
                raise _changed(source, "was replaced")
            if replace is None:
                _move_new(sdfd, sname, ddfd, dname, destination, sys)
            else:
                _move_over(sdfd, sname, ddfd, dname, destination, sys, replace, links_ok)
        _sync_folder(sdfd, sys, fsync)
        if ddfd != sdfd:
            _sync_folder(ddfd, sys, fsync)
    finally:
        held.close()


def _exists_at(dfd: int, name: str) -> bool:
    try:
        at.lstat(name, dfd)
    except FileNotFoundError:
        return False
    return True


def _move_new(
    sdfd: int, sname: str, ddfd: int, dname: str, destination: str, sys: Syscalls
) -> None:
    try:
        sys.move(sname, sdfd, dname, ddfd, RENAME_NOREPLACE)
        return
    except FileExistsError:
        raise _changed(destination, "was created") from None
    except OSError as exc:
        if exc.errno not in _NO_RENAMEAT2:
            raise
    # no rename that refuses to replace here: checked right before the plain rename
    if _exists_at(ddfd, dname):
        raise _changed(destination, "was created")
    sys.move(sname, sdfd, dname, ddfd)


def _move_over(
    sdfd: int,
    sname: str,
    ddfd: int,
    dname: str,
    destination: str,
    sys: Syscalls,
    expect: str,
    links_ok: bool,
) -> None:
    try:
        there = at.lstat(dname, ddfd)
    except FileNotFoundError:
        raise _changed(destination, "was deleted") from None
    if not stat.S_ISREG(there.st_mode) or too_many_links(there, links_ok=links_ok):
        raise _changed(destination, "was replaced")
    try:
        sys.move(sname, sdfd, dname, ddfd, RENAME_EXCHANGE)
    except FileNotFoundError:
        raise _changed(destination, "was deleted") from None
    except OSError as exc:
        if exc.errno not in _NO_RENAMEAT2:
            raise
        # no swap here: the file is checked right before the plain rename replaces it
        if _hash_at(ddfd, dname, links_ok) != expect:
            raise _changed(destination, "was changed") from None
        sys.move(sname, sdfd, dname, ddfd)
        return
    # ``dname`` holds the moved file now, and ``sname`` the one it replaced.
    if _moved_hash(sdfd, sname, links_ok) == expect:
        try:
            sys.unlink(sname, sdfd)
        except OSError:
            log.warning("could not remove the file %s replaced at %s", sname, destination)
        return
    with contextlib.suppress(OSError):
        _PLAIN.move(sname, sdfd, dname, ddfd, RENAME_EXCHANGE)
    raise _changed(destination, "was changed")


def remove_checked(
    files: list[tuple[str, str]],
    folders: list[str],
    *,
    sys: Syscalls,
    fsync: bool,
    links_ok: bool = False,
) -> list[str]:
    """Delete ``files`` (real paths, each with the hash of the bytes it must still hold)
    and then ``folders`` (parents first; each removed once empty), all or none of the
    files: each is first moved aside under a temp name in its folder and hashed there;
    if one changed (or became something else), every file moved aside goes back and the
    removal is ``stale``, nothing deleted. A file already gone counts as deleted. A
    folder something was put in meanwhile is left, with what it holds now. Returns the
    folders left so."""
    held = FolderHandles(sys)
    aside: list[tuple[int, str, str, str]] = []  # (folder, name, temp name, path)
    try:
        for path, expect in files:
            folder, name = os.path.split(path)
            try:
                dfd = held.get(folder, path)
            except FileNotFoundError:
                continue  # gone with its folder
            if _journal is not None:
                _journal.note(folder)
            tmp = temp_basename(name)
            try:
                with _busy_is_in_use(path):
                    sys.rename(name, tmp, dfd, RENAME_NOREPLACE)
            except FileNotFoundError:
                continue
            except OSError as exc:
                if exc.errno not in _NO_RENAMEAT2:
                    raise
                sys.rename(name, tmp, dfd)  # a fresh random name: nobody else's
            aside.append((dfd, name, tmp, path))
            if _moved_hash(dfd, tmp, links_ok) != expect:
                raise _changed(path, "was changed")
    except BaseException:
        _put_all_back(aside)
        held.close()
        raise
    for dfd, _, tmp, path in aside:
        try:
            sys.unlink(tmp, dfd)
        except OSError:
            log.warning("could not remove %s after deleting %s", tmp, path)
    for dfd in {d for d, _, _, _ in aside}:
        _sync_folder(dfd, sys, fsync)
    held.close()
    return _remove_folders(folders, sys, fsync)


def _put_all_back(aside: list[tuple[int, str, str, str]]) -> None:
    """Give every file moved aside its name again (newest first); one whose name was
    taken meanwhile keeps a conflict copy's name beside it."""
    for dfd, name, tmp, path in reversed(aside):
        try:
            _PLAIN.rename(tmp, name, dfd, RENAME_NOREPLACE)
        except OSError:
            kept = _keep_aside(dfd, name, tmp)
            log.warning("%s was taken meanwhile; its content was kept as %s", path, kept or tmp)


def _remove_folders(folders: list[str], sys: Syscalls, fsync: bool) -> list[str]:
    left: list[str] = []
    for folder in reversed(folders):  # the deepest first
        parent, name = os.path.split(folder)
        try:
            pfd, _ = _open_folder(parent, sys, make=False, path=folder)
        except FileNotFoundError:
            continue
        try:
            try:
                sys.rmdir(name, pfd)
            except FileNotFoundError:
                continue
            except OSError as exc:
                if exc.errno not in (errno.ENOTEMPTY, errno.EEXIST):
                    raise
                left.append(folder)
                continue
            _sync_folder(pfd, sys, fsync)
        finally:
            at.close(pfd)
    return left


def _pid_alive(pid: int) -> bool:
    return alive(pid)


def clean_stale_temps(folder: str, *, min_age_s: float = 0.0) -> list[str]:
    """Remove temp files left in ``folder`` by a Steadyhand process that no longer runs.

    Only names of Steadyhand's own temp pattern are considered, only regular files, and
    only when the process that made them is gone; a user's file is never touched.
    """
    return _remove_temps(folder, lambda pid: not _pid_alive(pid), min_age_s)[0]


def _own_temps_left(folder: str) -> bool:
    """Remove this process's temp files from ``folder``; whether one is still there."""
    pid = os.getpid()
    return _remove_temps(folder, lambda owner: owner == pid, None)[1]


def _remove_temps(
    folder: str, made_by: Callable[[int], bool], min_age_s: float | None
) -> tuple[list[str], bool]:
    """Remove the regular files of Steadyhand's temp pattern in ``folder`` whose maker's
    pid ``made_by`` accepts (and, with ``min_age_s``, that are at least that old).
    Returns what was removed, and whether a file that should have gone may still be there
    (one could not be removed, or the folder could not be read)."""
    removed: list[str] = []
    try:
        entries = list(os.scandir(folder))
    except FileNotFoundError:
        return removed, False
    except OSError:
        return removed, True
    now = time.time()
    left = False
    for entry in entries:
        m = TEMP_PATTERN.match(entry.name)
        if not m or not made_by(int(m.group(1))):
            continue
        try:
            st = entry.stat(follow_symlinks=False)
        except FileNotFoundError:
            continue
        except OSError:
            left = True
            continue
        if not stat.S_ISREG(st.st_mode):
            continue
        if min_age_s is not None and now - st.st_mtime < min_age_s:
            continue
        try:
            os.unlink(entry.path)
        except FileNotFoundError:
            continue
        except OSError:
            left = True
            continue
        removed.append(entry.path)
    return removed, left


# -- the journal of folders that hold (or held) temp files ---------------------------

_JOURNAL_NAME = re.compile(r"\A(\d+)\.folders\Z")


class TempJournal:
    """Which folders this process made temp files in: ``<state>/temps/<pid>.folders``.

    One JSON string per line, appended (and fsynced) the first time a folder is used, so
    a crash leaves a list of the few folders to look at instead of a workspace to walk.
    """

    def __init__(self, directory: str) -> None:
        self.directory = directory
        self._pid = -1
        self._seen: set[str] = set()
        self._lock = threading.Lock()
        self._broken = False

    @property
    def file(self) -> str:
        return os.path.join(self.directory, f"{os.getpid()}.folders")

    @staticmethod
    def default() -> TempJournal:
        return TempJournal(os.path.join(state_dir(), "temps"))

    def note(self, folder: str) -> None:
        with self._lock:
            if self._pid != os.getpid():  # a forked child writes its own journal
                self._pid, self._seen, self._broken = os.getpid(), set(), False
            if self._broken or folder in self._seen:
                return
            line = (json.dumps(folder) + "\n").encode("utf-8", "surrogatepass")
            try:
                os.makedirs(self.directory, 0o700, exist_ok=True)
                fd = open_regular(self.file, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
                try:
                    os.write(fd, line)
                    os.fsync(fd)
                finally:
                    os.close(fd)
            except OSError as exc:
                # Never fail a write for this: temps are only ever left by a crash.
                self._broken = True
                log.warning("temp journal disabled (%s: %s)", self.file, exc.strerror)
                return
            self._seen.add(folder)

    def finish(self) -> None:
        """At a clean exit: remove this process's temp files still in the journaled
        folders (a displaced copy whose removal failed), then the journal, which is only
        needed after a crash; it stays if a temp file could not be removed, for the next
        start to clean."""
        with self._lock:
            if self._pid == os.getpid():
                left = [folder for folder in sorted(self._seen) if _own_temps_left(folder)]
                if not left:
                    with contextlib.suppress(OSError):
                        os.unlink(self.file)
            self._pid, self._seen = -1, set()

    def sweep(self) -> list[str]:
        """Clean the folders journaled by processes that are gone; returns removed temps."""
        removed: list[str] = []
        try:
            entries = list(os.scandir(self.directory))
        except OSError:
            return removed
        for entry in entries:
            m = _JOURNAL_NAME.match(entry.name)
            if not m or _pid_alive(int(m.group(1))):
                continue
            try:
                with os.fdopen(open_regular(entry.path, os.O_RDONLY), "rb") as fh:
                    raw_lines = fh.read().splitlines()
            except OSError:
                continue
            folders: set[str] = set()
            for raw in raw_lines:
                try:
                    value = json.loads(raw.decode("utf-8", "surrogatepass"))
                except (ValueError, RecursionError):
                    continue  # a line cut short by a crash (or not the journal's)
                if isinstance(value, str) and os.path.isabs(value):
                    folders.add(value)
            for folder in sorted(folders):
                removed += clean_stale_temps(folder)
            with contextlib.suppress(OSError):
                os.unlink(entry.path)
        if removed:
            log.info("removed %d temp file(s) left by a stopped writer", len(removed))
        return removed


_journal: TempJournal | None = None


def use_journal(journal: TempJournal | None) -> None:
    """Make :func:`atomic_write` note its folders in ``journal`` (None: stop)."""
    global _journal
    _journal = journal


def start_journal() -> TempJournal:
    """At server start: clean up after crashed writers, then journal this process (its
    journal is removed when the process exits cleanly)."""
    journal = TempJournal.default()
    try:
        journal.sweep()
    except Exception:  # never keep the server from starting over housekeeping
        log.exception("temp clean-up failed")
    use_journal(journal)
    atexit.register(journal.finish)
    return journal

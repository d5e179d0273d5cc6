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
    ``stale``, and is never opened. Returns the new file's status.
    """
    folder, name = os.path.split(path)
    try:
        dfd, created = _open_folder(folder, sys, make=expect is None, path=path)
    except FileNotFoundError:
        raise _changed(path, "was deleted (with its folder)") from None
    try:
        try:
            return _write_in(
                dfd, path, name, data, sys, fsync, expect, expect_stat, create, later, links_ok
            )
        except FileBusy as exc:
            raise in_use(path, exc, "written") from exc
        except BaseException:
            for d in reversed(created):
                with contextlib.suppress(OSError):
                    os.rmdir(d)
            raise
    finally:
        at.close(dfd)


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


def _write_in(
    dfd: int,
    path: str,
    name: str,
    data: bytes,
    sys: Syscalls,
    fsync: bool,
    expect: str | None,
    expect_stat: tuple[int, int] | None,
    create: bool,
    later: Later | None,
    links_ok: bool = False,
) -> os.stat_result:
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
        # The file is replaced, which its folder's permissions would allow; its own say
        # whether it may be written at all, as for an editor saving it.
        raise OSError(errno.EACCES, "the file's permissions do not allow writing it", path)
    mode = stat.S_IMODE(existing.st_mode) if existing else (0o666 & ~_umask())
    if create:
        made = _create_anonymous(dfd, path, name, data, sys, fsync, mode)
        if made is not None:
            _sync_folder(dfd, sys, fsync)
            return made
    if _journal is not None:
        _journal.note(os.path.dirname(path))
    tmp = temp_basename(name)
    fd = -1
    ours = False  # whether the temp name holds our new file
    try:
        fd = sys.open(
            tmp,
            os.O_WRONLY | os.O_CREAT | os.O_EXCL | flags.CLOEXEC | flags.NOFOLLOW | flags.BINARY,
            0o600,
            dfd,
        )
        ours = True
        # what the file will be: a rename changes neither its size nor its time
        written = _fill(fd, data, sys, mode, fsync, existing, (dfd, name))
        fd_to_close, fd = fd, -1
        sys.close(fd_to_close)
        ours = False  # from here on _commit owns the temp name
        _commit(
            dfd, path, name, tmp, written.st_ino, sys, expect, expect_stat, create, later, links_ok
        )
    except BaseException:
        if fd >= 0:
            with contextlib.suppress(OSError):
                os.close(fd)
        if ours:
            with contextlib.suppress(OSError):
                at.unlink(tmp, dfd)
        raise
    _sync_folder(dfd, sys, fsync)
    return written


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


def _create_anonymous(
    dfd: int, path: str, name: str, data: bytes, sys: Syscalls, fsync: bool, mode: int
) -> os.stat_result | None:
    """Create ``name`` in ``dfd`` holding ``data``: written to a file without a name,
    which gets its name only once complete, never over an existing file (``stale`` if
    one appeared). Nothing half-written ever has a name, and a failure or a crash leaves
    nothing behind. None where this cannot be done here (the caller writes a named temp
    file instead); the new file's status otherwise (the caller syncs the folder)."""
    try:
        fd = sys.open_anonymous(dfd)
    except OSError as exc:
        if exc.errno in _NO_ANONYMOUS:
            return None
        raise
    try:
        written = _fill(fd, data, sys, mode, fsync, None)
        try:
            sys.link_anonymous(fd, name, dfd)
        except FileExistsError:
            raise _changed(path, "was created") from None
        except OSError as exc:
            if exc.errno in _NO_LINK and _ino_at(dfd, name) is None:
                with contextlib.suppress(OSError):
                    os.close(fd)
                return None
            raise
    except BaseException:
        with contextlib.suppress(OSError):
            os.close(fd)
        raise
    try:
        sys.close(fd)
    except OSError:
        # The bytes may not all be stored: take back the name just given (if it is still
        # this file's) rather than leave a file that may be incomplete.
        if _ino_at(dfd, name) == written.st_ino:
            with contextlib.suppress(OSError):
                at.unlink(name, dfd)
        raise
    return written


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

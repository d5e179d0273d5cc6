"""The per-user folder where running servers leave word of themselves (a socket or pipe
name and a small descriptor), and the checks that keep it the user's own.

The folder is found from who the user is and from the system, never from environment
variables: the programs that start MCP servers hand them a filtered environment
(``XDG_RUNTIME_DIR``, ``TMPDIR`` and even ``HOME`` may be missing), and the same user
must find the same folder from any of them. The candidates, in order:

- Linux and other Unix systems: ``/run/user/<uid>/steadyhand`` when ``/run/user/<uid>``
  is a private folder of this user's (the login manager's runtime folder), then
  ``<home>/.cache/steadyhand/run`` (the home folder from the user database), then
  ``/tmp/steadyhand-<uid>``.
- macOS: ``<home>/Library/Caches/steadyhand/run``, then ``/tmp/steadyhand-<uid>``.
- Windows: ``<Local AppData>\\steadyhand\\run`` (the known folder, asked of the shell).

A server listens in the first candidate it can use; a client looks in every one.
``STEADYHAND_RUNTIME_DIR`` names one folder to use instead, for tests and sandboxes that
must keep apart: a production setup never needs it (and a host that filters it out then
finds the default folder, where no server listens).

A folder is used only when it belongs to this user and no one else may enter it: on POSIX
its owner is the effective uid and its mode is made 0700 when it was more open; on
Windows its owner is this user's SID and its DACL is made to let only that SID in. What
is in a folder that was open to others may have been put there by them, so every entry
is checked again (:func:`file_is_private`).
"""

from __future__ import annotations

import contextlib
import logging
import os
import stat
import sys
from dataclasses import dataclass

log = logging.getLogger(__name__)

#: The environment variable naming the folder to use instead of the default (tests).
OVERRIDE = "STEADYHAND_RUNTIME_DIR"


@dataclass(frozen=True, slots=True)
class Folder:
    """A folder fit for sockets: ``tightened`` when it was open to others until now
    (so entries in it may be someone else's)."""

    path: str
    tightened: bool = False


def folder_problem(mode: int, owner: int, me: int) -> str | None:
    """What makes a folder with ``mode`` and ``owner`` unfit for this user's sockets, or
    None. Access for others is no problem here: it is taken away (see :func:`private`)."""
    if not stat.S_ISDIR(mode):
        return "it is not a folder"
    if owner != me:
        return f"it belongs to uid {owner}, not to uid {me}"
    return None


def entry_problem(mode: int, owner: int, me: int, *, kind: str) -> str | None:
    """What makes an entry of the folder (``kind``: "file" or "socket") untrustworthy, or
    None: it must be of that kind, this user's, and closed to everyone else."""
    wanted = stat.S_ISSOCK(mode) if kind == "socket" else stat.S_ISREG(mode)
    if not wanted:
        return f"it is not a {kind}"
    if owner != me:
        return f"it belongs to uid {owner}, not to uid {me}"
    if stat.S_IMODE(mode) & 0o077:
        return f"others may use it (mode {stat.S_IMODE(mode):04o})"
    return None


def _override() -> str | None:
    value = os.environ.get(OVERRIDE)
    if not value:
        return None
    if not os.path.isabs(value):
        log.warning("ignoring %s=%r: it must be an absolute path", OVERRIDE, value)
        return None
    return value


def _home(uid: int) -> str | None:
    """This user's home folder as the user database has it (not ``$HOME``), when it is a
    folder of theirs."""
    if sys.platform == "win32":
        return None
    import pwd

    try:
        home: str = pwd.getpwuid(uid).pw_dir
        st = os.stat(home)
    except (KeyError, OSError):
        return None
    if not os.path.isabs(home) or not stat.S_ISDIR(st.st_mode) or st.st_uid != uid:
        return None
    return home


def candidates() -> list[str]:
    """The folders this user's servers may listen in, the preferred one first."""
    explicit = _override()
    if explicit is not None:
        return [explicit]
    if sys.platform == "win32":
        local = _local_app_data()
        return [os.path.join(local, "steadyhand", "run")] if local else []
    uid = os.geteuid()
    found: list[str] = []
    home = _home(uid)
    if sys.platform == "darwin":
        if home is not None:
            found.append(os.path.join(home, "Library", "Caches", "steadyhand", "run"))
    else:
        run = f"/run/user/{uid}"
        with contextlib.suppress(OSError):
            st = os.lstat(run)
            if stat.S_ISDIR(st.st_mode) and st.st_uid == uid and not st.st_mode & 0o077:
                found.append(os.path.join(run, "steadyhand"))
        if home is not None:
            found.append(os.path.join(home, ".cache", "steadyhand", "run"))
    found.append(f"/tmp/steadyhand-{uid}")
    return found


def private(path: str, *, create: bool) -> Folder | None:
    """``path`` when it is a folder of this user's that no one else may enter (taken from
    others if they could; made, with its parents, when ``create``); None otherwise, with
    the reason logged."""
    if sys.platform == "win32":
        return _private_windows(path, create=create)
    if create:
        try:
            os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
            os.mkdir(path, 0o700)
        except FileExistsError:
            pass
        except OSError as exc:
            log.info("cannot make the socket folder %s: %s", path, exc)
            return None
    flags = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
    try:
        fd = os.open(path, flags)  # no link followed: the folder itself is judged
    except OSError:
        if create or os.path.lexists(path):
            log.warning("not using %s for sockets: it is not a folder of its own", path)
        return None
    try:
        st = os.fstat(fd)
        problem = folder_problem(st.st_mode, st.st_uid, os.geteuid())
        if problem is not None:
            log.warning("not using %s for sockets: %s", path, problem)
            return None
        if not st.st_mode & 0o077:
            return Folder(path)
        try:
            os.fchmod(fd, 0o700)
        except OSError as exc:
            log.warning("not using %s for sockets: others may enter it (%s)", path, exc)
            return None
        log.warning("%s was open to others: made it private (0700)", path)
        return Folder(path, tightened=True)
    finally:
        os.close(fd)


def file_is_private(fd: int, *, kind: str = "file") -> bool:
    """Whether the open file ``fd`` (in a socket folder) is this user's and closed to
    everyone else; a reason is logged when it is not."""
    if sys.platform == "win32":
        return _handle_is_private(fd)
    st = os.fstat(fd)
    problem = entry_problem(st.st_mode, st.st_uid, os.geteuid(), kind=kind)
    if problem is not None:
        log.warning("ignoring a %s in the socket folder: %s", kind, problem)
    return problem is None


def socket_is_private(path: str) -> bool:
    """Whether the socket at ``path`` (not followed if a link) is this user's and closed
    to everyone else. Windows' named pipes are no files: there the pipe's own security
    and the peer check do this work."""
    if sys.platform == "win32":
        return True
    try:
        st = os.lstat(path)
    except OSError:
        return False
    problem = entry_problem(st.st_mode, st.st_uid, os.geteuid(), kind="socket")
    if problem is not None:
        log.warning("not connecting to %s: %s", path, problem)
    return problem is None


if sys.platform == "win32":
    import ctypes
    import msvcrt
    import uuid

    from steadyhand.system import winsec

    _shell32 = ctypes.WinDLL("shell32", use_last_error=True)
    _ole32 = ctypes.WinDLL("ole32", use_last_error=True)
    _SHGetKnownFolderPath = _shell32.SHGetKnownFolderPath
    _SHGetKnownFolderPath.restype = ctypes.c_long
    _SHGetKnownFolderPath.argtypes = [
        ctypes.c_char_p,
        ctypes.c_uint32,
        ctypes.c_void_p,
        ctypes.POINTER(ctypes.c_void_p),
    ]
    _CoTaskMemFree = _ole32.CoTaskMemFree
    _CoTaskMemFree.restype = None
    _CoTaskMemFree.argtypes = [ctypes.c_void_p]
    #: FOLDERID_LocalAppData
    _LOCAL_APP_DATA = uuid.UUID("F1B32785-6FBA-4FCF-9D55-7B8E7F157091")
    _FILE_ATTRIBUTE_REPARSE_POINT = 0x400

    def _local_app_data() -> str | None:
        """The user's Local AppData folder, asked of the shell (not ``%LOCALAPPDATA%``)."""
        out = ctypes.c_void_p()
        guid = ctypes.create_string_buffer(_LOCAL_APP_DATA.bytes_le, 16)
        if _SHGetKnownFolderPath(guid.raw, 0, None, ctypes.byref(out)) != 0:
            return None
        try:
            return ctypes.wstring_at(out.value or 0)
        finally:
            _CoTaskMemFree(out)

    def _private_windows(path: str, *, create: bool) -> Folder | None:
        me = winsec.current_sid()
        if create:
            try:
                os.makedirs(os.path.dirname(path), exist_ok=True)
                winsec.make_private_folder(path)
            except FileExistsError:
                pass
            except OSError as exc:
                if not os.path.isdir(path):
                    log.info("cannot make the socket folder %s: %s", path, exc)
                    return None
        try:
            st = os.lstat(path)
            owner, sddl = winsec.path_security(path)
        except OSError:
            return None
        if not stat.S_ISDIR(st.st_mode) or st.st_file_attributes & _FILE_ATTRIBUTE_REPARSE_POINT:
            log.warning("not using %s for pipes: it is not a folder of its own", path)
            return None
        if owner != me:
            log.warning("not using %s for pipes: it belongs to %s, not to %s", path, owner, me)
            return None
        if winsec.dacl_is_private(sddl, me):
            return Folder(path)
        try:
            winsec.make_folder_private(path)
        except OSError as exc:
            log.warning("not using %s for pipes: others may enter it (%s)", path, exc)
            return None
        log.warning("%s was open to others: made it private", path)
        return Folder(path, tightened=True)

    def _handle_is_private(fd: int) -> bool:
        try:
            owner, _sddl = winsec.handle_security(msvcrt.get_osfhandle(fd))
        except OSError:
            return False
        me = winsec.current_sid()
        if owner != me:
            log.warning("ignoring a file in the pipe folder: it belongs to %s", owner)
            return False
        return True

else:

    def _local_app_data() -> str | None:
        return None

"""Resolving and confining paths.

Every tool call goes through :func:`resolve`: the model's ``file_path`` (absolute, ``~``,
``file://`` URI or workspace-relative) becomes an absolute real path (symlinks resolved;
for a file that does not exist yet, the nearest existing ancestor's real path), which
must lie inside a workspace folder or an allowed path and match no deny glob.

The real path is spelled as its volume stores it (:mod:`steadyhand.paths.spelling`): on
a volume that ignores case, two spellings of one file resolve to one path, and the deny
globs ignore case there. On Windows the path rules of :mod:`steadyhand.paths.windows`
apply first (drive letters, ``\\?\\``, UNC shares, streams and device names refused).
"""

from __future__ import annotations

import errno
import ntpath
import os
import re
import stat
from dataclasses import dataclass
from urllib.parse import unquote, urlparse

from steadyhand.fs.checked_open import hard_linked, too_many_links
from steadyhand.paths import windows
from steadyhand.paths.spelling import canonical, glob_match, ignores_case, inside
from steadyhand.protocol.errors import ErrorCode, ToolError
from steadyhand.system import WINDOWS_PATHS
from steadyhand.system.checked import status_without_links

MAX_PATH_BYTES = 4096


@dataclass(frozen=True, slots=True)
class Roots:
    """Where the agent may work: workspace folders and extra allowed paths (real paths)."""

    workspace: tuple[str, ...]
    allowed: tuple[str, ...] = ()
    deny_globs: tuple[str, ...] = ()
    #: Files with several hard links may have a name outside the roots; refused unless set.
    allow_hard_links: bool = False

    @staticmethod
    def of(
        workspace: list[str],
        allowed: tuple[str, ...],
        deny: tuple[str, ...],
        allow_hard_links: bool = False,
    ) -> Roots:
        real = tuple(real_root(p) for p in workspace)
        allow = tuple(real_root(p) for p in allowed)
        return Roots(real, allow, deny, allow_hard_links)


def real_root(folder: str) -> str:
    """A root folder as every path inside it will be spelled: real (links resolved) and
    in the volume's stored spelling."""
    if WINDOWS_PATHS:
        folder = windows.normalize(folder)
    real = os.path.realpath(os.path.expanduser(folder))
    return canonical(real)


@dataclass(frozen=True, slots=True)
class ResolvedPath:
    path: str  # absolute real path
    shown: str  # how to name it to the model
    root: str | None  # the root folder it lies in
    stat: os.stat_result | None  # lstat of the real path, None if it does not exist

    @property
    def exists(self) -> bool:
        return self.stat is not None

    def status(self, *, again: bool) -> os.stat_result | None:
        """The path's ``lstat`` (None if it does not exist): the one resolving took, or
        with ``again`` a new one (another tool call may have changed the path since)."""
        if not again:
            return self.stat
        try:
            return os.lstat(self.path)
        except (OSError, ValueError):
            return None

    @property
    def relative(self) -> str | None:
        if self.root is None:
            return None
        return os.path.relpath(self.path, self.root)


def _invalid(msg: str, **fields: object) -> ToolError:
    return ToolError(ErrorCode.INVALID_PATH, msg, **fields)


_SURROGATE = re.compile("[\ud800-\udfff]")


def shown_path(file_path: str) -> str:
    """``file_path`` quoted for a message, with any lone surrogate escaped: a reply must
    be valid UTF-8 JSON, and a strict parser rejects a whole reply holding one."""
    return repr(file_path).encode("utf-8", "backslashreplace").decode("utf-8")


def names_folder(file_path: str, *, windows_rules: bool = WINDOWS_PATHS) -> bool:
    """Whether ``file_path`` ends with a slash (or ``/.``): POSIX takes it to name a
    folder, never a file. With ``windows_rules`` a backslash is a separator too:
    ``C:\\ws\\a.txt\\`` names a folder (Windows opens no file by it); a root (``/``,
    ``C:\\``, ``\\\\server\\share\\``) is not counted."""
    p = file_path.rstrip()
    if p[:5].lower() == "file:":
        p = unquote(urlparse(p).path)
    seps = "/"
    if windows_rules:
        seps = "/\\"
        p = ntpath.splitdrive(windows.strip_verbatim(p))[1]
    ends = tuple(sep + tail for sep in seps for tail in ("", "."))
    return p.endswith(ends) and p.strip(seps + ".") != ""


def _last_separator(file_path: str) -> str:
    """The separator a path :func:`names_folder` accepted ends with (before a ``.``)."""
    return "\\" if file_path.rstrip().rstrip(".").endswith("\\") else "/"


def expand(file_path: str, roots: Roots, *, windows_rules: bool = WINDOWS_PATHS) -> str:
    """The absolute (not yet real) path a model meant (``windows_rules``: Windows's
    paths, :mod:`steadyhand.paths.windows`; they hold on Windows and are tested
    everywhere)."""
    lone = _SURROGATE.search(file_path)
    if lone is not None:
        raise _invalid(
            f"file_path {shown_path(file_path)} contains a lone surrogate "
            f"(U+{ord(lone.group()):04X} at position {lone.start()}), a character no file "
            "name can hold; it usually comes from bytes that were not valid UTF-8. Pass the "
            "path as plain UTF-8 text (list the folder to see the file's real name).",
            path=file_path.encode("utf-8", "backslashreplace").decode("utf-8"),
        )
    if not file_path.strip():
        raise _invalid("file_path is empty. Pass the absolute path of the file.")
    if "\x00" in file_path:
        raise _invalid("file_path contains a NUL byte. Pass a plain file path.")
    if windows_rules:
        return _expand_windows(file_path, roots)
    if file_path.startswith("\\\\") or file_path.startswith("//"):
        raise _invalid(
            f"UNC and network paths such as {file_path!r} are not allowed. "
            "Use a path inside the workspace."
        )
    p = file_path
    if p[:5].lower() == "file:":  # a scheme's case does not matter (RFC 3986)
        parsed = urlparse(p)
        if parsed.netloc not in ("", "localhost"):
            raise _invalid(f"The URI {p!r} names another host. Use a local file path.")
        p = unquote(parsed.path)
        if "\x00" in p:
            raise _invalid("file_path contains a NUL byte. Pass a plain file path.")
        if p.startswith("//"):
            raise _invalid(f"The URI {file_path!r} names a network share. Use a local path.")
    p = os.path.expanduser(p)
    if not os.path.isabs(p):
        if not roots.workspace:
            raise _invalid(
                f"{file_path!r} is relative and there is no workspace folder to resolve it "
                "against. Pass an absolute path."
            )
        p = os.path.join(roots.workspace[0], p)
    try:
        encoded = os.fsencode(p)
    except UnicodeEncodeError:  # a lone surrogate no file name can hold
        raise _invalid(
            "file_path contains a character no file name can hold (a lone surrogate). "
            "Pass a plain file path."
        ) from None
    if len(encoded) > MAX_PATH_BYTES:
        raise _invalid("file_path is too long. Pass a shorter path.")
    return os.path.normpath(p)


def _expand_windows(file_path: str, roots: Roots) -> str:
    """:func:`expand` by Windows's rules."""
    p = file_path
    if p[:5].lower() == "file:":
        local = windows.uri_to_path(p)
        if local is None:
            raise _invalid(
                f"The URI {file_path!r} names no file of this machine. Use a local path "
                "such as C:\\project\\file.txt."
            )
        p = local
    if windows.device_namespace(p):
        raise _invalid(
            f"{file_path!r} names a device (the \\\\.\\ or \\\\?\\ namespace), not a "
            "file. Use the path of a file inside the workspace."
        )
    p = ntpath.expanduser(windows.strip_verbatim(p))
    if not windows.is_absolute(p):
        drive, rest = ntpath.splitdrive(p.replace("/", "\\"))
        if drive or rest.startswith("\\"):
            raise _invalid(
                f"{file_path!r} is relative to the current folder of a drive. Pass the full "
                "path, with its drive letter (C:\\...)."
            )
        if not roots.workspace:
            raise _invalid(
                f"{file_path!r} is relative and there is no workspace folder to resolve it "
                "against. Pass an absolute path."
            )
        p = ntpath.join(roots.workspace[0], p)
    why = windows.refusal(p)
    if why is not None:
        raise _invalid(f"file_path {why}. Use the file's own plain name.")
    if len(p) > 32_000:
        raise _invalid("file_path is too long. Pass a shorter path.")
    return windows.normalize(p)


def resolve(file_path: str, roots: Roots) -> ResolvedPath:
    """Resolve ``file_path`` or raise :class:`ToolError` (invalid_path, not_regular_file,
    outside_workspace, denied).

    Confinement comes first, then the deny globs, and only then what is at the path (its
    type, its link count, a trailing slash, a part that is a file): a path outside the
    workspace, or denied, gets one answer whatever is there, so no answer tells anything
    about a place the agent may not look."""
    absolute = expand(file_path, roots)
    real, st, problem = _locate(absolute)
    root = _root_of(real, roots)
    if root is None:
        raise _outside(file_path, absolute, real, roots)
    pattern = deny_pattern(real, roots, root, ignore_case=ignores_case(real, st))
    if pattern is not None:
        named = file_path if real == absolute else f"{file_path} leads to {real}, which"
        raise ToolError(
            ErrorCode.DENIED,
            f"{named} matches the deny pattern {pattern!r}; agents may not read or "
            "write it. Leave this file alone or ask the user.",
            path=real,
        )
    if problem is not None:
        raise _unusable(file_path, problem)
    if st is not None and stat.S_ISLNK(st.st_mode):
        raise _invalid(
            f"{file_path!r} is a symbolic link that cannot be resolved (a loop?). Pass the "
            "path of the file it should lead to instead, or ask the user to fix the link."
        )
    if names_folder(file_path) and (st is None or not stat.S_ISDIR(st.st_mode)):
        # normpath dropped the slash; POSIX would answer ENOTDIR (or create nothing)
        what = "is a file" if st is not None and stat.S_ISREG(st.st_mode) else "does not exist"
        raise _invalid(
            f"{file_path!r} ends with '{_last_separator(file_path)}', which names a folder, "
            f"but {absolute} {what}. Drop the slash to mean a file; Steadyhand reads and "
            "writes files, not folders.",
            path=real,
        )
    if st is not None and not (stat.S_ISREG(st.st_mode) or stat.S_ISDIR(st.st_mode)):
        raise not_regular(file_path, real, st)
    if st is not None and too_many_links(st, links_ok=roots.allow_hard_links):
        raise hard_linked(file_path, real, st.st_nlink)
    return ResolvedPath(real, real, root, st)


def deny_pattern(
    real: str, roots: Roots, root: str | None = None, *, ignore_case: bool | None = None
) -> str | None:
    """The ``denyGlobs`` pattern the real path ``real`` matches, if any (it is matched as
    an absolute path and relative to its root, ignoring case where the volume does —
    ``ignore_case`` when the caller knows the volume): what makes :func:`resolve` answer
    ``denied``, and what leaves an entry out of a listing or a search."""
    if not roots.deny_globs:
        return None
    if root is None:
        root = _root_of(real, roots)
    if ignore_case is None:
        ignore_case = ignores_case(real)
    return glob_match(roots.deny_globs, real, root, ignore_case=ignore_case)


def _root_of(real: str, roots: Roots) -> str | None:
    return next((r for r in (*roots.workspace, *roots.allowed) if inside(real, r)), None)


def _outside(file_path: str, absolute: str, real: str, roots: Roots) -> ToolError:
    """The one refusal for a path outside the roots. Built from the path as given and
    the roots only: what lies outside (a file, a folder, nothing, a link and where it
    leads) changes nothing in it. A link inside the workspace that leads out is named
    as such (the link is the workspace's own)."""
    where = ", ".join(roots.workspace + roots.allowed) or "no folder is configured"
    through = ""
    if _root_of(absolute, roots) is not None and real != absolute:
        through = " through a symbolic link"
    return ToolError(
        ErrorCode.OUTSIDE_WORKSPACE,
        f"{file_path} leads{through} outside the workspace ({where}). Work on files inside "
        "the workspace, or ask the user to add the folder to the allowedPaths setting.",
        path=absolute,
    )


def not_regular(file_path: str, real: str, st: os.stat_result) -> ToolError:
    """The refusal for a device, a FIFO or a socket."""
    return ToolError(
        ErrorCode.NOT_REGULAR_FILE,
        f"{file_path} is not a regular file (it is a {_kind(st.st_mode)}); "
        "Steadyhand reads and writes regular files only. Leave it alone and work on a "
        "regular file instead; ask the user if you need what it holds.",
        path=real,
    )


def _without_links(absolute: str) -> tuple[os.stat_result | None] | None:
    """``(stat,)`` of ``absolute`` (``(None,)`` if it does not exist but its folder does)
    when no component of it is a symbolic link, found in one or two system calls; None
    when there is a link, or the question needs the long way round (:func:`_locate`).
    Nothing is opened for reading, and a FIFO cannot block
    (:func:`steadyhand.system.checked.status_without_links`)."""
    return status_without_links(absolute)


def _locate(absolute: str) -> tuple[str, os.stat_result | None, OSError | None]:
    """The real path of ``absolute`` (symbolic links resolved), its ``lstat`` (None if
    it does not exist) and what kept it from being looked at, if anything. Nothing is
    judged here: that waits until the path is known to be inside the roots."""
    plain = _without_links(absolute)
    if plain is not None:  # no symbolic link on the way: the path is its own real path
        return (*_spelled(absolute, plain[0]), None)
    try:
        real = os.path.realpath(absolute, strict=False)
    except (OSError, ValueError) as exc:
        # a link on the way went (or changed) while it was being followed
        why = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        return absolute, None, OSError(errno.EINVAL, why)
    try:
        st = os.lstat(real)
    except FileNotFoundError:
        return canonical(real), None, None
    except OSError as exc:
        return real, None, exc
    return (*_spelled(real, st), None)


def _spelled(path: str, st: os.stat_result | None) -> tuple[str, os.stat_result | None]:
    """``path`` in its volume's spelling, and the status of that spelling (a FUSE file
    system may number each spelling of one file apart: the one opened later is this)."""
    spelled = canonical(path, st)
    if spelled == path or st is None:
        return spelled, st
    try:
        return spelled, os.lstat(spelled)
    except OSError:
        return spelled, st


def _unusable(file_path: str, exc: OSError) -> ToolError:
    """The refusal for a path inside the roots that could not be looked at."""
    if exc.errno == errno.ENOTDIR:
        return _invalid(
            f"A part of {file_path!r} is a file, not a folder. To mean that file, drop what "
            "follows its name; to make a new file, pick a path whose folders are folders "
            "(or do not exist yet)."
        )
    if exc.errno == errno.ELOOP:
        return _invalid(
            f"{file_path!r} is a symbolic link loop. Pass the path of the file it should "
            "lead to instead, or ask the user to fix the link."
        )
    if exc.errno == errno.ENAMETOOLONG:
        return _invalid(f"A name in {file_path!r} is too long. Use shorter names.")
    if exc.errno == errno.EINVAL:
        return _invalid(
            f"{file_path!r} cannot be resolved ({exc.strerror or exc}): a link on the way "
            "changed while it was followed. Retry; if it persists, pass the path of the file "
            "the link should lead to."
        )
    return ToolError(ErrorCode.IO_ERROR, f"Cannot inspect {file_path!r}: {exc.strerror}.")


def _kind(mode: int) -> str:
    if stat.S_ISCHR(mode):
        return "character device"
    if stat.S_ISBLK(mode):
        return "block device"
    if stat.S_ISFIFO(mode):
        return "FIFO (named pipe)"
    if stat.S_ISSOCK(mode):
        return "socket"
    return "special file"

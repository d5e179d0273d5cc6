"""What ``move`` and ``delete`` share: the paths at either end as a model gives them, a
folder's contents walked without following a link, and the refusals both give.

A path is resolved, confined and deny-checked as every path is; on top, neither tool
acts on a symbolic link named as the path itself (``resolve`` would give the file it
leads to, which is not what was named), nor on a workspace folder.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field

from steadyhand.context import ToolContext
from steadyhand.paths.resolve import ResolvedPath, expand
from steadyhand.protocol.errors import ErrorCode, ToolError
from steadyhand.state.hashing import content_hash
from steadyhand.tools.fresh import check_fresh
from steadyhand.tools.records import require_read
from steadyhand.tools.suggest import similar_names


def given_path(raw: str) -> str:
    """A path as given, without the trailing slash a folder is often written with."""
    return raw.rstrip("/") if raw.strip("/") else raw


def resolve_end(ctx: ToolContext, raw: str, *, what: str) -> ResolvedPath:
    """``raw`` resolved (``outside_workspace``, ``denied``... as for every path), refused
    (``invalid_path``) when the path itself is a symbolic link or a workspace folder."""
    given = given_path(raw)
    rp = ctx.resolve(given)
    absolute = expand(given, ctx.roots)
    if os.path.islink(absolute):
        raise ToolError(
            ErrorCode.INVALID_PATH,
            f"{given} is a symbolic link (to {rp.path}); Steadyhand does not {what} a link "
            "itself. Pass the path of the file or folder it leads to, or ask the user.",
            path=absolute,
        )
    if rp.path in (*ctx.roots.workspace, *ctx.roots.allowed):
        raise ToolError(
            ErrorCode.INVALID_PATH,
            f"{rp.path} is a workspace folder itself; Steadyhand does not {what} it. Pass a "
            "file or folder inside it.",
            path=rp.path,
        )
    return rp


def missing(path: str, what: str) -> ToolError:
    """``not_found`` for the path to move or delete, with the names close to it."""
    near = similar_names(path)
    hint = f" Did you mean {' or '.join(near)}?" if near else " Check the path (list its folder)."
    return ToolError(
        ErrorCode.NOT_FOUND,
        f"{path} does not exist, so there is nothing to {what}.{hint}",
        path=path,
    )


def require_fresh(ctx: ToolContext, session: str, path: str, tool: str, *, dry_run: bool) -> None:
    """Refuse (``not_read``, ``stale``) a file ``session`` has not read, or that changed
    since it did, as a write over it would be: a text file with the diff of what changed
    (the session's view moved to it, unless a dry run), a binary one (an image or PDF
    read) by its bytes."""
    s = ctx.sessions.get(session)
    rec = require_read(s, path, tool)
    try:
        snap = ctx.snapshot(path)
    except ToolError as err:
        if err.code != ErrorCode.BINARY:
            raise
        if rec.source == "disk" and rec.hash == content_hash(ctx.read_raw(path).data):
            return
        raise ToolError(
            ErrorCode.STALE,
            f"{path} changed since you read it, so the {tool} was refused. Read it again, "
            "then retry.",
            path=path,
            refreshed=False,
        ) from None
    check_fresh(ctx, s, rec, snap, tool, dry_run=dry_run)


def under(path: str, folder: str) -> bool:
    """Whether ``path`` is ``folder`` or lies inside it."""
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


@dataclass
class Contents:
    """What a folder holds, walked in name order without following a link."""

    #: Regular files (real paths), with their status.
    files: list[tuple[str, os.stat_result]] = field(default_factory=list)
    #: Folders inside it, parents first.
    folders: list[str] = field(default_factory=list)
    #: What is neither (symbolic links, FIFOs, sockets, devices), with what it is.
    others: list[tuple[str, str]] = field(default_factory=list)
    #: The walk stopped at its bound: there is more.
    more: bool = False

    @property
    def entries(self) -> int:
        return len(self.files) + len(self.folders) + len(self.others)


def walk(folder: str, most: int) -> Contents:
    """The files, folders and other entries under ``folder``, stopping once more than
    ``most`` files and other entries were found (``more``)."""
    out = Contents()
    todo = [folder]
    while todo:
        current = todo.pop()
        try:
            with os.scandir(current) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError:
            continue
        subfolders: list[str] = []
        for entry in entries:
            try:
                st = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            if stat.S_ISDIR(st.st_mode):
                out.folders.append(entry.path)
                subfolders.append(entry.path)
            elif stat.S_ISREG(st.st_mode):
                out.files.append((entry.path, st))
            else:
                out.others.append((entry.path, kind_of(st.st_mode)))
            if len(out.files) + len(out.others) > most:
                out.more = True
                return out
        todo.extend(reversed(subfolders))
    return out


def kind_of(mode: int) -> str:
    if stat.S_ISLNK(mode):
        return "a symbolic link"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "a special file"


def plural(n: int, word: str) -> str:
    return f"{n:,} {word}{'' if n == 1 else 's'}"

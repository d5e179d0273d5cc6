"""``move``: rename or move a file or folder inside the workspace, in one step.

Both ends are resolved, confined and deny-checked as every path is, neither may be a
symbolic link nor a workspace folder, and a folder never goes into itself; a folder's
every file is checked against the deny and protected globs at both ends. Nothing is
replaced unless ``overwrite`` (a file only, which the session must have read, unchanged
since: the history keeps it first). The move itself is one rename on disk (the disk
layer), or the editor's ``RenameFile`` when it has something under it open, so its tabs
and unsaved typing follow; across volumes it is refused (a move there would be a copy
and a delete). Every session's records follow what moved: what was read stays read.
"""

from __future__ import annotations

import dataclasses
import os
import stat

from steadyhand.context import ToolContext
from steadyhand.paths.resolve import ResolvedPath
from steadyhand.protocol.errors import ErrorCode, ToolError
from steadyhand.protocol.params import MoveParams
from steadyhand.protocol.results import Result, success
from steadyhand.state.hashing import content_hash, text_hash
from steadyhand.text.encoding import BinaryContent, decode
from steadyhand.text.lines import to_view
from steadyhand.tools import mutation
from steadyhand.tools import tree_ops as ops
from steadyhand.world import Kept, Move, TreeApplied

#: A moved file up to this size is read, so history knows its text (larger: only moved).
_HASH_MAX_BYTES = 16 << 20


async def move(ctx: ToolContext, p: MoveParams) -> Result:
    src = ops.resolve_end(ctx, p.source_path, what="move")
    if src.stat is None:
        raise ops.missing(src.path, "move")
    dst = ops.resolve_end(ctx, p.destination_path, what="move onto")
    folder = stat.S_ISDIR(src.stat.st_mode)
    source, destination = src.path, dst.path
    if destination == source:
        raise ToolError(
            ErrorCode.NO_CHANGE,
            f"{source} is already at {destination}; nothing was moved.",
            path=source,
        )
    if folder and ops.under(destination, source):
        raise ToolError(
            ErrorCode.INVALID_PATH,
            f"{destination} lies inside {source}: a folder cannot be moved into itself. "
            "Pick a destination outside it.",
            path=source,
        )
    _refuse_taken(dst, source, folder, overwrite=p.overwrite)
    _refuse_other_volume(src, dst)
    files = files_of(ctx, source) if folder else [""]
    tracked = tracked_under(ctx, source)
    locked = [source, destination, *(os.path.join(source, r) for r in tracked if r)]
    async with mutation.hold_tree(ctx, locked):
        op = plan(ctx, source, destination, p.session, "move", files=files)
        if dst.stat is not None:
            op = dataclasses.replace(op, replaced=_replaced(ctx, p, dst))
        elif ctx.world.current(destination) is not None:
            raise _taken(destination, "is open in the editor")
        if p.dry_run:
            return _answer(op, None, dry_run=True)
        applied = await mutation.move(ctx, op)
    return _answer(op, applied, dry_run=False)


def plan(
    ctx: ToolContext,
    source: str,
    destination: str,
    session: str,
    tool: str,
    *,
    files: list[str] | None = None,
    replaced: Kept | None = None,
) -> Move:
    """The move of ``source`` (which is there now) to ``destination``, checked: every
    path it changes at both ends may be changed by ``session`` (``denied``,
    ``protected``, ``read_only``; a folder of more files than ``maxMoveFiles`` is
    ``too_large``)."""
    st = os.lstat(source)
    folder = stat.S_ISDIR(st.st_mode)
    if files is None:
        files = files_of(ctx, source) if folder else [""]
    mutation.may_change_tree(
        ctx,
        [source, destination, *_both_ends(source, destination, files)],
        session,
        within=source,
    )
    return Move(
        source,
        destination,
        folder,
        tool,
        session,
        files=tuple(files),
        count=_file_count(source, files) if folder else 1,
        replaced=replaced,
        moved=None if folder else _kept(ctx, source, st),
        tracked=tuple(tracked_under(ctx, source)),
    )


def tracked_under(ctx: ToolContext, source: str) -> list[str]:
    """The files at or under ``source`` some session has a record of (relative paths)."""
    return sorted(
        os.path.relpath(path, source) if path != source else ""
        for path in ctx.sessions.tracked_paths()
        if ops.under(path, source)
    )


def _answer(op: Move, applied: TreeApplied | None, *, dry_run: bool) -> Result:
    what = f"the folder {op.source} ({ops.plural(op.count, 'file')})" if op.folder else op.source
    replaced = op.replaced is not None
    fields: dict[str, object] = {
        "path": op.destination,
        "source": op.source,
        "destination": op.destination,
        "kind": "folder" if op.folder else "file",
        "files": op.count,
        "replaced": replaced,
    }
    over = ", replacing the file there (kept in history)" if replaced else ""
    if dry_run:
        return success(
            f"Dry run: {what} would move to {op.destination}{over}. Nothing was moved.",
            **fields,
            dry_run=True,
        )
    assert applied is not None
    follow = (
        " What you read of it stays read: edit it there without reading it again."
        if op.tracked
        else ""
    )
    undo = (
        f" To move it back, call undo with id {applied.change_id}."
        if applied.change_id is not None
        else ""
    )
    made = list(applied.made)
    made_note = f" Made the folder(s) {', '.join(made[:5])} on the way." if made else ""
    message = f"Moved {what} to {op.destination}{over}.{made_note}{follow}{undo}"
    if applied.note:
        message += " " + applied.note
    return success(
        message,
        **fields,
        made=made,
        change_id=applied.change_id,
        via=applied.via,
        on_disk=True,
    )


def _taken(destination: str, why: str) -> ToolError:
    return ToolError(
        ErrorCode.EXISTS,
        f"{destination} {why}, so nothing was moved. Pick another destination_path, or, to "
        "replace that file, read it, then call move again with overwrite: true.",
        path=destination,
    )


def _refuse_taken(dst: ResolvedPath, source: str, folder: bool, *, overwrite: bool) -> None:
    st = dst.stat
    if st is None:
        return
    if stat.S_ISDIR(st.st_mode):
        raise ToolError(
            ErrorCode.IS_DIRECTORY,
            f"{dst.path} is an existing folder; move does not put things into a folder by "
            f"naming it, nor replace one. To move {source} into it, pass destination_path "
            f"{os.path.join(dst.path, os.path.basename(source))}.",
            path=dst.path,
        )
    if folder:
        raise ToolError(
            ErrorCode.EXISTS,
            f"{dst.path} is a file, and a folder never replaces a file, so nothing was "
            "moved. Pick another destination_path.",
            path=dst.path,
        )
    if not overwrite:
        raise _taken(dst.path, "already exists")


def _refuse_other_volume(src: ResolvedPath, dst: ResolvedPath) -> None:
    """``io_error`` (``cross_volume``) when the two ends are on different volumes."""
    assert src.stat is not None
    folder = os.path.dirname(dst.path)
    while not os.path.isdir(folder):
        parent = os.path.dirname(folder)
        if parent == folder:
            return
        folder = parent
    try:
        there = os.stat(folder).st_dev
    except OSError:
        return
    if there != src.stat.st_dev:
        raise ToolError(
            ErrorCode.IO_ERROR,
            f"{src.path} and {dst.path} are on different volumes, where a move would be a "
            "copy and a delete rather than one step, so nothing was moved. Write the file "
            "at the new place and delete the old one, or ask the user to move it.",
            path=src.path,
            reason="cross_volume",
        )


def files_of(ctx: ToolContext, folder: str) -> list[str]:
    """Every file and folder under a folder to move (relative paths), each to be checked
    at both ends; ``too_large`` over ``maxMoveFiles``."""
    most = ctx.settings.max_move_files
    found = ops.walk(folder, most)
    if found.more:
        raise ToolError(
            ErrorCode.TOO_LARGE,
            f"{folder} holds more than {most:,} files (the maxMoveFiles setting), each of "
            "which a move checks at both ends, so nothing was moved. Move its subfolders one "
            "by one, or ask the user to move it (or to raise maxMoveFiles).",
            path=folder,
            count=most + 1,
        )
    paths = [p for p, _ in found.files] + found.folders + [p for p, _ in found.others]
    return sorted(os.path.relpath(p, folder) for p in paths)


def _file_count(folder: str, entries: list[str]) -> int:
    """How many of ``entries`` (relative to ``folder``) are not folders."""
    count = 0
    for rel in entries:
        try:
            count += not stat.S_ISDIR(os.lstat(os.path.join(folder, rel)).st_mode)
        except OSError:
            continue  # gone meanwhile: the move checks it again
    return count


def _both_ends(source: str, destination: str, files: list[str]) -> list[str]:
    out: list[str] = []
    for rel in files:
        if rel:
            out += [os.path.join(source, rel), os.path.join(destination, rel)]
    return out


def _replaced(ctx: ToolContext, p: MoveParams, dst: ResolvedPath) -> Kept:
    """The file an ``overwrite`` replaces, once the session has read it and it is what
    was read (``not_read``, ``stale``: as for a write over it)."""
    ops.require_fresh(ctx, p.session, dst.path, "move with overwrite", dry_run=p.dry_run)
    assert dst.stat is not None
    return Kept(dst.path, mode=dst.stat.st_mode & 0o7777)


def _kept(ctx: ToolContext, path: str, st: os.stat_result) -> Kept:
    """A file to move as history records it: its bytes' hash and its text's, when it is
    not too large to read on the way."""
    if st.st_size > _HASH_MAX_BYTES:
        return Kept(path, size=st.st_size, mode=st.st_mode & 0o7777)
    try:
        data = ctx.read_raw(path).data
    except (ToolError, OSError):
        return Kept(path, size=st.st_size, mode=st.st_mode & 0o7777)
    try:
        text, _ = decode(data)
        view: str | None = text_hash(to_view(text))
    except BinaryContent:
        view = None
    return Kept(path, content_hash(data), len(data), st.st_mode & 0o7777, view)

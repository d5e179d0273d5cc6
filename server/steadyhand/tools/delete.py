"""``delete``: a file, an empty folder, or (``recursive``) a folder and everything in it.

The path is resolved, confined and deny-checked as every path is; it may not be a
symbolic link nor a workspace folder. A folder that holds anything needs ``recursive``,
and then holds at most ``maxDeleteFiles`` files, none denied, protected, a link or a
special file (one such refuses the whole deletion: nothing is deleted).

What "read" means: a file must have been read in the session and be unchanged since, as
for a write over it (``not_read``, ``stale``); for a folder, so must every file in it.
``force`` deletes regardless. Either way every file's bytes (and permission bits) are
kept in history first, so ``undo`` brings the whole of it back, byte for byte.

A document open in the editor is closed there through a ``DeleteFile`` edit, and only
when it has no unsaved typing (else ``unsaved_changes``, nothing deleted).
"""

from __future__ import annotations

import os
import stat

from steadyhand.context import ToolContext
from steadyhand.paths.resolve import ResolvedPath
from steadyhand.protocol.errors import ErrorCode, ToolError
from steadyhand.protocol.lists import list_fields, named
from steadyhand.protocol.params import DeleteParams
from steadyhand.protocol.results import Result, success
from steadyhand.tools import mutation
from steadyhand.tools import tree_ops as ops
from steadyhand.world import Kept, Removal, TreeApplied


async def delete(ctx: ToolContext, p: DeleteParams) -> Result:
    rp = ops.resolve_end(ctx, p.file_path, what="delete")
    if rp.stat is None:
        raise ops.missing(rp.path, "delete")
    path = rp.path
    folder = stat.S_ISDIR(rp.stat.st_mode)
    if folder:
        files, folders = _folder_contents(ctx, rp, recursive=p.recursive)
    else:
        files, folders = [(path, rp.stat)], []
    mutation.may_change_tree(ctx, [path, *folders, *(f for f, _ in files)], p.session, within=path)
    async with mutation.hold_tree(ctx, [path, *(f for f, _ in files)]):
        _refuse_unsaved(ctx, [f for f, _ in files])
        if not p.force:
            _require_read(ctx, p, path, [f for f, _ in files], folder=folder)
        _refuse_too_much(ctx, path, files)
        op = Removal(
            path,
            folder,
            tuple(Kept(f, size=st.st_size, mode=st.st_mode & 0o7777) for f, st in files),
            tuple([path, *folders] if folder else []),
            "delete",
            p.session,
        )
        if p.dry_run:
            return _answer(op, None)
        applied = await mutation.remove_tree(ctx, op)
    return _answer(op, applied)


def _answer(op: Removal, applied: TreeApplied | None) -> Result:
    rel = [os.path.relpath(f.path, op.path) if op.folder else f.path for f in op.files]
    folders = len(op.folders)
    if op.folder:
        what = f"the folder {op.path}"
        inside = [ops.plural(len(op.files), "file")]
        if folders > 1:
            inside.append(ops.plural(folders - 1, "folder"))
        what += f" ({', '.join(inside)})" if op.files or folders > 1 else " (empty)"
    else:
        what = op.path
    fields: dict[str, object] = {
        "path": op.path,
        "kind": "folder" if op.folder else "file",
        "files": len(op.files),
        "folders": folders,
        **list_fields("deleted", rel),
    }
    if applied is None:
        return success(
            f"Dry run: {what} would be deleted (its content kept in history). Nothing was deleted.",
            **fields,
            dry_run=True,
        )
    back = (
        f" Its content is kept in history: undo with id {applied.change_id} brings it back."
        if applied.change_id is not None
        else " History is off, so it cannot be brought back."
    )
    message = f"Deleted {what}.{back}"
    if applied.note:
        message += " " + applied.note
    return success(message, **fields, change_id=applied.change_id, via=applied.via, on_disk=True)


def _folder_contents(
    ctx: ToolContext, rp: ResolvedPath, *, recursive: bool
) -> tuple[list[tuple[str, os.stat_result]], list[str]]:
    """The files (with their status) and folders of a folder to delete: refused when it
    is not empty without ``recursive``, over ``maxDeleteFiles``, or holds what cannot
    be kept (a link, a special file, a file with a second name elsewhere)."""
    most = ctx.settings.max_delete_files
    found = ops.walk(rp.path, most)
    if found.entries and not recursive:
        raise ToolError(
            ErrorCode.NOT_EMPTY,
            f"{rp.path} is a folder holding {ops.plural(found.entries, 'entry')}"
            f"{' or more' if found.more else ''}, so nothing was deleted. To delete it with "
            "everything in it, call delete again with recursive: true.",
            path=rp.path,
            entries=found.entries,
        )
    if found.more:
        raise ToolError(
            ErrorCode.TOO_LARGE,
            f"{rp.path} holds more than {most:,} files (the maxDeleteFiles setting), so "
            "nothing was deleted. Delete its subfolders one by one, or ask the user to "
            "delete it (or to raise maxDeleteFiles).",
            path=rp.path,
            count=most + 1,
        )
    if found.others:
        other, kind = found.others[0]
        raise ToolError(
            ErrorCode.NOT_REGULAR_FILE,
            f"{other} in {rp.path} is {kind}, which Steadyhand does not delete (history "
            "keeps files only), so nothing was deleted. Ask the user to remove it first.",
            path=other,
        )
    if not ctx.roots.allow_hard_links:
        for f, st in found.files:
            if st.st_nlink > 1:
                raise ToolError(
                    ErrorCode.OUTSIDE_WORKSPACE,
                    f"{f} in {rp.path} has {st.st_nlink} names (hard links), and another "
                    "may lie outside the workspace, so nothing was deleted. Ask the user to "
                    "delete it, or to turn on allowHardLinks.",
                    path=f,
                )
    return found.files, found.folders


def _refuse_unsaved(ctx: ToolContext, files: list[str]) -> None:
    for f in files:
        buf = ctx.world.current(f)
        if buf is not None and buf.unsaved:
            raise ToolError(
                ErrorCode.UNSAVED_CHANGES,
                f"{f} is open in the editor with unsaved changes, and deleting it would throw "
                "them away; nothing was deleted. Ask the user to save (or discard) them, then "
                "retry.",
                path=f,
            )


def _require_read(
    ctx: ToolContext, p: DeleteParams, path: str, files: list[str], *, folder: bool
) -> None:
    """Refuse unless the session read every file and none changed since (one file: the
    refusal a write gives, with its diff)."""
    if not folder:
        ops.require_fresh(ctx, p.session, path, "delete", dry_run=p.dry_run)
        return
    unread: list[str] = []
    stale: list[str] = []
    for f in files:
        try:
            ops.require_fresh(ctx, p.session, f, "delete", dry_run=True)
        except ToolError as err:
            if err.code == ErrorCode.NOT_READ:
                unread.append(f)
            elif err.code == ErrorCode.STALE:
                stale.append(f)
            else:
                raise
    if not unread and not stale:
        return
    code = ErrorCode.NOT_READ if unread else ErrorCode.STALE
    rel = [os.path.relpath(f, path) for f in unread + stale]
    parts = []
    if unread:
        parts.append(f"{ops.plural(len(unread), 'file')} not read in this session")
    if stale:
        parts.append(f"{ops.plural(len(stale), 'file')} changed since you read them")
    raise ToolError(
        code,
        f"{path} holds {' and '.join(parts)} ({named(rel)}), so nothing was deleted. Read "
        "them first, or, to delete the folder anyway, call delete again with force: true "
        "(everything deleted is kept in history).",
        path=path,
        **list_fields("unread", rel),
    )


def _refuse_too_much(ctx: ToolContext, path: str, files: list[tuple[str, os.stat_result]]) -> None:
    """``too_large`` when history could not keep it all (its budget, a file over
    ``historyMaxFileBytes``): refused before anything is read or deleted."""
    history = ctx.history
    if history is None:
        return
    s = ctx.settings
    for f, st in files:
        if st.st_size > s.history_max_file_bytes:
            raise ToolError(
                ErrorCode.TOO_LARGE,
                f"{f} ({st.st_size:,} bytes) is over the historyMaxFileBytes setting "
                f"({s.history_max_file_bytes:,} bytes), so it cannot be kept in history and "
                f"deleting {path} would lose it; nothing was deleted. Ask the user to delete "
                "it, or to raise historyMaxFileBytes.",
                path=f,
            )
    total = sum(st.st_size for _, st in files)
    budget = s.history_max_bytes * 9 // 10
    if total > budget:
        raise ToolError(
            ErrorCode.TOO_LARGE,
            f"{path} holds {total:,} bytes, more than history keeps ({budget:,} bytes of the "
            "historyMaxBytes setting), so deleting it would lose some; nothing was deleted. "
            "Delete it in parts, or ask the user.",
            path=path,
        )

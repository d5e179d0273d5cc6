"""``history`` and ``undo``: the versions Steadyhand knows for a file, and taking one back.

An undo is a change like any other: it goes through ``ctx.world.apply`` (an editor edit
for an open document, an atomic disk write otherwise), so it is guarded and recorded, and
undoing it again brings the change back.
"""

from __future__ import annotations

from steadyhand.apply.guarded import findings_fields
from steadyhand.context import ToolContext
from steadyhand.documents.snapshot import Snapshot
from steadyhand.guards.protected import check_writable
from steadyhand.history.store import Version
from steadyhand.history.stores import History
from steadyhand.protocol.errors import ErrorCode, ToolError
from steadyhand.protocol.params import HistoryParams, UndoParams
from steadyhand.protocol.results import Result, success
from steadyhand.text.diff import stat, whole_diff
from steadyhand.tools.mutation import remove
from steadyhand.tools.records import diff_fields, omitted_note, total_lines
from steadyhand.tools.versions import (
    DIFF_MAX_CHARS,
    clock,
    current_content,
    holds,
    iso,
    not_text,
    other_server,
    owner,
    refresh,
    require_history,
    restorable,
    restore,
    untouched,
    whose,
)

DEFAULT_HISTORY_LIMIT = 20
#: The most versions one history listing shows, whatever ``limit`` asks for.
MAX_HISTORY_LIMIT = 100


def version_fields(
    ctx: ToolContext, store: History, v: Version, current: bool
) -> dict[str, object]:
    return {
        "id": v.id,
        "time": iso(v.time),
        "session": v.session,
        "other_server": other_server(ctx, v),
        "tool": v.tool,
        "existed_before": v.existed,
        "size_before": v.before_size if v.existed else None,
        "size_after": v.after_size if v.after_view is not None else None,
        "added": v.added,
        "removed": v.removed,
        "restorable": restorable(store, v),
        "current": current,
    }


def _describe(v: Version) -> str:
    if not v.existed:
        return f"created ({v.after_size:,} bytes)"
    if v.after_view is None:
        return f"deleted ({v.before_size:,} bytes)"
    return f"+{v.added} / -{v.removed} → {v.after_size:,} bytes"


def history(ctx: ToolContext, p: HistoryParams) -> Result:
    store = require_history(ctx)
    rp = ctx.resolve(p.file_path)
    versions = store.versions(rp.path, owner(ctx, p.session) if p.session else None)
    who = f" by session {p.session!r}" if p.session else ""
    if not versions:
        return success(
            f"Steadyhand has no recorded change to {rp.path}{who}, so there is nothing to "
            "undo there.",
            path=rp.path,
            versions=[],
        )
    odd = ""
    try:
        now = current_content(ctx, rp.path, left_by=versions[-1])
    except ToolError as err:  # the versions are listed all the same; none is current
        now, odd = None, not_text(err)
    limit = min(p.limit or DEFAULT_HISTORY_LIMIT, MAX_HISTORY_LIMIT)
    newest = list(reversed(versions))[:limit]
    lines: list[str] = []
    fields: list[dict[str, object]] = []
    for i, v in enumerate(newest):
        is_current = i == 0 and not odd and untouched(v, now)
        fields.append(version_fields(ctx, store, v, is_current))
        marks = []
        if is_current:
            marks.append("current")
        if not restorable(store, v):
            marks.append("earlier content no longer kept")
        mark = f"  ({'; '.join(marks)})" if marks else ""
        lines.append(f"  {v.id}  {clock(v.time)}  {_by(ctx, v)}  {v.tool}  {_describe(v)}{mark}")
    head = f"{len(versions)} change(s) Steadyhand made to {rp.path}{who}, newest first"
    if len(versions) > len(newest):
        most = " (the most one listing shows)" if limit < (p.limit or 0) else ""
        head += f" (showing the newest {len(newest)}{most})"
    tail = ""
    if odd:
        tail = (
            f"\nThe file is now {odd}, so no version is current, and undo would refuse to "
            "replace it (it cannot be kept in history). To bring a version back, ask the "
            "user to move it aside, then call undo with force: true."
        )
    elif now is not None and not untouched(versions[-1], now) and not p.session:
        tail = "\nThe file has changed since Steadyhand's last change (someone else edited it)."
    message = (
        f"{head}:\n" + "\n".join(lines) + tail + "\nTo take back the latest change, call undo "
        "with this file_path."
    )
    return success(message, path=rp.path, versions=fields)


async def undo(ctx: ToolContext, p: UndoParams) -> Result:
    store = require_history(ctx)
    assert p.file_path is not None  # UndoParams asks for it when there is no id
    rp = ctx.resolve(p.file_path)
    path = rp.path
    if p.session is not None:
        check_writable(ctx, path, p.session)
    async with ctx.locks.hold(path):
        refresh(store)
        v = store.last_change(path, owner(ctx, p.session) if p.session else None)
        if v is None:
            raise _nothing_to_undo(ctx, store, path, p.session)
        return await undo_version(
            ctx,
            store,
            path,
            v,
            p.session or v.session,
            force=p.force,
            include_diff=p.include_diff,
        )


async def undo_version(
    ctx: ToolContext,
    store: History,
    path: str,
    v: Version,
    acting: str,
    *,
    force: bool,
    include_diff: bool = False,
) -> Result:
    """Take back ``v``, the latest change to ``path``, as ``acting`` (the caller holds the
    path's lock): restore the text before it, or delete the file it created."""
    check_writable(ctx, path, acting)
    try:
        now = current_content(ctx, path, left_by=v)
    except ToolError as err:
        raise _not_text_now(path, err, v) from err
    if not untouched(v, now) and not force:
        gone = " was deleted" if now is None else " has changed"
        raise ToolError(
            ErrorCode.STALE,
            f"{path}{gone} since the {v.tool} by {whose(ctx, v)} at {clock(v.time)}, so "
            "undoing it would throw that newer work away; nothing was changed. Read the "
            "file to see what is there now. To restore the earlier version anyway, call "
            "undo again with force: true (what is there now will be kept in history).",
            path=path,
            version=v.id,
            can_force=True,
        )
    target: str | None = None
    if v.existed:
        target = store.get_text(v.before) if v.before is not None else None
        if target is None:
            raise ToolError(
                ErrorCode.NO_HISTORY,
                f"The version of {path} before the {v.tool} by {whose(ctx, v)} at "
                f"{clock(v.time)} is no longer kept (it was too large, or the history "
                "budget evicted it), so it cannot be restored. Nothing was changed.",
                path=path,
                version=v.id,
            )
    who = f"the {v.tool} by {whose(ctx, v)} at {clock(v.time)}"
    if target is None:
        return await _undo_creation(ctx, path, now, acting, who, v)
    return await _restore(ctx, path, now, target, v, acting, who, include_diff=include_diff)


def _by(ctx: ToolContext, v: Version) -> str:
    """``session NAME`` in a listing line, marked when another server's."""
    return f"session {v.session}" + (" (another server)" if other_server(ctx, v) else "")


def _nothing_to_undo(ctx: ToolContext, store: History, path: str, session: str | None) -> ToolError:
    who = f" by session {session!r}" if session else ""
    elsewhere = [v for v in store.versions(path) if v.session == session] if session else []
    if elsewhere:
        last = elsewhere[-1]
        return ToolError(
            ErrorCode.NO_HISTORY,
            f"This server's session {session!r} made no recorded change to {path}, so "
            f"nothing was undone; the last change there by a session of that name ("
            f"{last.id}, the {last.tool} at {clock(last.time)}) was made by another server "
            "(another editor window or MCP server on this folder, or this one before a "
            "restart). To take that one back, call undo with its id.",
            path=path,
            id=last.id,
        )
    return ToolError(
        ErrorCode.NO_HISTORY,
        f"Steadyhand has no recorded change to {path}{who}, so there is nothing to "
        "undo. Call history to see the versions it knows.",
        path=path,
    )


def _not_text_now(path: str, err: ToolError, v: Version) -> ToolError:
    if v.existed:
        step = (
            "Ask the user to move it aside (keeping it), then call undo again with force: "
            "true to bring the earlier version back."
        )
    else:
        step = (
            f"The {v.tool} being undone created the file: if it should not be there, ask "
            "the user to remove it."
        )
    return ToolError(
        err.code,
        f"{path} is now {not_text(err)}, which cannot be kept in history, so undoing would "
        f"lose it; nothing was changed. {step}",
        path=path,
        version=v.id,
    )


async def _undo_creation(
    ctx: ToolContext, path: str, now: Snapshot | None, acting: str, who: str, v: Version
) -> Result:
    if now is None:
        raise ToolError(
            ErrorCode.NO_CHANGE,
            f"{who[0].upper()}{who[1:]} created {path}, and it no longer exists: there is "
            "nothing to undo.",
            path=path,
        )
    await remove(ctx, path, now, tool="undo", session=acting)
    message = (
        f"Undid {who}, which created {path}: the file was deleted. Call undo again to bring "
        "it back."
    )
    return success(message, path=path, type="delete", undone=v.id, session=acting)


async def _restore(
    ctx: ToolContext,
    path: str,
    now: Snapshot | None,
    target: str,
    v: Version,
    acting: str,
    who: str,
    *,
    include_diff: bool,
) -> Result:
    if holds(now, target, v.encoding):
        raise ToolError(
            ErrorCode.NO_CHANGE,
            f"{path} already holds the version from before {who}; nothing was changed.",
            path=path,
        )
    applied = await restore(ctx, path, now, target, v.encoding, tool="undo", session=acting)
    fields: dict[str, object] = {"path": path, "type": "restore", "undone": v.id}
    diff = ""
    if now is not None and len(now.view) + len(applied.snapshot.view) <= DIFF_MAX_CHARS:
        diff = whole_diff(now.view, applied.snapshot.view, name=path)
        ds = stat(diff)
        after = applied.snapshot
        new_total = total_lines(after)
        fields.update(diff_fields(ctx, diff, new_total, include_diff=include_diff))
        fields.update(added=ds.added, removed=ds.removed)
        change = f" (+{ds.added} / -{ds.removed})"
    else:
        change = " (recreated)" if now is None else ""
    message = f"Restored {path} to the version before {who}{change}. Call undo again to redo it."
    if applied.note:
        message += " " + applied.note
    if omitted_note(fields):
        message += " " + omitted_note(fields)
    return success(
        message,
        **fields,
        session=acting,
        via=applied.via,
        on_disk=applied.on_disk,
        **findings_fields(applied),
    )

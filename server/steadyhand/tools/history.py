"""``history``: the versions Steadyhand knows of one file, newest first, and which of them
the file holds now."""

from __future__ import annotations

from steadyhand.context import ToolContext
from steadyhand.history.store import Moved, Removed, TreeEntry, Version
from steadyhand.history.stores import History
from steadyhand.protocol.errors import ToolError
from steadyhand.protocol.params import HistoryParams
from steadyhand.protocol.results import Result, success
from steadyhand.tools import tree_history as trees
from steadyhand.tools.versions import (
    clock,
    current_content,
    describe,
    entry_fields,
    not_text,
    other_server,
    owner,
    require_history,
    restorable,
    untouched,
)

DEFAULT_HISTORY_LIMIT = 20

#: The most versions one history listing shows, whatever ``limit`` asks for.
MAX_HISTORY_LIMIT = 100


def version_fields(
    ctx: ToolContext, store: History, v: Version, current: bool
) -> dict[str, object]:
    return {
        **entry_fields(ctx, v),
        "existed_before": v.existed,
        "size_before": v.before_size if v.existed else None,
        "size_after": v.after_size if v.after_view is not None else None,
        "added": v.added,
        "removed": v.removed,
        "restorable": restorable(store, v),
        "current": current,
    }


def history(ctx: ToolContext, p: HistoryParams) -> Result:
    store = require_history(ctx)
    rp = ctx.resolve(p.file_path)
    who_owns = owner(ctx, p.session) if p.session else None
    versions = store.versions(rp.path, who_owns)
    moves = store.tree_entries(rp.path, who_owns)
    who = f" by session {p.session!r}" if p.session else ""
    if moves:
        return _with_moves(ctx, store, rp.path, versions, moves, p, who)
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
        lines.append(f"  {v.id}  {clock(v.time)}  {_by(ctx, v)}  {v.tool}  {describe(v)}{mark}")
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


def _by(ctx: ToolContext, v: Version | TreeEntry) -> str:
    """``session NAME`` in a listing line, marked when another server's."""
    return f"session {v.session}" + (" (another server)" if other_server(ctx, v) else "")


def _with_moves(
    ctx: ToolContext,
    store: History,
    path: str,
    versions: list[Version],
    moves: list[TreeEntry],
    p: HistoryParams,
    who: str,
) -> Result:
    """The history of a file that was moved or deleted (or lies in a folder that was):
    its changes and those moves and deletions, newest first."""
    merged: list[Version | TreeEntry] = sorted([*versions, *moves], key=lambda e: e.time)
    limit = min(p.limit or DEFAULT_HISTORY_LIMIT, MAX_HISTORY_LIMIT)
    newest = list(reversed(merged))[:limit]
    lines: list[str] = []
    fields: list[dict[str, object]] = []
    for i, e in enumerate(newest):
        if isinstance(e, Moved | Removed):
            is_current = i == 0 and trees.current(e)
            ok = trees.restorable(store, e)
            fields.append(
                {
                    **entry_fields(ctx, e),
                    "kind": trees.kind(e),
                    "path": trees.path_of(e),
                    **({"destination": e.destination} if isinstance(e, Moved) else {}),
                    "restorable": ok,
                    "current": is_current,
                }
            )
            what = trees.describe(e)
            if isinstance(e, Moved) and trees.path_of(e) != path and e.destination != path:
                what = f"{e.source} {what}"
        else:
            try:
                now = current_content(ctx, path, left_by=e)
            except ToolError:
                now = None
            is_current = i == 0 and untouched(e, now)
            ok = restorable(store, e)
            fields.append(version_fields(ctx, store, e, is_current))
            what = describe(e)
        marks = [m for m, on in (("current", is_current), ("not restorable", not ok)) if on]
        mark = f"  ({'; '.join(marks)})" if marks else ""
        lines.append(f"  {e.id}  {clock(e.time)}  {_by(ctx, e)}  {e.tool}  {what}{mark}")
    head = (
        f"{len(merged)} change(s) Steadyhand made to {path} (moves and deletions included)"
        f"{who}, newest first"
    )
    if len(merged) > len(newest):
        head += f" (showing the newest {len(newest)})"
    message = (
        f"{head}:\n" + "\n".join(lines) + "\nTo take back the latest change, call undo with "
        "this file_path; to take back one of them, call undo with its id."
    )
    return success(message, path=path, versions=fields)

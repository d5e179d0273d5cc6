"""``history``: the versions Steadyhand knows of one file, newest first, and which of them
the file holds now."""

from __future__ import annotations

from steadyhand.context import ToolContext
from steadyhand.history.store import Version
from steadyhand.history.stores import History
from steadyhand.protocol.errors import ToolError
from steadyhand.protocol.params import HistoryParams
from steadyhand.protocol.results import Result, success
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


def _by(ctx: ToolContext, v: Version) -> str:
    """``session NAME`` in a listing line, marked when another server's."""
    return f"session {v.session}" + (" (another server)" if other_server(ctx, v) else "")

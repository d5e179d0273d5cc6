"""Checks that behave the same in a dry run, minus every side effect.

A dry run (``dry_run: true`` on edit, multiEdit and write) runs every check a real call
runs and answers with the diff, but changes nothing: not the file, and not the session's
view of it. That is why a stale file is refused here without moving the session's record
to the current content (which a real call's ``stale`` refusal does).
"""

from __future__ import annotations

from steadyhand.context import ToolContext
from steadyhand.documents.snapshot import Snapshot
from steadyhand.protocol.errors import ErrorCode, ToolError
from steadyhand.state.file_state import FileRecord, Session, merge_ranges
from steadyhand.state.staleness import is_stale
from steadyhand.text.diff import whole_diff
from steadyhand.tools.records import refuse_if_stale, short_diff


def check_fresh(
    ctx: ToolContext,
    session: Session,
    rec: FileRecord,
    snap: Snapshot,
    tool: str,
    *,
    dry_run: bool,
) -> None:
    """Raise ``stale`` if the content changed since the agent saw it."""
    if not dry_run:
        refuse_if_stale(ctx, session, rec, snap, tool)
        return
    if not is_stale(rec, snap):
        return
    seen = ctx.store.get(rec.view_hash, rec.stored)
    diff = whole_diff(seen, snap.view, name=snap.path) if seen is not None else ""
    if short_diff(ctx, diff):
        raise ToolError(
            ErrorCode.STALE,
            f"{snap.path} was changed by someone else since you read it, so the dry run "
            f"stopped. This is what changed:\n{diff}\nA dry run leaves your view as it was: "
            f"read the file again, then retry the {tool}.",
            path=snap.path,
            diff=diff,
            refreshed=False,
            dry_run=True,
        )
    raise ToolError(
        ErrorCode.STALE,
        f"{snap.path} was changed by someone else since you read it, so the dry run stopped. "
        f"Read the file again, then retry the {tool}.",
        path=snap.path,
        refreshed=False,
        dry_run=True,
    )


def note_shown(session: Session, rec: FileRecord, err: ToolError) -> None:
    """A ``no_match`` refusal showed the closest lines: count them as shown, so an edit
    built on them needs no extra read."""
    lines = err.fields.get("closest_lines")
    if err.code != ErrorCode.NO_MATCH or not isinstance(lines, list) or len(lines) != 2:
        return
    lo, hi = int(lines[0]), int(lines[1])
    if 1 <= lo <= hi:
        session.put(rec.replace(shown=merge_ranges(rec.shown, (lo, hi))))

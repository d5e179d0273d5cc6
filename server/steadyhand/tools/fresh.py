"""Is the content the agent saw still there? The ``stale`` refusal every change gives.

Every change (edit, multiEdit, write, notebookEdit) plans on content only once the
session's record of it says it is unchanged since the agent saw it
(:meth:`~steadyhand.tools.mutation.Target.fresh`). A real call's refusal moves the
record to the current content when it can show the difference, so a retry that takes it
into account needs no read. A dry run (``dry_run: true``) runs the same check minus every
side effect: its refusal leaves the session's view as it was.
"""

from __future__ import annotations

from steadyhand.context import ToolContext
from steadyhand.documents.snapshot import Snapshot
from steadyhand.protocol.errors import ErrorCode, ToolError
from steadyhand.state.file_state import FileRecord, Session, ranges_through
from steadyhand.state.staleness import is_stale
from steadyhand.text.diff import changed_runs, whole_diff
from steadyhand.tools.records import full_range, record_for, remember, short_diff

#: The tool name under which notebook edits check staleness: their records count cells.
NOTEBOOK_TOOL = "notebook edit"


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


def refuse_if_stale(
    ctx: ToolContext, session: Session, rec: FileRecord, snap: Snapshot, tool: str
) -> None:
    """Raise ``stale`` if the content changed since the agent saw it.

    When the text the agent saw is still in the store and the difference is short, the
    refusal carries the diff and the record moves to the current content, so a retry
    that takes the diff into account succeeds without another read.
    """
    if not is_stale(rec, snap):
        return
    seen = ctx.store.get(rec.view_hash, rec.stored)
    diff = ""
    if seen is not None:
        diff = whole_diff(seen, snap.view, name=snap.path)
    if short_diff(ctx, diff):
        shown = rec.shown
        if rec.full_view:
            shown = full_range(snap)
        elif tool != NOTEBOOK_TOOL:  # (a notebook's record counts cells, not lines)
            # what the agent saw moves with the text; what the diff showed it is seen too
            shown = ranges_through(rec.shown, changed_runs(diff))
        session.put(record_for(snap, shown, None, remember(ctx, snap)))
        raise ToolError(
            ErrorCode.STALE,
            f"{snap.path} was changed by someone else since you read it, so the {tool} was "
            "not applied. This is what changed (your view is now updated to it):\n"
            f"{diff}\nRebuild your {tool} on the current text and retry; there is no need "
            "to read the file again.",
            path=snap.path,
            diff=diff,
            refreshed=True,
        )
    raise ToolError(
        ErrorCode.STALE,
        f"{snap.path} was changed by someone else since you read it, so the {tool} was not "
        f"applied. Read the file again, then redo the {tool} on its current content.",
        path=snap.path,
        refreshed=False,
    )

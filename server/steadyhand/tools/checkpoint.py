"""``checkpoint`` and ``rewind``: mark a point in a session, and go back to it.

A rewind restores every file the session changed since the checkpoint, as one operation:
files that someone else changed since (another session, the user) are skipped and
reported, and the rest are restored all together or, if one of them fails, not at all.
A session is its name and this server's instance (:class:`~steadyhand.history.store.Owner`):
another server's session of the same name (every server has a ``default``) is someone
else, its checkpoints are not this session's, and the files it changed are skipped.
A cancelled rewind still finishes (or rolls back) before the cancellation is answered.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

from steadyhand.context import ToolContext
from steadyhand.documents.snapshot import Snapshot
from steadyhand.guards.protected import is_read_only
from steadyhand.guards.syntax import syntax_clause, syntax_fields, syntax_summary
from steadyhand.history.store import Checkpoint, Owner, Version, owner_of
from steadyhand.history.stores import History
from steadyhand.protocol.errors import ErrorCode, ToolError
from steadyhand.protocol.lists import MAX_LISTED, MAX_NAMED, list_fields, listed, named
from steadyhand.protocol.params import CheckpointParams, RewindParams
from steadyhand.protocol.results import Result, success
from steadyhand.runtime.tasks import run_to_end
from steadyhand.text.diff import changed_ranges, whole_diff
from steadyhand.text.lines import count_lines, to_view
from steadyhand.tools.mutation import Target, open_each, remove
from steadyhand.tools.records import CHANGED_RANGES_MAX, diff_fields, omitted_note, short_diff
from steadyhand.tools.versions import (
    DIFF_MAX_CHARS,
    clock,
    content_of,
    current_content,
    holds,
    iso,
    not_text,
    other_server,
    owner,
    refresh,
    require_history,
    restore,
    store_failed,
    untouched,
)


def checkpoint(ctx: ToolContext, p: CheckpointParams) -> Result:
    store = require_history(ctx)
    try:
        cp = store.add_checkpoint(owner(ctx, p.session), p.label or "")
    except OSError as exc:
        raise store_failed(store, exc) from exc
    named = f" ({cp.label!r})" if cp.label else ""
    return success(
        f"Checkpoint {cp.id}{named} set for session {p.session!r}. To undo every change "
        f"this session makes from now on, call rewind with checkpoint {cp.id!r}.",
        checkpoint=cp.id,
        label=cp.label,
        session=p.session,
        time=iso(cp.time),
    )


@dataclass
class _Plan:
    path: str
    now: Snapshot | None
    #: Text to restore; None means delete (the session created the file).
    text: str | None
    encoding: str


def _find(ctx: ToolContext, store: History, p: RewindParams) -> Checkpoint:
    who = owner(ctx, p.session)
    found = store.find_checkpoint(who, p.checkpoint)
    if len(found) > 1:
        raise ToolError(
            ErrorCode.AMBIGUOUS,
            f"Session {p.session!r} has {len(found)} checkpoints with the id "
            f"{p.checkpoint!r} (recorded by an earlier version, whose ids could repeat), "
            "so nothing was rewound. Pass the label of the one you mean, or undo its "
            "changes one by one (changes with since lists them).",
            checkpoint=p.checkpoint,
        )
    if not found:
        elsewhere = [
            e
            for e in store.entries
            if isinstance(e, Checkpoint)
            and e.session == p.session
            and (e.id == p.checkpoint or (e.label != "" and e.label == p.checkpoint))
            and other_server(ctx, e)
        ]
        if elsewhere:
            cp = elsewhere[-1]
            raise ToolError(
                ErrorCode.NO_HISTORY,
                f"Checkpoint {cp.id} was set by session {p.session!r} of another server "
                "(another editor window or MCP server on this folder, or this one before a "
                "restart); a rewind takes back only its own session's changes, so nothing "
                f"was rewound. Call changes with since {cp.id!r} to list the changes made "
                "since, and undo with an id takes back one of them.",
                checkpoint=p.checkpoint,
            )
        known = [c.id + (f" ({c.label!r})" if c.label else "") for c in store.checkpoints(who)]
        listing = ", ".join(known[-5:]) if known else "none"
        raise ToolError(
            ErrorCode.NO_HISTORY,
            f"Session {p.session!r} has no checkpoint {p.checkpoint!r} (its checkpoints: "
            f"{listing}). Pass a checkpoint id or label that checkpoint returned.",
            checkpoint=p.checkpoint,
        )
    return found[0]


#: Why a file that history recorded may not be changed now (``agents may not change it now``).
_NOT_NOW = (ErrorCode.DENIED, ErrorCode.OUTSIDE_WORKSPACE, ErrorCode.INVALID_PATH)


def _mine(changes: list[Version], who: Owner) -> set[str]:
    return {v.path for v in changes if who.made(v)}


def _changes(store: History, cp: Checkpoint, session: str) -> list[Version]:
    """Every change recorded since ``cp`` (in every folder's store)."""
    changes = store.changes_since(cp)
    if changes is None:
        raise ToolError(
            ErrorCode.NO_HISTORY,
            f"Checkpoint {cp.id} of session {session!r} is no longer in the history (it "
            "keeps its newest entries only), so nothing was rewound. Call history on each "
            "file to see the versions still kept, and undo them one by one.",
            checkpoint=cp.id,
        )
    return changes


def _plan_file(store: History, who: Owner, target: Target, changes: list[Version]) -> _Plan | str:
    """What to do for one file, or why it is skipped."""
    path = target.path
    refused = target.refused  # the rules of today: confinement, deny globs, links since
    if target.moved:
        return "its path now leads elsewhere (through a symbolic link)"
    if refused is not None and refused.code in _NOT_NOW:
        return f"agents may not change it now ({refused.code})"
    others = list(dict.fromkeys(owner_of(v) for v in changes if not who.made(v)))
    if others:
        names = ", ".join(
            repr(o.session)
            + (" of another server" if o.instance not in (None, who.instance) else "")
            for o in others
        )
        return f"session {names} also changed it since the checkpoint"
    for prev, nxt in itertools.pairwise(changes):
        if nxt.before_view != prev.after_view:
            return "it was changed outside Steadyhand between this session's changes"
    last = changes[-1]
    try:
        now = content_of(target, left_by=last)
    except ToolError as err:
        return f"it is now {not_text(err)}, which cannot be kept in history"
    if not untouched(last, now):
        return f"it changed since this session's last change ({last.tool} at {clock(last.time)})"
    first = changes[0]
    if not first.existed:
        return _Plan(path, now, None, first.encoding)
    text = store.get_text(first.before) if first.before is not None else None
    if text is None:
        return "its version at the checkpoint is no longer kept (too large or evicted)"
    return _Plan(path, now, text, first.encoding)


async def rewind(ctx: ToolContext, p: RewindParams) -> Result:
    store = require_history(ctx)
    cp = _find(ctx, store, p)
    who = owner(ctx, p.session)
    if is_read_only(ctx, p.session):
        raise ToolError(
            ErrorCode.READ_ONLY,
            f"Session {p.session!r} is read-only: it may read files but not change them, so "
            "nothing was rewound. Report what you would restore instead.",
            session=p.session,
        )
    locked = _mine(_changes(store, cp, p.session), who)
    named = f" ({cp.label!r})" if cp.label else ""
    if not locked:
        return success(
            f"Session {p.session!r} changed no file since checkpoint {cp.id}{named}; nothing "
            "to rewind.",
            checkpoint=cp.id,
            restored=[],
            deleted=[],
            skipped=[],
            unchanged=[],
            not_on_disk=[],
        )
    async with open_each(ctx, locked, p.session, "rewind") as targets:
        refresh(store)
        # While the locks were awaited, another server sharing the store may have
        # compacted the index, which moves every entry: find the checkpoint again.
        changes = _changes(store, cp, p.session)
        plans: list[_Plan] = []
        skipped: list[dict[str, str]] = []
        unchanged: list[str] = []
        for path in sorted(_mine(changes, who)):
            if path not in locked:
                reason = "the session changed it while the rewind began; call rewind again"
                skipped.append({"path": path, "reason": reason})
                continue
            target = targets[path]
            outcome = _plan_file(store, who, target, [v for v in changes if v.path == path])
            if isinstance(outcome, str):
                skipped.append({"path": path, "reason": outcome})
                continue
            if (outcome.text is None and outcome.now is None) or (
                outcome.text is not None and holds(outcome.now, outcome.text, outcome.encoding)
            ):
                unchanged.append(path)
                continue
            refused = target.refused
            if refused is not None and refused.code == ErrorCode.PROTECTED:
                pattern = refused.fields.get("pattern")
                skipped.append({"path": path, "reason": f"it is protected ({pattern!r})"})
                continue
            plans.append(outcome)
        # All or nothing, even if the request is cancelled halfway.
        restored, deleted, buffer_only, syntax = await run_to_end(_apply_all(ctx, plans, p.session))
    lines = [
        (
            f"- restored {x} in the editor's buffer only: {buffer_only[x]}"
            if x in buffer_only
            else f"- restored {x}"
        )
        + syntax_clause(syntax.get(x))
        for x in restored
    ]
    lines += [f"- deleted {x} (this session created it)" for x in deleted]
    lines += [f"- unchanged {x} (already as at the checkpoint)" for x in unchanged]
    lines += [f"- skipped {s['path']}: {s['reason']}" for s in skipped]
    lines, more = listed(lines, MAX_NAMED)
    if more:
        lines.append(
            f"- and {more:,} more (the result's fields list them, up to {MAX_LISTED} each)"
        )
    head = (
        f"Rewound session {p.session!r} to checkpoint {cp.id}{named}: {len(restored)} "
        f"restored, {len(deleted)} deleted, {len(skipped)} skipped."
    )
    if skipped:
        head += (
            " Skipped files keep their current content: read them and decide with the user "
            "what to do."
        )
    head += syntax_summary(syntax)
    done = set(restored) | set(deleted)
    diff = _rewind_diff(ctx, [x for x in plans if x.path in done], include_diff=p.include_diff)
    if diff.get("diff_omitted"):
        head += " " + omitted_note(diff)
    return success(
        head + "\n" + "\n".join(lines),
        checkpoint=cp.id,
        **list_fields("restored", restored),
        **list_fields("deleted", deleted),
        **list_fields("skipped", skipped),
        **list_fields("unchanged", unchanged),
        **list_fields("not_on_disk", sorted(buffer_only)),
        **diff,
        **syntax_fields(syntax),
    )


def _rewind_diff(ctx: ToolContext, done: list[_Plan], *, include_diff: bool) -> dict[str, object]:
    """What a rewind changed, as one diff of every file it restored or deleted, under
    the rule of every change's result: whole when short (or asked for), else left out,
    with each file's changed line ranges (``changed``: path -> ranges)."""
    diffs: dict[str, tuple[str, int]] = {}
    for plan in done:
        old = plan.now.view if plan.now is not None else ""
        new = to_view(plan.text) if plan.text is not None else ""
        if len(old) + len(new) <= DIFF_MAX_CHARS:  # larger: only named in the listing
            diffs[plan.path] = (whole_diff(old, new, name=plan.path), count_lines(new))
    whole = "".join(d if d.endswith("\n") else d + "\n" for d, _ in diffs.values())
    if include_diff or short_diff(ctx, whole):
        return {"diff": whole}
    changed = {path: diff_fields(ctx, d, n).get("changed", []) for path, (d, n) in diffs.items()}
    for path, (d, n) in diffs.items():
        if not changed[path]:  # short alone, too long together
            changed[path] = [[a, b] for a, b in changed_ranges(d, n)][:CHANGED_RANGES_MAX]
    return {"diff_omitted": True, "changed": changed}


async def _apply_all(
    ctx: ToolContext, plans: list[_Plan], session: str
) -> tuple[list[str], list[str], dict[str, str], dict[str, dict[str, object]]]:
    """Apply every plan, or none: on a failure the ones already applied are put back.
    Returns what was restored, what was deleted, for restores that reached only an
    editor buffer (not the disk) why, and the syntax check's fields of each restore."""
    done: list[_Plan] = []
    buffer_only: dict[str, str] = {}
    syntax: dict[str, dict[str, object]] = {}
    try:
        for plan in plans:
            if plan.text is None:
                assert plan.now is not None
                await remove(ctx, plan.path, plan.now, tool="rewind", session=session)
            else:
                applied = await restore(
                    ctx,
                    plan.path,
                    plan.now,
                    plan.text,
                    plan.encoding,
                    tool="rewind",
                    session=session,
                )
                if not applied.on_disk:
                    buffer_only[plan.path] = applied.note or "the file on disk was not changed"
                if applied.syntax is not None:
                    syntax[plan.path] = applied.syntax
            done.append(plan)
    except Exception as err:
        failed = plan.path
        stuck = await _roll_back(ctx, done, session)
        if not isinstance(err, ToolError):
            raise
        outcome = (
            "Every file it had already restored was put back, so nothing was changed."
            if not stuck
            else f"These files could not be put back and hold their checkpoint version: "
            f"{named(stuck)} (their newer content is in history: undo brings it back)."
        )
        raise ToolError(
            err.code,
            f"Rewind stopped at {failed}: {err.message} {outcome}",
            path=failed,
            **list_fields("not_rolled_back", stuck),
        ) from err
    restored = [x.path for x in done if x.text is not None]
    deleted = [x.path for x in done if x.text is None]
    return restored, deleted, buffer_only, syntax


async def _roll_back(ctx: ToolContext, done: list[_Plan], session: str) -> list[str]:
    stuck: list[str] = []
    for plan in reversed(done):
        try:
            now = current_content(ctx, plan.path)
            if plan.now is None:
                if now is not None:
                    await remove(ctx, plan.path, now, tool="rewind", session=session)
            else:
                await restore(
                    ctx,
                    plan.path,
                    now,
                    plan.now.raw,
                    plan.now.encoding.label,
                    tool="rewind",
                    session=session,
                )
        except ToolError:
            stuck.append(plan.path)
    return stuck

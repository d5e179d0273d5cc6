"""Rewinding a session whose changes since the checkpoint moved or deleted files.

Changes of text can be undone file by file in any order; a move or a deletion cannot: a
file moved after its edits must be moved back before those edits are undone, and a file
deleted must be made again first. So the session's changes since the checkpoint are
taken back newest first, in stretches: each move or deletion on its own (moved back,
made again, deleted again), and between them each run of text changes file by file, as
the plain rewind does (each file straight back to what it held before the run).

What is skipped is skipped for the reasons the plain rewind gives (another session
changed it since, it changed since this session's last change, it is no longer text, it
is protected or denied now...), and a move or deletion another session built on since,
or whose result is no longer there, is skipped too; what comes before it is then judged
on the tree as it is. All or nothing: if a step fails, the steps already taken are
taken back again (best effort; what could not be is named) and the rewind fails.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field

from steadyhand.context import ToolContext
from steadyhand.documents.snapshot import Snapshot
from steadyhand.guards.syntax import syntax_clause, syntax_fields, syntax_summary
from steadyhand.history.lookup import find_entries, overlaps, paths_of
from steadyhand.history.store import Checkpoint, Moved, Owner, Removed, TreeEntry, Version, owner_of
from steadyhand.history.stores import History
from steadyhand.protocol.errors import ErrorCode, ToolError
from steadyhand.protocol.lists import MAX_LISTED, MAX_NAMED, list_fields, listed, named
from steadyhand.protocol.params import RewindParams
from steadyhand.protocol.results import Result, success
from steadyhand.runtime.tasks import run_to_end
from steadyhand.tools import mutation
from steadyhand.tools import tree_history as trees
from steadyhand.tools.versions import (
    clock,
    current_content,
    holds,
    not_text,
    refresh,
    restore,
    untouched,
)

#: Why a path may not be changed now (the rules of today).
_NOT_NOW = (
    ErrorCode.DENIED,
    ErrorCode.OUTSIDE_WORKSPACE,
    ErrorCode.INVALID_PATH,
    ErrorCode.PROTECTED,
)


def has_tree(entries: list[Version | TreeEntry], who: Owner) -> bool:
    """Whether ``who`` moved or deleted anything among ``entries``."""
    return any(isinstance(e, Moved | Removed) and who.made(e) for e in entries)


@dataclass
class _Done:
    """A step taken, to be taken back if a later one fails."""

    #: A text change: the file and what it held before (None: it did not exist).
    path: str = ""
    before: Snapshot | None = None
    #: A move or deletion taken back: the ids its steps were recorded under.
    ids: list[str] = field(default_factory=list)


@dataclass
class _Outcome:
    restored: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)
    moved_back: list[dict[str, str]] = field(default_factory=list)
    made_again: list[str] = field(default_factory=list)
    skipped: list[dict[str, str]] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    buffer_only: dict[str, str] = field(default_factory=dict)
    syntax: dict[str, dict[str, object]] = field(default_factory=dict)
    done: list[_Done] = field(default_factory=list)


def _segments(mine: list[Version | TreeEntry]) -> list[list[Version] | TreeEntry]:
    """The session's changes, oldest first, as runs of text changes and single moves or
    deletions."""
    out: list[list[Version] | TreeEntry] = []
    run: list[Version] = []
    for e in mine:
        if isinstance(e, Version):
            run.append(e)
            continue
        if run:
            out.append(run)
            run = []
        out.append(e)
    if run:
        out.append(run)
    return out


def _locked_paths(mine: list[Version | TreeEntry]) -> set[str]:
    out: set[str] = set()
    for e in mine:
        out.update(paths_of(e))
        if isinstance(e, Removed):
            out.update(e.under(f.path) for f in e.files)
    return out


def _others_since(
    entries: list[Version | TreeEntry], who: Owner, since: float, touching: Version | TreeEntry
) -> list[Owner]:
    return list(
        dict.fromkeys(
            owner_of(x)
            for x in entries
            if not who.made(x) and x.time >= since and overlaps(touching, x)
        )
    )


def _who_else(owners: list[Owner], who: Owner) -> str:
    return ", ".join(
        repr(o.session) + (" of another server" if o.instance not in (None, who.instance) else "")
        for o in owners
    )


async def rewind_with_tree(
    ctx: ToolContext,
    store: History,
    cp: Checkpoint,
    p: RewindParams,
    who: Owner,
    entries: list[Version | TreeEntry],
) -> Result:
    mine = [e for e in entries if who.made(e)]
    async with mutation.hold_tree(ctx, _locked_paths(mine)):
        refresh(store)
        again = store.entries_since(cp)
        if again is None:
            raise ToolError(
                ErrorCode.NO_HISTORY,
                f"Checkpoint {cp.id} of session {p.session!r} is no longer in the history, "
                "so nothing was rewound.",
                checkpoint=cp.id,
            )
        # a change the session made while the locks were awaited is not rewound
        locked = set(mine)
        entries = [e for e in again if not who.made(e) or e in locked]
        mine = [e for e in entries if who.made(e)]
        out = _Outcome()
        await run_to_end(_run_all(ctx, store, p.session, who, entries, mine, out))
    return _answer(ctx, cp, p, out)


async def _run_all(
    ctx: ToolContext,
    store: History,
    session: str,
    who: Owner,
    entries: list[Version | TreeEntry],
    mine: list[Version | TreeEntry],
    out: _Outcome,
) -> None:
    try:
        for seg in reversed(_segments(mine)):
            if isinstance(seg, list):
                await _run_texts(ctx, store, session, who, entries, seg, out)
            else:
                await _run_tree(ctx, store, session, who, entries, seg, out)
    except Exception as err:
        stuck = await _roll_back(ctx, store, session, out.done)
        if not isinstance(err, ToolError):
            raise
        outcome = (
            "Every step it had taken was taken back, so nothing was changed."
            if not stuck
            else f"These could not be put back: {named(stuck)} (their newer content is in "
            "history: undo brings it back)."
        )
        raise ToolError(
            err.code,
            f"Rewind stopped: {err.message} {outcome}",
            **{k: v for k, v in err.fields.items() if k == "path"},
            **list_fields("not_rolled_back", stuck),
        ) from err


async def _run_tree(
    ctx: ToolContext,
    store: History,
    session: str,
    who: Owner,
    entries: list[Version | TreeEntry],
    e: TreeEntry,
    out: _Outcome,
) -> None:
    path = trees.path_of(e)
    others = _others_since(entries, who, e.time, e)
    if others:
        why = f"session {_who_else(others, who)} also changed it since the checkpoint"
        out.skipped.append({"path": path, "reason": f"its {trees.kind(e)} was kept: {why}"})
        return
    try:
        back = trees.plan_back(ctx, store, e, acting=session, tool="rewind", force=False)
    except ToolError as err:
        if err.code == ErrorCode.NO_CHANGE:
            out.unchanged.append(path)
            return
        reason = err.message.split("; nothing was changed")[0]
        out.skipped.append({"path": path, "reason": f"its {trees.kind(e)} was kept: {reason}"})
        return
    applied = await trees.apply_back(ctx, back, locked=True)
    out.done.append(_Done(ids=[a.change_id for a in applied if a.change_id is not None]))
    if isinstance(e, Moved):
        out.moved_back.append({"from": e.destination, "to": e.source})
        if len(back.ops) > 1:
            out.made_again.append(e.destination)
    elif e.back:
        out.deleted.append(e.path)
    else:
        out.made_again.append(e.path)


async def _run_texts(
    ctx: ToolContext,
    store: History,
    session: str,
    who: Owner,
    entries: list[Version | TreeEntry],
    run: list[Version],
    out: _Outcome,
) -> None:
    for path in sorted({v.path for v in run}):
        changes = [v for v in run if v.path == path]
        reason = _skip(ctx, who, entries, path, changes, session)
        if reason is not None:
            out.skipped.append({"path": path, "reason": reason})
            continue
        last, first = changes[-1], changes[0]
        try:
            now = current_content(ctx, path, left_by=last)
        except ToolError as err:
            out.skipped.append(
                {
                    "path": path,
                    "reason": f"it is now {not_text(err)}, which cannot be kept in history",
                }
            )
            continue
        if not untouched(last, now):
            out.skipped.append(
                {
                    "path": path,
                    "reason": f"it changed since this session's last change ({last.tool} at "
                    f"{clock(last.time)})",
                }
            )
            continue
        if not first.existed:
            if now is None:
                out.unchanged.append(path)
                continue
            await mutation.remove(ctx, path, now, tool="rewind", session=session)
            out.done.append(_Done(path=path, before=now))
            out.deleted.append(path)
            continue
        text = store.get_text(first.before) if first.before is not None else None
        if text is None:
            out.skipped.append(
                {
                    "path": path,
                    "reason": "its version at the checkpoint is no longer kept (too large or "
                    "evicted)",
                }
            )
            continue
        if holds(now, text, first.encoding):
            out.unchanged.append(path)
            continue
        applied = await restore(
            ctx, path, now, text, first.encoding, tool="rewind", session=session
        )
        out.done.append(_Done(path=path, before=now))
        out.restored.append(path)
        if not applied.on_disk:
            out.buffer_only[path] = applied.note or "the file on disk was not changed"
        if applied.syntax is not None:
            out.syntax[path] = applied.syntax


def _skip(
    ctx: ToolContext,
    who: Owner,
    entries: list[Version | TreeEntry],
    path: str,
    changes: list[Version],
    session: str,
) -> str | None:
    """Why the text changes ``changes`` of ``path`` are not undone, if they are not."""
    try:
        rp = ctx.resolve(path)
        if rp.path != path:
            return "its path now leads elsewhere (through a symbolic link)"
        mutation.may_change_tree(ctx, [path], session, within=path)
    except ToolError as err:
        if err.code in _NOT_NOW:
            return f"agents may not change it now ({err.code})"
        raise
    others = _others_since(entries, who, changes[0].time, changes[0])
    if others:
        return f"session {_who_else(others, who)} also changed it since the checkpoint"
    for prev, nxt in itertools.pairwise(changes):
        if nxt.before_view != prev.after_view:
            return "it was changed outside Steadyhand between this session's changes"
    return None


async def _roll_back(
    ctx: ToolContext, store: History, session: str, done: list[_Done]
) -> list[str]:
    """Take back the steps already taken, newest first; what could not be."""
    stuck: list[str] = []
    for step in reversed(done):
        try:
            if step.ids:
                for change_id in reversed(step.ids):
                    found = find_entries(store, change_id)
                    if len(found) == 1 and isinstance(found[0], Moved | Removed):
                        back = trees.plan_back(
                            ctx, store, found[0], acting=session, tool="rewind", force=True
                        )
                        await trees.apply_back(ctx, back, locked=True)
                continue
            now = current_content(ctx, step.path)
            if step.before is None:
                if now is not None:
                    await mutation.remove(ctx, step.path, now, tool="rewind", session=session)
            else:
                await restore(
                    ctx,
                    step.path,
                    now,
                    step.before.raw,
                    step.before.encoding.label,
                    tool="rewind",
                    session=session,
                )
        except ToolError:
            stuck.append(step.path or ", ".join(step.ids))
    return stuck


def _answer(ctx: ToolContext, cp: Checkpoint, p: RewindParams, out: _Outcome) -> Result:
    named_cp = f" ({cp.label!r})" if cp.label else ""
    lines = [
        (
            f"- restored {x} in the editor's buffer only: {out.buffer_only[x]}"
            if x in out.buffer_only
            else f"- restored {x}"
        )
        + syntax_clause(out.syntax.get(x))
        for x in out.restored
    ]
    lines += [f"- moved {m['from']} back to {m['to']}" for m in out.moved_back]
    lines += [f"- made {x} again (this session had deleted it)" for x in out.made_again]
    lines += [f"- deleted {x} (this session had made it)" for x in out.deleted]
    lines += [f"- unchanged {x} (already as at the checkpoint)" for x in out.unchanged]
    lines += [f"- skipped {s['path']}: {s['reason']}" for s in out.skipped]
    lines, more = listed(lines, MAX_NAMED)
    if more:
        lines.append(
            f"- and {more:,} more (the result's fields list them, up to {MAX_LISTED} each)"
        )
    head = (
        f"Rewound session {p.session!r} to checkpoint {cp.id}{named_cp}: "
        f"{len(out.restored)} restored, {len(out.moved_back)} moved back, "
        f"{len(out.made_again)} made again, {len(out.deleted)} deleted, "
        f"{len(out.skipped)} skipped."
    )
    if out.skipped:
        head += (
            " Skipped files keep their current content: read them and decide with the user "
            "what to do."
        )
    head += syntax_summary(out.syntax)
    return success(
        head + "\n" + "\n".join(lines),
        checkpoint=cp.id,
        **list_fields("restored", out.restored),
        **list_fields("deleted", out.deleted),
        **list_fields("moved_back", out.moved_back),
        **list_fields("made_again", out.made_again),
        **list_fields("skipped", out.skipped),
        **list_fields("unchanged", out.unchanged),
        **list_fields("not_on_disk", sorted(out.buffer_only)),
        **syntax_fields(out.syntax),
    )


__all__ = ["has_tree", "rewind_with_tree"]

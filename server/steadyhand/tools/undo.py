"""``undo``: taking back a file's latest change (by ``file_path``), or one change by its id.

An undo is a change like any other: it opens its file through the mutation kernel
(:func:`~steadyhand.tools.mutation.open_target`) and goes through ``ctx.world.apply`` (an
editor edit for an open document, an atomic disk write otherwise), so it is guarded and
recorded, and undoing it again brings the change back.

Taking back an earlier change merges its reverse into the file as it is now
(:mod:`steadyhand.text.revert`, like ``git revert``): the lines it changed go back where
nothing changed them since, and where something did, nothing changes and the refusal
(``conflict``) names those lines.
"""

from __future__ import annotations

from steadyhand.apply.history import encoding_from_label
from steadyhand.context import ToolContext
from steadyhand.documents.snapshot import Snapshot, mixed_view
from steadyhand.history.lookup import after_key, later_changes
from steadyhand.history.store import Version
from steadyhand.history.stores import History
from steadyhand.protocol.errors import ErrorCode, ToolError
from steadyhand.protocol.params import UndoParams
from steadyhand.protocol.results import Result, success
from steadyhand.text.diff import splices_diff, stat, whole_diff
from steadyhand.text.encoding import Encoding
from steadyhand.text.lines import count_lines, to_view
from steadyhand.text.revert import Conflict, RawReverted, describe_lines, revert_raw
from steadyhand.text.splices import Splice, apply_splices, raw_splices
from steadyhand.tools.mutation import Target, commit, encode, open_target, reached, remove, told
from steadyhand.tools.records import diff_fields, total_lines
from steadyhand.tools.versions import (
    DIFF_MAX_CHARS,
    clock,
    content_of,
    find_change,
    holds,
    not_text,
    owner,
    refresh,
    require_history,
    restore,
    untouched,
    whose,
)
from steadyhand.world import Change


async def undo(ctx: ToolContext, p: UndoParams) -> Result:
    """``undo``: by ``file_path`` (the file's last change), or one change by ``id``."""
    if p.id is not None:
        return await take_back(ctx, p, p.id)
    store = require_history(ctx)
    assert p.file_path is not None  # UndoParams asks for it when there is no id
    async with open_target(
        ctx, p.file_path, p.session, "undo", include_diff=p.include_diff, accepts="version"
    ) as target:
        refresh(store)
        v = store.last_change(target.path, owner(ctx, p.session) if p.session else None)
        if v is None:
            raise _nothing_to_undo(ctx, store, target.path, p.session)
        return await undo_version(target, store, v, force=p.force)


async def undo_version(target: Target, store: History, v: Version, *, force: bool) -> Result:
    """Take back ``v``, the latest change to ``target``'s file, as ``target``'s session
    (else as ``v``'s): restore the text before it, or delete the file it created."""
    ctx, path = target.ctx, target.path
    acting = target.session_name or v.session
    target.act_as(acting)
    try:
        now = content_of(target, left_by=v)
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
    text: str | None = None
    if v.existed:
        text = store.get_text(v.before) if v.before is not None else None
        if text is None:
            raise ToolError(
                ErrorCode.NO_HISTORY,
                f"The version of {path} before the {v.tool} by {whose(ctx, v)} at "
                f"{clock(v.time)} is no longer kept (it was too large, or the history "
                "budget evicted it), so it cannot be restored. Nothing was changed.",
                path=path,
                version=v.id,
            )
    who = f"the {v.tool} by {whose(ctx, v)} at {clock(v.time)}"
    if text is None:
        return await _undo_creation(ctx, path, now, acting, who, v)
    return await _restore(ctx, path, now, text, v, acting, who, include_diff=target.include_diff)


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
    return success(told(message, applied, fields), **fields, session=acting, **reached(applied))


async def take_back(ctx: ToolContext, p: UndoParams, change_id: str) -> Result:
    """Take back the one change ``change_id``."""
    store = require_history(ctx)
    given = ctx.resolve(p.file_path).path if p.file_path is not None else None
    v = find_change(store, change_id, given)
    async with open_target(
        ctx,
        v.path,
        p.session or v.session,
        "undo",
        include_diff=p.include_diff,
        accepts="version",
        recorded=f"change {v.id} was not taken back",
    ) as target:
        refresh(store)
        v = find_change(store, change_id, given)  # the index may have been compacted meanwhile
        later = later_changes(store, v)
        if not later:
            return await undo_version(target, store, v, force=p.force)
        return await _revert(target, store, v, later)


def _later_names(ctx: ToolContext, later: list[Version]) -> str:
    named = [f"{x.id} ({x.tool} by {whose(ctx, x)} at {clock(x.time)})" for x in later]
    if len(named) > 4:
        named = [*named[:1], f"… {len(named) - 3} more …", *named[-2:]]
    return ", ".join(named)


async def _revert(target: Target, store: History, v: Version, later: list[Version]) -> Result:
    """Take back ``v``, an earlier change to ``target``'s file, keeping the ``later``
    ones: its reverse merged into the file as it is now."""
    ctx, path = target.ctx, target.path
    acting = target.session_name
    assert acting is not None
    include_diff = target.include_diff
    who = f"the {v.tool} by {whose(ctx, v)} at {clock(v.time)}"
    fields: dict[str, object] = {"path": path, "version": v.id}
    try:
        now = content_of(target, left_by=later[-1])
    except ToolError as err:
        raise ToolError(
            err.code,
            f"{path} is now {not_text(err)}, so {who} (change {v.id}) cannot be taken back; "
            "nothing was changed.",
            **fields,
        ) from err
    later_ids = [x.id for x in later]
    whole: str | None = None
    if now is None:
        whole = "the file has been deleted since"
    elif not v.existed:
        whole = "it created the file, and the file was changed since"
    elif v.after_view is None:
        whole = "it deleted the file, and the file was made again since"
    if whole is not None:
        lines = ((1, max(1, count_lines(now.view))),) if now is not None else ()
        raise ToolError(
            ErrorCode.CONFLICT,
            f"{who[0].upper()}{who[1:]} (change {v.id}) cannot be taken back on its own: "
            f"{whole} (by {_later_names(ctx, later)}); nothing was changed. Take back the "
            "later changes first, newest first, or undo with file_path to go back step by "
            "step.",
            **fields,
            lines=[list(r) for r in lines],
            later=later_ids,
        )
    assert now is not None
    before = store.get_text(v.before) if v.before is not None else None
    key = after_key(store, v, later[0])
    after = store.get_text(key) if key is not None else None
    if before is None or after is None:
        side = "before it" if before is None else "it left"
        raise ToolError(
            ErrorCode.NO_HISTORY,
            f"The text of {path} {side} is no longer kept (too large, evicted by the history "
            "budget, or recorded before Steadyhand kept it), so change "
            f"{v.id} ({who}) cannot be taken back on its own (restorable: false); nothing "
            "was changed. Undo with file_path goes back one change at a time.",
            **fields,
            restorable=False,
        )
    out = revert_raw(before, after, now.raw)
    if isinstance(out, Conflict):
        # Some of its lines are still in the file, or the file changed around them: a
        # change counts as taken back only where the file holds the lines from before it.
        named = describe_lines(out.lines)
        raise ToolError(
            ErrorCode.CONFLICT,
            f"{who[0].upper()}{who[1:]} (change {v.id}) cannot be taken back on its own: "
            f"the file changed on the same lines since ({named} as it is now; later "
            f"changes: {_later_names(ctx, later)}); nothing was changed. Take back the later "
            "changes to those lines first, or change them by hand.",
            **fields,
            lines=[list(r) for r in out.lines],
            later=later_ids,
        )
    new_raw, notes = _with_endings(now, out)
    enc, enc_note = _encoding_back(now, v)
    if enc_note:
        notes.append(enc_note)
    if new_raw == now.raw and enc == now.encoding:
        what = (
            f"What {who} (change {v.id}) changed is no longer in {path} (it was taken back already)"
            if out.view.already
            else f"{path} already reads as before {who} (change {v.id})"
        )
        raise ToolError(
            ErrorCode.NO_CHANGE,
            f"{what}; nothing was changed." + "".join(" " + n for n in notes),
            **fields,
        )
    return await _apply_revert(
        ctx, now, out, new_raw, enc, notes, v, later, acting, who, include_diff=include_diff
    )


def _raw_text(now: Snapshot, splices: tuple[Splice, ...]) -> str:
    """``now``'s raw text with view ``splices`` made, every untouched line keeping its
    line ending (as an edit makes them)."""
    newline = now.endings.dominant
    if now.raw is now.view and newline == "\n":
        return apply_splices(now.raw, splices)
    rsp = raw_splices(now.newline_map, splices, newline, mixed_view=mixed_view(now), raw=now.raw)
    return apply_splices(now.raw, rsp)


def _with_endings(now: Snapshot, out: RawReverted) -> tuple[str, list[str]]:
    """The raw text to write, and sentences on line endings not taken back."""
    notes: list[str] = []
    if to_view(out.raw) != out.view.text:
        # a line ending in a lone CR before an empty line ending in LF would read back
        # as one line break: the file's own endings instead
        notes.append(
            "Its line endings were not taken back: with them, two line breaks of the file "
            "would have read as one."
        )
        return _raw_text(now, out.view.splices), notes
    if out.endings_kept:
        notes.append(
            f"It had switched the line endings of {out.endings_kept} line(s) that have "
            "another ending now (changed since), so those keep theirs."
        )
    return out.raw, notes


def _encoding_back(now: Snapshot, v: Version) -> tuple[Encoding, str]:
    """The encoding to store the file in once ``v`` is taken back, and a sentence when a
    switch of encoding (or of byte-order mark) that ``v`` made is not taken back."""
    left = v.after_encoding  # unknown for changes an earlier version recorded
    if left is None or left == v.encoding:
        return now.encoding, ""
    switch = f"It had also stored the file as {left} (it was {v.encoding})"
    if now.source == "buffer":
        return now.encoding, (
            f"{switch}; the file is open in the editor, which decides how it is stored, "
            "so that was not taken back."
        )
    if now.encoding.label != left:
        return now.encoding, (
            f"{switch}; the file is stored as {now.encoding.label} now (changed since), so "
            "that stays."
        )
    return encoding_from_label(v.encoding), ""


async def _apply_revert(
    ctx: ToolContext,
    now: Snapshot,
    out: RawReverted,
    new_raw: str,
    enc: Encoding,
    notes: list[str],
    v: Version,
    later: list[Version],
    acting: str,
    who: str,
    *,
    include_diff: bool,
) -> Result:
    path = now.path
    splices = out.view.splices
    data = encode(ctx, path, new_raw, enc)
    # The splices describe the change only when every line ending the file keeps is
    # its own; else the editor gets the whole text (its lines compared one by one).
    exact = new_raw == _raw_text(now, splices)
    applied = await commit(
        ctx,
        Change(
            path,
            now,
            new_raw,
            data,
            enc,
            "undo",
            splices=splices if exact else None,
            session=acting,
        ),
    )
    diff = splices_diff(now.view, out.view.text, splices, name=path)
    ds = stat(diff)
    fields = diff_fields(ctx, diff, total_lines(applied.snapshot), include_diff=include_diff)
    also: list[str] = []
    if out.endings_back:
        also.append(f"the line endings of {out.endings_back} line(s)")
    if enc != now.encoding:
        also.append(f"its encoding ({enc.label})")
    restored = f"; {' and '.join(also)} back as before" if also else ""
    message = (
        f"Took back {who} (change {v.id}) in {path} (+{ds.added} / -{ds.removed}"
        f"{restored}), keeping the {len(later)} later change(s) to other lines. Call undo "
        "with this file_path to bring it back."
    )
    if applied.snapshot.view == out.view.text and applied.snapshot.raw != new_raw:
        notes.append(
            "The editor has the file open and keeps its own line endings in its buffer, so "
            "the line endings there were not taken back."
        )
    message += "".join(" " + n for n in notes)
    return success(
        told(message, applied, fields),
        path=path,
        type="revert",
        undone=v.id,
        **fields,
        added=ds.added,
        removed=ds.removed,
        session=acting,
        **reached(applied),
    )

"""``changes``, ``change`` and ``undo`` by id: the workspace's recorded changes, the texts
of one, and taking one back.

Taking back a file's latest change is the undo of :mod:`steadyhand.tools.undo`. Taking
back an earlier one merges its reverse into the file as it is now
(:mod:`steadyhand.text.revert`, like ``git revert``): the lines it changed go back where
nothing changed them since, and where something did, nothing changes and the refusal
(``conflict``) names those lines. The merged text goes through ``ctx.world.apply`` like
every change: a WorkspaceEdit for an open document, an atomic write otherwise.
"""

from __future__ import annotations

from steadyhand.apply.history import encoding_from_label
from steadyhand.context import ToolContext
from steadyhand.documents.snapshot import Snapshot, mixed_view
from steadyhand.guards.protected import check_writable
from steadyhand.history.changes import (
    after_key,
    before_kept,
    find_checkpoint,
    find_versions,
    later_changes,
    list_changes,
)
from steadyhand.history.store import Checkpoint, Owner, Version
from steadyhand.history.stores import History
from steadyhand.protocol.errors import ErrorCode, ToolError
from steadyhand.protocol.lists import list_fields
from steadyhand.protocol.params import ChangeParams, ChangesParams, UndoParams
from steadyhand.protocol.results import Result, success
from steadyhand.text.diff import splices_diff, stat, whole_diff
from steadyhand.text.encoding import Encoding
from steadyhand.text.lines import count_lines, ending_stats, line_ending_name, to_view
from steadyhand.text.revert import Conflict, RawReverted, describe_lines, revert_raw
from steadyhand.text.splices import Splice, apply_splices, raw_splices
from steadyhand.tools import undo as undo_tools
from steadyhand.tools.mutation import commit, encode
from steadyhand.tools.records import diff_fields, omitted_note, total_lines
from steadyhand.tools.versions import (
    clock,
    current_content,
    iso,
    not_text,
    other_server,
    owner,
    refresh,
    require_history,
    untouched,
    whose,
)
from steadyhand.world import Change

DEFAULT_CHANGES_LIMIT = 50
#: The most changes one listing shows, whatever ``limit`` asks for.
MAX_CHANGES_LIMIT = 100
#: ``change`` answers texts of up to this many bytes each; larger ones are ``too_large``.
CHANGE_MAX_BYTES = 4 * 1024 * 1024
#: A diff is quoted in a message up to this many characters (it is always in ``diff``).
MESSAGE_DIFF_CHARS = 8_000


def _kind(v: Version) -> str:
    if not v.existed:
        return "create"
    return "delete" if v.after_view is None else "change"


def item_fields(
    ctx: ToolContext,
    v: Version,
    *,
    current: bool,
    restorable: bool,
    checkpoint: Checkpoint | None,
) -> dict[str, object]:
    """One change as ``changes`` lists it (and ``change`` answers it)."""
    return {
        "id": v.id,
        "time": iso(v.time),
        "session": v.session,
        "other_server": other_server(ctx, v),
        "tool": v.tool,
        "path": v.path,
        "kind": _kind(v),
        "added": v.added,
        "removed": v.removed,
        "current": current,
        "restorable": restorable,
        "checkpoint": checkpoint.id if checkpoint is not None else None,
    }


def _checkpoint_fields(ctx: ToolContext, cp: Checkpoint) -> dict[str, object]:
    return {
        "id": cp.id,
        "session": cp.session,
        "other_server": other_server(ctx, cp),
        "label": cp.label,
        "time": iso(cp.time),
    }


def _now_or_none(ctx: ToolContext, path: str) -> Snapshot | None:
    """The file as it is now; None when it is gone or is no longer text."""
    try:
        return current_content(ctx, path)
    except ToolError:
        return None


def _is_current(ctx: ToolContext, v: Version) -> bool:
    """Whether the file is still exactly what ``v`` left (a file no longer text is not)."""
    try:
        return untouched(v, current_content(ctx, v.path, left_by=v))
    except ToolError:
        return False


def _restorable(store: History, v: Version, latest: bool, following: Version | None) -> bool:
    """Whether the texts taking ``v`` back needs are kept: the one before it, and, for
    an earlier change, the one it left (which the merge starts from)."""
    if not before_kept(store, v):
        return False
    if latest or not v.existed or v.after_view is None:
        return True
    return after_key(store, v, following) is not None


def _describe(v: Version) -> str:
    if not v.existed:
        return f"created, +{v.added}"
    if v.after_view is None:
        return f"deleted, -{v.removed}"
    return f"+{v.added} / -{v.removed}"


def changes(ctx: ToolContext, p: ChangesParams) -> Result:
    store = require_history(ctx)
    folder = ctx.resolve(p.path).path if p.path is not None else None
    who = owner(ctx, p.session) if p.session is not None else None
    after = -1
    since: Checkpoint | None = None
    if p.since is not None:
        found = find_checkpoint(store, p.since, who)
        if not found:
            raise _unknown_checkpoint(store, p.since, who)
        if len({cp for _, cp in found}) > 1:
            raise ToolError(
                ErrorCode.AMBIGUOUS,
                f"{len(found)} checkpoints have the id {p.since!r} (recorded by an earlier "
                "version, whose ids could repeat): "
                + ", ".join(f"of session {cp.session!r} at {clock(cp.time)}" for _, cp in found)
                + ". Pass the session too, or the checkpoint's label.",
                checkpoint=p.since,
            )
        after, since = found[0]
    limit = min(p.limit or DEFAULT_CHANGES_LIMIT, MAX_CHANGES_LIMIT)
    listing = list_changes(store.entries, who=who, path=folder, after=after, limit=limit)
    items: list[dict[str, object]] = []
    lines: list[str] = []
    for x in listing.changes:
        v = x.version
        current = x.latest and _is_current(ctx, v)
        restorable = _restorable(store, v, x.latest, x.following)
        items.append(
            item_fields(ctx, v, current=current, restorable=restorable, checkpoint=x.checkpoint)
        )
        marks = [m for m, on in (("current", current), ("not restorable", not restorable)) if on]
        mark = f"  ({'; '.join(marks)})" if marks else ""
        elsewhere = " (another server)" if other_server(ctx, v) else ""
        lines.append(
            f"  {v.id}  {clock(v.time)}  session {v.session}{elsewhere}  {v.tool}  {v.path}  "
            f"{_describe(v)}{mark}"
        )
    scope = []
    if p.session is not None:
        scope.append(f"by session {p.session!r}")
    if folder is not None:
        scope.append(f"to {folder}")
    if since is not None:
        named = f" ({since.label!r})" if since.label else ""
        scope.append(f"since checkpoint {since.id}{named}")
    where = (" " + " ".join(scope)) if scope else ""
    checkpoints = [_checkpoint_fields(ctx, cp) for cp in listing.checkpoints]
    if not items:
        return success(
            f"Steadyhand has recorded no change{where}.",
            changes=[],
            total=0,
            checkpoints=checkpoints,
        )
    head = f"{listing.total} change(s) recorded{where}, newest first"
    if listing.total > len(items):
        if limit < (p.limit or 0):  # the most one listing shows
            head += (
                f" (showing the newest {len(items)}, the most one listing shows; pass path "
                "or since to narrow it)"
            )
        else:
            head += f" (showing {len(items)}; pass limit for more)"
    cps = ""
    if listing.checkpoints:
        named_cps = [
            f"{cp.id}{f' ({cp.label!r})' if cp.label else ''} of {whose(ctx, cp)} at "
            f"{clock(cp.time)}"
            for cp in listing.checkpoints[:10]
        ]
        cps = "\nCheckpoints: " + ", ".join(named_cps) + "."
    message = (
        f"{head}:\n"
        + "\n".join(lines)
        + cps
        + "\nTo see a change's diff, call change with its id; to take one back, call undo "
        "with its id."
    )
    return success(message, changes=items, total=listing.total, checkpoints=checkpoints)


def _unknown_checkpoint(store: History, name: str, session: Owner | None) -> ToolError:
    known = [
        c.id + (f" ({c.label!r})" if c.label else "")
        for c in store.entries
        if isinstance(c, Checkpoint) and (session is None or session.made(c))
    ]
    listing = ", ".join(known[-5:]) if known else "none"
    who = f"Session {session.session!r} has" if session is not None else "There is"
    return ToolError(
        ErrorCode.NO_HISTORY,
        f"{who} no checkpoint {name!r} (the latest: {listing}). Pass a checkpoint id or "
        "label that checkpoint returned.",
        checkpoint=name,
    )


def _find(store: History, change_id: str, path: str | None = None) -> Version:
    """The change ``change_id`` names (to ``path``, if given): one, or a refusal. An id
    that names several (an abbreviation, or ids an earlier version let repeat, also
    across the stores read together) is ``ambiguous``, never guessed."""
    found = find_versions(store, change_id, path)
    if len(found) == 1:
        return found[0]
    if not found:
        elsewhere = find_versions(store, change_id) if path is not None else []
        if elsewhere:
            other = elsewhere[-1]
            raise ToolError(
                ErrorCode.NO_HISTORY,
                f"Change {change_id!r} was made to {other.path}, not to {path}; nothing "
                "was changed. Pass the id alone.",
                path=other.path,
                id=change_id,
            )
        raise ToolError(
            ErrorCode.NO_HISTORY,
            f"No recorded change has the id {change_id!r} (the history keeps its newest "
            "entries only). Call changes to list the changes and their ids.",
            id=change_id,
        )
    raise _ambiguous(change_id, found, path)


def _ambiguous(given: str, found: list[Version], path: str | None) -> ToolError:
    named = [f"{v.id} ({v.tool} of {v.path} at {clock(v.time)})" for v in found[:5]]
    if len(found) > 5:
        named.append(f"and {len(found) - 5} more")
    if path is None and len({v.path for v in found}) == len(found):
        step = "Pass file_path too, naming the file whose change you mean."
    elif len({v.id for v in found}) == len(found):
        step = "Pass the whole id of the change you mean."
    else:
        step = (
            "These changes cannot be told apart by their id (an earlier version drew "
            "shorter ids, which could repeat): call undo with file_path to step back "
            "through the file's changes one at a time (history lists them)."
        )
    return ToolError(
        ErrorCode.AMBIGUOUS,
        f"The id {given!r} names {len(found)} recorded changes: {', '.join(named)}; nothing "
        f"was changed. {step}",
        id=given,
        **list_fields(
            "candidates",
            [{"id": v.id, "path": v.path, "time": iso(v.time), "tool": v.tool} for v in found],
        ),
    )


def _size_of(text: str) -> int:
    return len(text.encode("utf-8", "surrogatepass"))


def change(ctx: ToolContext, p: ChangeParams) -> Result:
    store = require_history(ctx)
    v = _find(store, p.id, ctx.resolve(p.file_path).path if p.file_path is not None else None)
    ctx.resolve(v.path)  # today's rules: a path denied or outside the roots now is refused
    later = later_changes(store, v)
    following = later[0] if later else None
    now = _now_or_none(ctx, v.path)
    current = not later and untouched(v, now)
    fields = item_fields(
        ctx,
        v,
        current=current,
        restorable=_restorable(store, v, not later, following),
        checkpoint=_checkpoint_before(store, v),
    )
    size_before = v.before_size if v.existed else None
    size_after = v.after_size if v.after_view is not None else None
    sizes = {"size_before": size_before, "size_after": size_after}
    who = f"the {v.tool} by {whose(ctx, v)} at {clock(v.time)}"
    if (size_before or 0) > CHANGE_MAX_BYTES or (size_after or 0) > CHANGE_MAX_BYTES:
        raise _too_large(v, who, sizes, fields, binary=False)
    before: str | None = None
    if v.existed:
        before = store.get_text(v.before) if v.before is not None else None
        if before is None:
            raise _not_kept(v, who, "before it", fields)
    after: str | None = None
    if v.after_view is not None:
        key = after_key(store, v, following)
        after = store.get_text(key) if key is not None else None
        if after is None and current and now is not None:
            after = now.raw
        if after is None:
            raise _not_kept(v, who, "it left", fields)
    if any(t is not None and "\x00" in t for t in (before, after)):
        raise _too_large(v, who, sizes, fields, binary=True)
    if before is not None:
        sizes["size_before"] = _size_of(before)
    if after is not None:
        sizes["size_after"] = _size_of(after)
    diff = whole_diff(to_view(before or ""), to_view(after or ""), name=v.path)
    quoted = f"\n{diff}" if len(diff) <= MESSAGE_DIFF_CHARS else " The diff is in `diff`."
    step = (
        "To take it back, call undo with its id."
        if fields["restorable"]
        else "It can no longer be taken back on its own."
    )
    also, extra = _storage(v, before, after)
    message = f"Change {v.id}: {who} to {v.path} ({_describe(v)}).{also} {step}{quoted}"
    return success(message, **fields, before=before, after=after, diff=diff, **sizes, **extra)


def _storage(v: Version, before: str | None, after: str | None) -> tuple[str, dict[str, object]]:
    """What a change did besides its lines, which a diff of LF texts does not show: a
    switch of line endings, of encoding or byte-order mark (a sentence, and fields)."""
    parts: list[str] = []
    extra: dict[str, object] = {}
    if before is not None and after is not None:
        was, now = ending_stats(before).style, ending_stats(after).style
        if was != now and "none" not in (was, now):
            extra["line_endings"] = [line_ending_name(was), line_ending_name(now)]
            parts.append(f"line endings {line_ending_name(was)} → {line_ending_name(now)}")
    if v.existed and v.after_encoding is not None and v.after_encoding != v.encoding:
        extra["encodings"] = [v.encoding, v.after_encoding]
        parts.append(f"stored as {v.after_encoding} (was {v.encoding})")
    return (f" It also changed: {'; '.join(parts)}." if parts else ""), extra


def _checkpoint_before(store: History, v: Version) -> Checkpoint | None:
    """The latest checkpoint of ``v``'s session before ``v``."""
    found: Checkpoint | None = None
    mine = Owner(v.session, v.instance)
    for e in store.entries:
        if isinstance(e, Version) and e == v:
            return found
        if isinstance(e, Checkpoint) and mine.made(e):
            found = e
    return found


def _too_large(
    v: Version, who: str, sizes: dict[str, int | None], fields: dict[str, object], *, binary: bool
) -> ToolError:
    what = (
        "holds binary data"
        if binary
        else f"is over {CHANGE_MAX_BYTES:,} bytes (before: {sizes['size_before']}, after: "
        f"{sizes['size_after']})"
    )
    return ToolError(
        ErrorCode.TOO_LARGE,
        f"A version of {v.path} in change {v.id} ({who}) {what}, so its texts are not "
        "answered. Call history on the file to see its versions.",
        **{**fields, **sizes, "binary": binary},
    )


def _not_kept(v: Version, who: str, side: str, fields: dict[str, object]) -> ToolError:
    return ToolError(
        ErrorCode.NO_HISTORY,
        f"The text of {v.path} {side} ({who}, change {v.id}) is no longer kept (too "
        "large, evicted by the history budget, or recorded before Steadyhand kept it), so "
        "the change cannot be shown.",
        **fields,
    )


async def undo(ctx: ToolContext, p: UndoParams) -> Result:
    """``undo``: by ``file_path`` (the file's last change), or one change by ``id``."""
    if p.id is None:
        return await undo_tools.undo(ctx, p)
    return await take_back(ctx, p, p.id)


async def take_back(ctx: ToolContext, p: UndoParams, change_id: str) -> Result:
    """Take back the one change ``change_id``."""
    store = require_history(ctx)
    given = ctx.resolve(p.file_path).path if p.file_path is not None else None
    v = _find(store, change_id, given)
    path = v.path
    if ctx.resolve(path).path != path:
        raise ToolError(
            ErrorCode.INVALID_PATH,
            f"{path} now leads elsewhere (through a symbolic link), so change {v.id} was not "
            "taken back; nothing was changed.",
            path=path,
        )
    acting = p.session or v.session
    check_writable(ctx, path, acting)
    async with ctx.locks.hold(path):
        refresh(store)
        v = _find(store, change_id, given)  # the index may have been compacted meanwhile
        later = later_changes(store, v)
        if not later:
            return await undo_tools.undo_version(
                ctx, store, path, v, acting, force=p.force, include_diff=p.include_diff
            )
        return await _revert(ctx, store, v, later, acting, include_diff=p.include_diff)


def _later_names(ctx: ToolContext, later: list[Version]) -> str:
    named = [f"{x.id} ({x.tool} by {whose(ctx, x)} at {clock(x.time)})" for x in later]
    if len(named) > 4:
        named = [*named[:1], f"… {len(named) - 3} more …", *named[-2:]]
    return ", ".join(named)


async def _revert(
    ctx: ToolContext,
    store: History,
    v: Version,
    later: list[Version],
    acting: str,
    *,
    include_diff: bool,
) -> Result:
    path = v.path
    who = f"the {v.tool} by {whose(ctx, v)} at {clock(v.time)}"
    fields: dict[str, object] = {"path": path, "version": v.id}
    try:
        now = current_content(ctx, path, left_by=later[-1])
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
    if applied.note:
        message += " " + applied.note
    if omitted_note(fields):
        message += " " + omitted_note(fields)
    return success(
        message,
        path=path,
        type="revert",
        undone=v.id,
        **fields,
        added=ds.added,
        removed=ds.removed,
        session=acting,
        via=applied.via,
        on_disk=applied.on_disk,
    )

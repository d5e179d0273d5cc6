"""``changes`` and ``change``: the workspace's recorded changes, newest first, and the
texts of one change."""

from __future__ import annotations

from steadyhand.context import ToolContext
from steadyhand.documents.snapshot import Snapshot
from steadyhand.history.lookup import (
    after_key,
    before_kept,
    find_checkpoint,
    later_changes,
    list_changes,
)
from steadyhand.history.store import Checkpoint, Owner, Version
from steadyhand.history.stores import History
from steadyhand.protocol.errors import ErrorCode, ToolError
from steadyhand.protocol.params import ChangeParams, ChangesParams
from steadyhand.protocol.results import Result, success
from steadyhand.text.diff import whole_diff
from steadyhand.text.lines import ending_stats, line_ending_name, to_view
from steadyhand.tools.versions import (
    clock,
    current_content,
    describe,
    entry_fields,
    find_change,
    iso,
    other_server,
    owner,
    require_history,
    untouched,
    whose,
)

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
        **entry_fields(ctx, v),
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
            f"{describe(v)}{mark}"
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


def _size_of(text: str) -> int:
    return len(text.encode("utf-8", "surrogatepass"))


def change(ctx: ToolContext, p: ChangeParams) -> Result:
    store = require_history(ctx)
    v = find_change(store, p.id, ctx.resolve(p.file_path).path if p.file_path is not None else None)
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
    message = f"Change {v.id}: {who} to {v.path} ({describe(v)}).{also} {step}{quoted}"
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

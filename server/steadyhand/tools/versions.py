"""What the history tools share (``history``, ``undo``, ``checkpoint``, ``rewind``): the
store, whose sessions are whose, the file as it is now, how versions are described, and
putting a version back."""

from __future__ import annotations

import datetime
import os

from steadyhand.apply.history import encoding_from_label
from steadyhand.context import ToolContext
from steadyhand.documents.snapshot import Snapshot, from_raw_anyway
from steadyhand.history.lookup import find_versions
from steadyhand.history.store import Entry, Owner, Version
from steadyhand.history.stores import History
from steadyhand.protocol.errors import ErrorCode, ToolError
from steadyhand.protocol.lists import list_fields
from steadyhand.text.encoding import BinaryContent
from steadyhand.tools.mutation import Target, commit, encode
from steadyhand.world import Applied, Change

#: Diffs of restores are put in results only for texts up to this many characters.
DIFF_MAX_CHARS = 200_000


def require_history(ctx: ToolContext) -> History:
    store = ctx.history
    if store is None:
        raise ToolError(
            ErrorCode.NO_HISTORY,
            "File history is turned off (the history setting is false), so there are no "
            "versions to list or restore. Ask the user to turn it on.",
        )
    refresh(store)
    return store


def refresh(store: History) -> None:
    """Read what was appended to the index; an unusable store is ``io_error``."""
    try:
        store.refresh()
    except OSError as exc:
        raise store_failed(store, exc) from exc


def store_failed(store: History, exc: OSError) -> ToolError:
    return ToolError(
        ErrorCode.IO_ERROR,
        f"The history store in {store.root} cannot be used ({exc.strerror or exc}), so "
        "nothing was listed, recorded or changed. Ask the user to fix that folder (its "
        "permissions, free space) or to set historyDir to another one, then retry.",
    )


def owner(ctx: ToolContext, session: str) -> Owner:
    """This server's session ``session`` as history records it (its name and this
    server's instance: every server has sessions of the same names)."""
    return Owner(session, ctx.sessions.instance)


def other_server(ctx: ToolContext, e: Entry) -> bool:
    """Whether ``e`` was recorded by a session of another server: another editor window
    or MCP server on the same folder, or this server before it restarted (not known of
    lines an earlier version wrote: False)."""
    return e.instance is not None and e.instance != ctx.sessions.instance


def entry_fields(ctx: ToolContext, v: Version) -> dict[str, object]:
    """The fields every listing gives a recorded change: its id, time, session (and
    whether another server's) and tool."""
    return {
        "id": v.id,
        "time": iso(v.time),
        "session": v.session,
        "other_server": other_server(ctx, v),
        "tool": v.tool,
    }


def whose(ctx: ToolContext, e: Entry) -> str:
    """``session 'name'``, and ``of another server`` when it ran elsewhere."""
    return f"session {e.session!r}" + (" of another server" if other_server(ctx, e) else "")


def holds(now: Snapshot | None, text: str, encoding_label: str) -> bool:
    """Whether the file already holds ``text`` stored in ``encoding_label`` (BOM
    included): line endings, a byte-order mark and the encoding are changes too. An
    open buffer holds text only: the editor decides how it is stored."""
    if now is None or now.raw != text:
        return False
    return now.source == "buffer" or now.encoding == encoding_from_label(encoding_label)


def clock(t: float) -> str:
    return datetime.datetime.fromtimestamp(t).strftime("%H:%M:%S")


def iso(t: float) -> str:
    return datetime.datetime.fromtimestamp(t).astimezone().isoformat(timespec="seconds")


def current_content(ctx: ToolContext, path: str, left_by: Version | None = None) -> Snapshot | None:
    """The file as it is now (open buffer or disk), None if it does not exist. A file
    that is there but is not text (binary, a folder, a device...) is a ToolError, except
    bytes that read as binary but are exactly the text the change ``left_by`` left (a
    NUL it wrote, say): Steadyhand's own change can always be taken back."""
    buf = ctx.world.current(path)
    if buf is not None:
        return buf
    return _on_disk(ctx, path, left_by)


def content_of(target: Target, left_by: Version | None = None) -> Snapshot | None:
    """:func:`current_content` of a file just opened for a change (its open buffer was
    looked at then)."""
    if target.buffer is not None:
        return target.buffer
    return _on_disk(target.ctx, target.path, left_by)


def _on_disk(ctx: ToolContext, path: str, left_by: Version | None) -> Snapshot | None:
    if not os.path.lexists(path):
        return None
    try:
        return ctx.snapshot(path)
    except ToolError as err:
        if err.code == ErrorCode.NOT_FOUND:  # deleted just now
            return None
        if err.code == ErrorCode.BINARY and left_by is not None:
            own = _as_left(ctx, path, left_by)
            if own is not None:
                return own
        raise


def _as_left(ctx: ToolContext, path: str, v: Version) -> Snapshot | None:
    """The file as a snapshot of the text change ``v`` left, when its bytes are that
    text (whatever :func:`~steadyhand.text.encoding.decode` makes of them); else None."""
    if v.after_view is None:
        return None
    try:
        snap = from_raw_anyway(path, ctx.read_raw(path))
    except (ToolError, BinaryContent):
        return None
    return snap if snap.view_hash == v.after_view else None


def not_text(err: ToolError) -> str:
    """What a file that cannot be taken as text now is, for skips and listings."""
    what = {
        ErrorCode.BINARY: "a binary file",
        ErrorCode.IS_DIRECTORY: "a folder",
        ErrorCode.NOT_REGULAR_FILE: "not a regular file",
    }.get(err.code)
    return what or f"unreadable ({err.message.rstrip('.')})"


def untouched(v: Version, now: Snapshot | None) -> bool:
    """Whether the file is still exactly what change ``v`` left."""
    if now is None:
        return v.after_view is None
    return v.after_view is not None and now.view_hash == v.after_view


def restorable(store: History, v: Version) -> bool:
    return not v.existed or store.has(v.before)


async def restore(
    ctx: ToolContext,
    path: str,
    now: Snapshot | None,
    text: str,
    encoding_label: str,
    *,
    tool: str,
    session: str,
) -> Applied:
    """Make ``text`` the content of ``path`` through the world; keep the session true."""
    # An open buffer keeps its own encoding; on disk the version's own encoding returns
    # (for a change made in an editor buffer: the file's encoding on disk at the time).
    buffer = now is not None and now.source == "buffer"
    enc = now.encoding if now is not None and buffer else encoding_from_label(encoding_label)
    data = encode(ctx, path, text, enc)
    return await commit(ctx, Change(path, now, text, data, enc, tool, session=session))


def find_change(store: History, change_id: str, path: str | None = None) -> Version:
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


def describe(v: Version) -> str:
    """What change ``v`` did, shortly, for a listing: a creation and a deletion with the
    lines they added or removed, a change with its lines and the size it left."""
    if not v.existed:
        return f"created, +{v.added} ({v.after_size:,} bytes)"
    if v.after_view is None:
        return f"deleted, -{v.removed} ({v.before_size:,} bytes)"
    return f"+{v.added} / -{v.removed} → {v.after_size:,} bytes"

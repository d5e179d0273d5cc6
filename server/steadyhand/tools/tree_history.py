"""Moves and deletions in history: how they are listed and shown, and taking one back.

A move is taken back by moving it back (and making again, from history, the file an
``overwrite`` replaced); a deletion by making every file and folder it took away again,
byte for byte, with its permission bits; the undo of a deletion by deleting those again.
Each of these is itself recorded, so taking it back once more redoes it. Nothing is
guessed: when what the entry left is no longer there (moved or deleted since, a path
taken meanwhile), the refusal says which, and nothing changes.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Sequence
from dataclasses import dataclass

from steadyhand.context import ToolContext
from steadyhand.history.store import Checkpoint, KeptFile, Moved, Removed, TreeEntry
from steadyhand.history.stores import History
from steadyhand.protocol.errors import ErrorCode, ToolError
from steadyhand.protocol.lists import list_fields, named
from steadyhand.protocol.results import Result, success
from steadyhand.state.hashing import content_hash, text_hash
from steadyhand.text.diff import whole_diff
from steadyhand.text.encoding import BinaryContent, decode
from steadyhand.text.lines import to_view
from steadyhand.tools import mutation
from steadyhand.tools import tree_ops as ops
from steadyhand.tools.move import plan
from steadyhand.tools.versions import clock, entry_fields, iso, whose
from steadyhand.world import Kept, Move, Removal, Restoration, TreeApplied

# -- how a move or a deletion is listed ----------------------------------------------------


def kind(e: TreeEntry) -> str:
    """``move``, ``delete`` (files taken away) or ``create`` (made again: an undo)."""
    if isinstance(e, Moved):
        return "move"
    return "create" if e.back else "delete"


def path_of(e: TreeEntry) -> str:
    return e.source if isinstance(e, Moved) else e.path


def describe(e: TreeEntry) -> str:
    """What it did, shortly, for a listing."""
    if isinstance(e, Moved):
        what = f" ({ops.plural(e.files, 'file')})" if e.folder else ""
        over = ", replacing a file" if e.replaced_existed else ""
        return f"moved to {e.destination}{what}{over}"
    files = ops.plural(len(e.files), "file")
    if e.back:
        return f"made again, +{e.lines} ({files})"
    return f"deleted, -{e.lines} ({files})" if e.folder else f"deleted, -{e.lines}"


def current(e: TreeEntry) -> bool:
    """Whether the tree is still as ``e`` left it."""
    if isinstance(e, Moved):
        return os.path.lexists(e.destination) and not os.path.lexists(e.source)
    return os.path.lexists(e.path) if e.back else not os.path.lexists(e.path)


def restorable(store: History, e: TreeEntry) -> bool:
    """Whether what taking ``e`` back needs is kept: the file a move replaced, every file
    a deletion took away."""
    if isinstance(e, Moved):
        return not e.replaced_existed or store.has(e.replaced)
    return e.back or all(store.has(f.key) for f in e.files)


def item_fields(
    ctx: ToolContext,
    store: History,
    e: TreeEntry,
    *,
    is_current: bool,
    checkpoint: Checkpoint | None,
) -> dict[str, object]:
    """A move or a deletion as ``changes`` lists it (and ``change`` answers it)."""
    out: dict[str, object] = {
        **entry_fields(ctx, e),
        "path": path_of(e),
        "kind": kind(e),
        "added": e.lines if isinstance(e, Removed) and e.back else 0,
        "removed": e.lines if isinstance(e, Removed) and not e.back else 0,
        "current": is_current,
        "restorable": restorable(store, e),
        "checkpoint": checkpoint.id if checkpoint is not None else None,
        "folder": e.folder,
        "files": e.files if isinstance(e, Moved) else len(e.files),
    }
    if isinstance(e, Moved):
        out["destination"] = e.destination
        out["replaced"] = e.replaced_existed
    return out


def change_answer(
    ctx: ToolContext, store: History, e: TreeEntry, fields: dict[str, object]
) -> Result:
    """``change`` of a move or a deletion: for one file, its text on each side (a move
    leaves it as it was), else the files it touched."""
    who = f"the {e.tool} by {whose(ctx, e)} at {clock(e.time)}"
    step = (
        "To take it back, call undo with its id."
        if fields["restorable"]
        else "It can no longer be taken back on its own."
    )
    before: str | None = None
    after: str | None = None
    extra: dict[str, object] = {}
    if isinstance(e, Moved):
        header = f"rename from {e.source}\nrename to {e.destination}\n"
        if not e.folder and e.view is not None and current(e):
            text = _text_now(ctx, e.destination, e.view)
            before = after = text
        diff = header
        head = f"Change {e.id}: {who} moved {e.source} to {e.destination}"
        if e.folder:
            head += f" ({ops.plural(e.files, 'file')})"
        if e.replaced_existed:
            head += ", replacing the file there (kept in history)"
    else:
        rels = [f.path or os.path.basename(e.path) for f in e.files]
        extra = list_fields("file_list", rels)
        text = None
        if not e.folder and e.files and e.files[0].view is not None and e.files[0].key:
            data = store.get_bytes(e.files[0].key)
            text = _decoded(data)
        if e.back:
            after = text
        else:
            before = text
        diff = whole_diff(to_view(before or ""), to_view(after or ""), name=e.path)
        verb = "made again" if e.back else "deleted"
        head = f"Change {e.id}: {who} {verb} {e.path}"
        if e.folder:
            head += f" ({ops.plural(len(e.files), 'file')}: {named(rels, 10)})"
    quoted = f"\n{diff}" if len(diff) <= 8_000 else " The diff is in `diff`."
    return success(
        f"{head}. {step}{quoted}",
        **fields,
        before=before,
        after=after,
        diff=diff,
        size_before=None,
        size_after=None,
        **extra,
    )


def _decoded(data: bytes | None) -> str | None:
    if data is None:
        return None
    try:
        return decode(data)[0]
    except BinaryContent:
        return None


def _text_now(ctx: ToolContext, path: str, view: str) -> str | None:
    """The text at ``path`` when it is the text ``view`` names (else None)."""
    try:
        text = _decoded(ctx.read_raw(path).data)
    except (ToolError, OSError):
        return None
    return text if text is not None and text_hash(to_view(text)) == view else None


# -- taking one back ----------------------------------------------------------------------


@dataclass(frozen=True)
class Back:
    """What taking back one move or deletion does, in order."""

    entry: TreeEntry
    ops: tuple[Move | Removal | Restoration, ...]


def _conflict(e: TreeEntry, who: str, why: str, **fields: object) -> ToolError:
    return ToolError(
        ErrorCode.CONFLICT,
        f"{who[0].upper()}{who[1:]} (change {e.id}) cannot be taken back: {why}; nothing was "
        "changed. Move or delete what is in the way first (or ask the user), then retry.",
        path=path_of(e),
        version=e.id,
        **fields,
    )


def plan_back(
    ctx: ToolContext, store: History, e: TreeEntry, *, acting: str, tool: str, force: bool
) -> Back:
    """What taking back ``e`` does, checked now (``conflict``, ``stale``, ``no_history``,
    and the rules of today: ``denied``, ``outside_workspace``, ``protected``...)."""
    who = f"the {e.tool} by {whose(ctx, e)} at {clock(e.time)}"
    for p in (path_of(e), *([e.destination] if isinstance(e, Moved) else [])):
        ctx.resolve(p)  # today's rules: a path denied or outside the roots now is refused
    if isinstance(e, Moved):
        return Back(e, _move_back(ctx, store, e, who, acting=acting, tool=tool, force=force))
    if not e.back:
        return Back(e, (_make_again(ctx, store, e, who, acting=acting, tool=tool),))
    return Back(e, (_delete_again(ctx, e, who, acting=acting, tool=tool, force=force),))


def _move_back(
    ctx: ToolContext, store: History, e: Moved, who: str, *, acting: str, tool: str, force: bool
) -> tuple[Move | Restoration, ...]:
    if not os.path.lexists(e.destination):
        raise _conflict(e, who, f"{e.destination} is no longer there (moved or deleted since)")
    if os.path.isdir(e.destination) != e.folder:
        raise _conflict(
            e, who, f"{e.destination} is no longer the {'folder' if e.folder else 'file'} it moved"
        )
    if os.path.lexists(e.source):
        raise _conflict(e, who, f"something is at {e.source} again")
    back = dataclasses.replace(
        plan(ctx, e.destination, e.source, acting, tool),
        cleanup=tuple(sorted(e.made, key=len, reverse=True)),
    )
    if not e.replaced_existed:
        return (back,)
    if e.replaced is None or not store.has(e.replaced):
        if not force:
            raise ToolError(
                ErrorCode.NO_HISTORY,
                f"The file {who} replaced at {e.destination} is no longer kept, so taking "
                "it back would leave nothing there; nothing was changed. To move it back "
                "anyway, call undo again with force: true.",
                path=e.destination,
                version=e.id,
                can_force=True,
            )
        return (back,)
    again = Restoration(
        e.destination,
        False,
        (
            Kept(
                e.destination,
                e.replaced,
                e.replaced_size,
                e.replaced_mode,
                e.replaced_view,
                e.replaced,
            ),
        ),
        (),
        tool,
        acting,
        store.get_bytes,
    )
    return (back, again)


def _make_again(
    ctx: ToolContext, store: History, e: Removed, who: str, *, acting: str, tool: str
) -> Restoration:
    taken = [e.under(f.path) for f in e.files if os.path.lexists(e.under(f.path))]
    if e.folder and os.path.lexists(e.path) and not os.path.isdir(e.path):
        taken.insert(0, e.path)
    if taken:
        raise _conflict(
            e,
            who,
            f"{named(taken, 5)} {'is' if len(taken) == 1 else 'are'} there again",
            taken=taken[:100],
        )
    lost = [e.under(f.path) for f in e.files if not store.has(f.key)]
    if lost:
        raise ToolError(
            ErrorCode.NO_HISTORY,
            f"What {who} deleted is no longer all kept ({named(lost, 5)}: evicted by the "
            "history budget), so it cannot be made again; nothing was changed.",
            path=e.path,
            version=e.id,
            restorable=False,
        )
    folders = [e.path, *(e.under(d) for d in e.folders)] if e.folder else []
    return Restoration(
        e.path,
        e.folder,
        tuple(_kept(e, f) for f in e.files),
        tuple(folders),
        tool,
        acting,
        store.get_bytes,
        lines=e.lines,
    )


def _kept(e: Removed, f: KeptFile) -> Kept:
    return Kept(e.under(f.path), f.key or "", f.size, f.mode, f.view, f.key, 0)


def _delete_again(
    ctx: ToolContext, e: Removed, who: str, *, acting: str, tool: str, force: bool
) -> Removal:
    if not os.path.lexists(e.path):
        raise ToolError(
            ErrorCode.NO_CHANGE,
            f"{e.path} is gone already; there is nothing to take back of {who}.",
            path=e.path,
        )
    made = {e.under(f.path): f for f in e.files}
    files: list[Kept] = []
    changed: list[str] = []
    folders: list[str] = []
    if e.folder:
        found = ops.walk(e.path, ctx.settings.max_delete_files)
        if found.more or found.others:
            raise _conflict(e, who, f"{e.path} holds more now than was made again")
        extra = [p for p, _ in found.files if p not in made]
        if extra and not force:
            raise ToolError(
                ErrorCode.STALE,
                f"Files were added to {e.path} since {who} ({named(extra, 5)}), so deleting "
                "it again would take them too; nothing was changed. Call undo again with "
                "force: true to delete them as well (kept in history).",
                path=e.path,
                version=e.id,
                can_force=True,
            )
        on_disk = [(p, st) for p, st in found.files]
        folders = [e.path, *found.folders]
    else:
        on_disk = [(e.path, os.lstat(e.path))]
    for p, st in on_disk:
        digest = content_hash(ctx.read_raw(p).data)
        f = made.get(p)
        if f is not None and f.key != digest:
            changed.append(p)
        files.append(Kept(p, digest, st.st_size, st.st_mode & 0o7777))
    if changed and not force:
        raise ToolError(
            ErrorCode.STALE,
            f"{named(changed, 5)} changed since {who}, so deleting again would throw that "
            "newer work away; nothing was changed. Read them to see what is there now. To "
            "delete anyway, call undo again with force: true (what is there now is kept in "
            "history).",
            path=e.path,
            version=e.id,
            can_force=True,
        )
    return Removal(e.path, e.folder, tuple(files), tuple(folders), tool, acting)


async def apply_back(ctx: ToolContext, back: Back, *, locked: bool = False) -> list[TreeApplied]:
    """Carry out ``back``'s steps through the kernel (``locked``: the caller holds the
    locks of the paths already); a step that fails after others ran has those undone
    again (best effort) before the refusal is raised."""
    if locked:
        return await _apply(ctx, back)
    async with mutation.hold_tree(ctx, paths_of_ops(back.ops)):
        return await _apply(ctx, back)


async def _apply(ctx: ToolContext, back: Back) -> list[TreeApplied]:
    done: list[TreeApplied] = []
    for op in back.ops:
        try:
            done.append(await _run(ctx, op))
        except ToolError:
            if done and isinstance(back.ops[0], Move):
                first = back.ops[0]
                again = plan(ctx, first.destination, first.source, first.session, first.tool)
                await mutation.move(ctx, again)
            raise
    return done


async def _run(ctx: ToolContext, op: Move | Removal | Restoration) -> TreeApplied:
    if isinstance(op, Move):
        return await mutation.move(ctx, op)
    if isinstance(op, Removal):
        return await mutation.remove_tree(ctx, op)
    return await mutation.restore_tree(ctx, op)


def paths_of_ops(steps: Sequence[Move | Removal | Restoration]) -> list[str]:
    out: list[str] = []
    for op in steps:
        if isinstance(op, Move):
            out += [op.source, op.destination]
        else:
            out += [op.path, *(f.path for f in op.files)]
    return out


async def undo_entry(
    ctx: ToolContext, store: History, e: TreeEntry, *, session: str | None, force: bool
) -> Result:
    """``undo`` of a move or a deletion (its latest change of what it touched)."""
    acting = session or e.session
    who = f"the {e.tool} by {whose(ctx, e)} at {clock(e.time)}"
    back = plan_back(ctx, store, e, acting=acting, tool="undo", force=force)
    done = await apply_back(ctx, back)
    ids = [d.change_id for d in done if d.change_id is not None]
    notes = " ".join(d.note for d in done if d.note)
    if isinstance(e, Moved):
        what = f"moved {e.destination} back to {e.source}"
        if len(back.ops) > 1:
            what += f" and made the file it replaced at {e.destination} again"
        typ = "move"
    elif e.back:
        what, typ = f"deleted {e.path} again (kept in history)", "delete"
    else:
        files = ops.plural(len(e.files), "file")
        what = (
            f"made {e.path} again ({files}, byte for byte)"
            if e.folder
            else f"made {e.path} again, byte for byte"
        )
        typ = "restore"
    message = f"Undid {who}: {what}. Call undo again to redo it."
    if notes:
        message += " " + notes
    return success(
        message,
        path=path_of(e),
        type=typ,
        undone=e.id,
        session=acting,
        change_ids=ids,
        via=done[-1].via if done else "disk",
        on_disk=True,
        time=iso(e.time),
    )


def refuse_after(ctx: ToolContext, e: TreeEntry, later: Sequence[object]) -> ToolError:
    """``conflict`` for a move or deletion that later moves or deletions build on."""
    who = f"the {e.tool} by {whose(ctx, e)} at {clock(e.time)}"
    ids = [getattr(x, "id", "") for x in later]
    return _conflict(
        e,
        who,
        f"later moves or deletions changed what it changed ({named(ids, 5)}): take those "
        "back first, newest first",
        later=ids,
    )


__all__ = [
    "Back",
    "apply_back",
    "change_answer",
    "current",
    "describe",
    "item_fields",
    "kind",
    "path_of",
    "paths_of_ops",
    "plan_back",
    "refuse_after",
    "restorable",
    "undo_entry",
]

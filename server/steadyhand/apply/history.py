"""Recording history around the world: the content a change replaces is kept first.

:class:`HistoryWorld` wraps whatever world the server uses; every change any tool sends
through ``ctx.world.apply`` (edit, write, undo, rewind, and tools added later) has the
file's previous content saved before it is delegated, and is entered in the index once
it succeeded. Deleting a file (an undo of a creation) is kept and recorded the same way.

An undo or a rewind may replace content that exists nowhere else (a forced undo over the
user's newer work): such a change is refused, the file untouched, when that content
cannot be kept. Once a change is handed inward it is finished and recorded even if its
request is cancelled meanwhile (:func:`run_to_end`).
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import logging
import os
import time
from collections.abc import Sequence
from typing import TypeVar

from steadyhand.context import ToolContext, WorldLayer
from steadyhand.documents.snapshot import Snapshot, from_disk
from steadyhand.fs.reader import read_all
from steadyhand.fs.state_dir import state_dir
from steadyhand.history.store import (
    Entry,
    HistoryStore,
    KeptFile,
    Moved,
    Removed,
    Version,
    new_id,
)
from steadyhand.history.stores import History
from steadyhand.protocol.errors import ErrorCode, ToolError
from steadyhand.runtime.tasks import run_to_end
from steadyhand.state.hashing import content_hash, text_hash
from steadyhand.text.diff import splices_diff, stat, whole_change, whole_diff
from steadyhand.text.encoding import UTF8, BinaryContent, Encoding, decode
from steadyhand.text.lines import count_lines, to_view
from steadyhand.text.splices import Splice, apply_splices
from steadyhand.world import (
    Applied,
    Change,
    Kept,
    Move,
    Removal,
    Restoration,
    TreeApplied,
)

log = logging.getLogger(__name__)

_THREAD_CHARS = 1 << 20
#: Tools whose changes are refused when the content they replace cannot be kept: they
#: may replace work that is in no other version (a forced undo, a rewind).
MUST_KEEP = frozenset({"undo", "rewind"})

T = TypeVar("T")


def encoding_from_label(label: str) -> Encoding:
    if label == "utf-8-sig":
        return Encoding("utf-8", bom=True)
    if label.startswith("utf-16"):
        return Encoding(label, bom=True)
    if label == "latin-1":
        return Encoding("latin-1")
    return UTF8


def configure(ctx: ToolContext, folders: list[str]) -> None:
    """Point ``ctx.history`` at the stores for these settings and folders (the workspace
    folders and allowed paths): one store per folder, so that a folder added or removed
    leaves the history of the others as it was (:mod:`steadyhand.history.stores`)."""
    s = ctx.settings
    cur = ctx.history
    if cur is not None:
        cur.flush()  # entries still waiting go to the stores they were meant for
    if not s.history:
        ctx.history = None
        return
    base = os.path.abspath(os.path.expanduser(s.history_dir) if s.history_dir else state_dir())
    reuse = {st.root: st for st in cur.stores} if cur is not None else {}
    ctx.history = History(base, folders, s.history_max_bytes, s.history_max_file_bytes, reuse)
    if cur is None or [st.root for st in cur.stores] != [st.root for st in ctx.history.stores]:
        log.info("history stores: %s", ", ".join(st.root for st in ctx.history.stores))


async def _keep(
    store: HistoryStore, snap: Snapshot | None, *, tool: str, required: bool
) -> tuple[str | None, str]:
    """Save the content a change replaces; returns (key or None, a note if not kept).
    ``required``: refuse the change (ToolError) rather than lose that content."""
    if snap is None:
        return None, ""
    known = _known_key(snap)
    try:
        if len(snap.raw) > _THREAD_CHARS:
            key = await asyncio.to_thread(store.put_text, snap.raw, known)
            store.compress_soon()  # back on the event loop: after the answer
        else:
            key = store.put_text(snap.raw, known)
    except OSError as exc:
        if required:
            raise _cannot_keep(store, snap, tool, exc) from exc
        log.warning("history: could not keep the previous content of %s: %s", snap.path, exc)
        return None, (f"(The previous content could not be kept for undo: {exc.strerror or exc}.)")
    if key is None:
        if required:
            raise _cannot_keep(store, snap, tool, None)
        return None, "(The previous content is too large to keep for undo.)"
    return key, ""


def _known_key(snap: Snapshot) -> str | None:
    """The blob key of a snapshot's text when its hash is that key: the hash of its text
    as UTF-8, when that is what it was read as."""
    return snap.hash if snap.source == "buffer" or snap.encoding == UTF8 else None


def _keep_after(store: HistoryStore, after: Snapshot | None) -> str | None:
    """Keep the content a change left (so that the change can be taken back on its own
    after later ones); its key, or None when it cannot be kept. Never fails the change."""
    if after is None:
        return None
    try:
        return store.put_text(after.raw, _known_key(after))
    except OSError as exc:
        log.warning("history: could not keep the new content of %s: %s", after.path, exc)
        return None


def _cannot_keep(store: HistoryStore, snap: Snapshot, tool: str, exc: OSError | None) -> ToolError:
    path = snap.path
    if exc is not None:
        return ToolError(
            ErrorCode.IO_ERROR,
            f"Nothing was changed: what {path} holds now could not be kept in history "
            f"({exc.strerror or exc}), so the {tool} would lose it. Ask the user to free "
            f"space in, or fix the permissions of, {store.root}; then retry.",
            path=path,
        )
    size = len(snap.raw.encode("utf-8", "surrogatepass"))
    setting, limit = "historyMaxFileBytes", store.max_file_bytes
    if size <= limit:
        setting, limit = "historyMaxBytes", store.max_bytes
    return ToolError(
        ErrorCode.TOO_LARGE,
        f"Nothing was changed: what {path} holds now ({size:,} bytes) is over the {setting} "
        f"setting ({limit:,} bytes), so it cannot be kept in history and the {tool} would "
        f"lose it. Ask the user to raise {setting} (or to move the file aside, keeping "
        "its content), then retry.",
        path=path,
    )


def _record(
    store: HistoryStore,
    path: str,
    before: Snapshot | None,
    key: str | None,
    after: Snapshot | None,
    *,
    tool: str,
    session: str,
    instance: str,
    splices: Sequence[Splice] | None = None,
    exact: bool = False,
    label: str | None = None,
) -> None:
    if before is not None and after is not None and splices:
        # a change at known places: count the lines of a diff around them only
        new_view = after.view
        # ``exact``: the world stored the very text the tool made from the splices
        planned = exact or new_view == apply_splices(before.view, splices)
        if planned:
            diff = splices_diff(before.view, new_view, splices, name=path)
        else:  # the editor changed more than the splices (a formatter on save)
            diff = whole_diff(before.view, new_view, name=path)
        ds = stat(diff)
        added, removed = ds.added, ds.removed
    elif before is None or after is None:  # a creation or a deletion: every line counts
        added = count_lines(after.view) if after is not None else 0
        removed = count_lines(before.view) if before is not None else 0
    elif len(before.raw) > _THREAD_CHARS:
        added = removed = 0
    else:  # the counts of the diff a write just made (kept by whole_change), or new ones
        ds = whole_change(before.view, after.view, name=path).stat
        added, removed = ds.added, ds.removed
    version = Version(
        id=new_id(),
        path=path,
        time=time.time(),
        session=session,
        tool=tool,
        existed=before is not None,
        before=key,
        before_view=before.view_hash if before is not None else None,
        before_size=before.size if before is not None else 0,
        encoding=label or _label(before, after),
        after_view=after.view_hash if after is not None else None,
        after_size=after.size if after is not None else 0,
        added=added,
        removed=removed,
        after=_keep_after(store, after),
        instance=instance,
        after_encoding=_after_label(after),
    )
    try:
        store.append(version)
    except OSError as exc:
        log.warning("history: could not record a change to %s: %s", path, exc)


def _after_label(after: Snapshot | None) -> str | None:
    """The encoding the change left the file in, when it is known: for the disk (an
    editor buffer holds text only; the editor decides how it is saved)."""
    if after is None or after.source == "buffer":
        return None
    return after.encoding.label


def _label(before: Snapshot | None, after: Snapshot | None) -> str:
    snap = before if before is not None else after
    return snap.encoding.label if snap is not None else "utf-8"


def _disk_label(before: Snapshot | None, *, links_ok: bool) -> str | None:
    """The encoding a restore of ``before`` on disk is to use, when it is not the
    snapshot's own: an editor buffer holds text, so for a change made there it is the
    encoding of the file on disk, read before the change (the editor may save it
    differently)."""
    if before is None or before.source != "buffer":
        return None
    try:
        return from_disk(before.path, links_ok=links_ok).encoding.label
    except (ToolError, OSError):
        return None  # not on disk (a new buffer), or not text: the buffer's


class HistoryWorld(WorldLayer):
    """A world that keeps every version it replaces (see the module docstring)."""

    async def apply(self, change: Change) -> Applied:
        history = self.ctx.history
        if history is None:
            return await self.inner.apply(change)
        store = history.for_path(change.path)
        required = change.tool in MUST_KEEP
        key, note = await _keep(store, change.before, tool=change.tool, required=required)
        label = _disk_label(change.before, links_ok=self.ctx.roots.allow_hard_links)
        applied = await run_to_end(self._apply(store, change, key, label))
        if note:
            return dataclasses.replace(applied, note=f"{applied.note} {note}".strip())
        return applied

    async def _apply(
        self, store: HistoryStore, change: Change, key: str | None, label: str | None
    ) -> Applied:
        applied = await self.inner.apply(change)
        # The entry (with its line counts) is written just after the answer goes out.
        store.defer(
            functools.partial(
                _record,
                store,
                change.path,
                change.before,
                key,
                applied.snapshot,
                tool=change.tool,
                session=change.session,
                instance=self.ctx.sessions.instance,
                splices=change.splices,
                exact=applied.snapshot.raw is change.new_raw,
                label=label,
            )
        )
        return applied

    async def delete(self, path: str, before: Snapshot, *, tool: str, session: str) -> Applied:
        history = self.ctx.history
        if history is None:
            return await self.inner.delete(path, before, tool=tool, session=session)
        store = history.for_path(path)
        # A deletion always replaces content: it is refused unless that content is kept.
        key, _ = await _keep(store, before, tool=tool, required=True)
        return await run_to_end(self._delete(store, path, before, key, tool=tool, session=session))

    async def _delete(
        self,
        store: HistoryStore,
        path: str,
        before: Snapshot,
        key: str | None,
        *,
        tool: str,
        session: str,
    ) -> Applied:
        label = _disk_label(before, links_ok=self.ctx.roots.allow_hard_links)  # still there
        applied = await self.inner.delete(path, before, tool=tool, session=session)
        _record(
            store,
            path,
            before,
            key,
            None,
            tool=tool,
            session=session,
            instance=self.ctx.sessions.instance,
            label=label,
        )
        return Applied(applied.via, applied.snapshot, applied.on_disk)

    # -- changes to the tree ------------------------------------------------------------

    async def move(self, move: Move) -> TreeApplied:
        """Keep the file a move replaces (``overwrite``) first, then move, then record the
        move (at once: its id is in the answer)."""
        history = self.ctx.history
        if history is None:
            return await self.inner.move(move)
        store = history.for_path(move.source)
        replaced: Kept | None = None
        if move.replaced is not None:
            replaced = _keep_file(self.ctx, store, move.replaced, within=move.destination)
            move = dataclasses.replace(move, replaced=replaced)
        applied = await run_to_end(self.inner.move(move))
        moved = move.moved
        entry = Moved(
            id=new_id(),
            source=move.source,
            destination=move.destination,
            time=time.time(),
            session=move.session,
            tool=move.tool,
            folder=move.folder,
            files=move.count,
            view=moved.view if moved is not None else None,
            size=moved.size if moved is not None else 0,
            replaced=replaced.key if replaced is not None else None,
            replaced_existed=replaced is not None,
            replaced_view=replaced.view if replaced is not None else None,
            replaced_size=replaced.size if replaced is not None else 0,
            replaced_mode=replaced.mode if replaced is not None else 0,
            instance=self.ctx.sessions.instance,
            made=applied.made,
        )
        return dataclasses.replace(applied, change_id=_append(store, entry))

    async def remove(self, removal: Removal) -> TreeApplied:
        """Keep every file's bytes first (refused, nothing deleted, when one cannot be
        kept), then delete, then record the deletion."""
        history = self.ctx.history
        if history is None:
            return await self.inner.remove(removal)
        store = history.for_path(removal.path)
        files = tuple(_keep_file(self.ctx, store, f, within=removal.path) for f in removal.files)
        removal = dataclasses.replace(removal, files=files, load=history.get_bytes)
        applied = await run_to_end(self.inner.remove(removal))
        entry = _removed(self.ctx, removal.path, removal, back=False)
        return dataclasses.replace(applied, change_id=_append(store, entry))

    async def restore(self, restoration: Restoration) -> TreeApplied:
        """Make the files again, then record that (its undo deletes them again)."""
        history = self.ctx.history
        applied = await run_to_end(self.inner.restore(restoration))
        if history is None:
            return applied
        store = history.for_path(restoration.path)
        entry = _removed(self.ctx, restoration.path, restoration, back=True)
        return dataclasses.replace(applied, change_id=_append(store, entry))


def _keep_file(ctx: ToolContext, store: HistoryStore, f: Kept, *, within: str) -> Kept:
    """Read ``f``'s file and keep its bytes as they are; ``f`` with its hash, key, size,
    permission bits and the hash of its text. Refused (``too_large``, ``io_error``,
    ``stale`` when it is no longer what was checked), nothing changed, when they cannot
    be kept: a deletion or a replacing move never loses a byte history could not keep."""
    raw = read_all(f.path, links_ok=ctx.roots.allow_hard_links)
    data = raw.data
    digest = content_hash(data)
    if f.hash and digest != f.hash:
        raise ToolError(
            ErrorCode.STALE,
            f"{f.path} changed since it was checked, so nothing was changed. Look at it "
            "again (read it), then retry.",
            path=f.path,
            refreshed=False,
        )
    try:
        key = store.put_bytes(data)
    except OSError as exc:
        raise ToolError(
            ErrorCode.IO_ERROR,
            f"Nothing was changed: {f.path} could not be kept in history ({exc.strerror or exc}), "
            f"so changing {within} would lose it. Ask the user to free space in, or fix the "
            f"permissions of, {store.root}; then retry.",
            path=f.path,
        ) from exc
    if key is None:
        setting, limit = "historyMaxFileBytes", store.max_file_bytes
        if len(data) <= limit:
            setting, limit = "historyMaxBytes", store.max_bytes
        raise ToolError(
            ErrorCode.TOO_LARGE,
            f"Nothing was changed: {f.path} ({len(data):,} bytes) is over the {setting} "
            f"setting ({limit:,} bytes), so it cannot be kept in history and changing "
            f"{within} would lose it. Ask the user to raise {setting}, or to do it "
            "themselves.",
            path=f.path,
        )
    view: str | None = None
    lines = 0
    try:
        text, _ = decode(data)
    except BinaryContent:
        pass
    else:
        lf = to_view(text)
        view, lines = text_hash(lf), count_lines(lf)
    mode = raw.st.st_mode & 0o7777
    return dataclasses.replace(
        f, hash=digest, key=key, size=len(data), mode=mode, view=view, lines=lines
    )


def _removed(ctx: ToolContext, path: str, what: Removal | Restoration, *, back: bool) -> Removed:
    kept = [
        KeptFile(
            os.path.relpath(f.path, path) if f.path != path else "", f.key, f.size, f.mode, f.view
        )
        for f in what.files
    ]
    lines = what.lines if isinstance(what, Restoration) else sum(f.lines for f in what.files)
    return Removed(
        id=new_id(),
        path=path,
        time=time.time(),
        session=what.session,
        tool=what.tool,
        folder=what.folder,
        files=tuple(kept),
        folders=tuple(os.path.relpath(d, path) for d in what.folders if d != path),
        back=back,
        lines=lines,
        instance=ctx.sessions.instance,
    )


def _append(store: HistoryStore, entry: Entry) -> str | None:
    """Record ``entry`` now; the id it was written under (None: it could not be)."""
    try:
        return store.append(entry).id
    except OSError as exc:
        log.warning("history: could not record a change to the tree: %s", exc)
        return None


__all__ = [
    "MUST_KEEP",
    "HistoryWorld",
    "configure",
    "encoding_from_label",
]

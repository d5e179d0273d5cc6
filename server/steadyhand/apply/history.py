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
import functools
import logging
import os
import time
from collections.abc import Sequence
from typing import TypeVar

from steadyhand.context import ToolContext, WorldLayer
from steadyhand.documents.snapshot import Snapshot, from_disk
from steadyhand.fs.state_dir import state_dir
from steadyhand.history.store import HistoryStore, Version, new_id
from steadyhand.history.stores import History
from steadyhand.protocol.errors import ErrorCode, ToolError
from steadyhand.runtime.tasks import run_to_end
from steadyhand.text.diff import splices_diff, stat, whole_diff
from steadyhand.text.encoding import UTF8, Encoding
from steadyhand.text.lines import count_lines
from steadyhand.text.splices import Splice, apply_splices
from steadyhand.world import Applied, Change

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
    else:  # the diff a write just showed (kept by whole_diff), or a new one
        ds = stat(whole_diff(before.view, after.view, name=path))
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
            return Applied(
                applied.via,
                applied.snapshot,
                applied.on_disk,
                f"{applied.note} {note}".strip(),
                applied.findings,
            )
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


__all__ = [
    "MUST_KEEP",
    "HistoryWorld",
    "configure",
    "encoding_from_label",
]

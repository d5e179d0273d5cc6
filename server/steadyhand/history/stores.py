"""History across folders: one store per folder, so a change stays undoable whatever
folders are added to or removed from the workspace later.

A change is recorded in the store of the folder that holds the file (the innermost one,
when folders are nested); a path under no folder goes to a store of its own. Reading the
history of a path looks in every store whose folder holds it, and also in the stores an
earlier version of Steadyhand kept for a whole set of folders ("legacy" stores, found by
the folders their ``meta.json`` names), read as they are and never written: their
versions, blobs and checkpoints stay usable. Versions from several stores are merged by
time. A checkpoint is written to every folder's store; a rewind takes, in each store, the
changes after that checkpoint (after its time, in a store that has no copy of it: a
folder added since), and refuses when a store compacted its index past the checkpoint.

Each store is a :class:`~steadyhand.history.store.HistoryStore` (its layout, budget and
sharing between servers are described there); ``historyMaxBytes`` bounds each one.
"""

from __future__ import annotations

import contextlib
import heapq
import json
import logging
import os
import time
from collections.abc import Iterable, Mapping, Sequence

from steadyhand.fs.checked_open import open_regular
from steadyhand.history.store import (
    Checkpoint,
    Entry,
    HistoryStore,
    Owner,
    Version,
    id_matches,
    new_id,
    workspace_key,
)

log = logging.getLogger(__name__)

#: A store's ``meta.json`` is a few hundred bytes; more than this is not one.
_META_MAX_BYTES = 1 << 20


def _read_meta(store_dir: str) -> object:
    """A store folder's ``meta.json`` (None if it is missing, not a regular file, too
    large, or not JSON). Opened like the store's other files: never a FIFO or device."""
    try:
        with os.fdopen(open_regular(os.path.join(store_dir, "meta.json"), os.O_RDONLY), "rb") as f:
            data = f.read(_META_MAX_BYTES + 1)
        if len(data) > _META_MAX_BYTES:
            return None
        return json.loads(data)
    except (OSError, ValueError, RecursionError):  # RecursionError: nested past any meta
        return None


def _holds(folder: str, path: str) -> bool:
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def legacy_stores(base: str, folders: Iterable[str]) -> list[str]:
    """The store folders under ``base`` that an earlier version kept for a set of several
    folders, one of which is among ``folders`` (their ``meta.json`` says which)."""
    wanted = {os.path.realpath(f) for f in folders}
    found: list[str] = []
    try:
        entries = list(os.scandir(base))
    except OSError:
        return found
    for entry in entries:
        if not entry.is_dir(follow_symlinks=False):
            continue
        meta = _read_meta(entry.path)
        listed = meta.get("workspace") if isinstance(meta, dict) else None
        if not isinstance(listed, list) or len(listed) < 2:
            continue  # one folder's store (the current layout), or unreadable
        real = {os.path.realpath(x) for x in listed if isinstance(x, str)}
        if real & wanted:
            found.append(entry.path)
    return sorted(found)


class History:
    """The history stores of a set of folders (see the module docstring)."""

    def __init__(
        self,
        base: str,
        folders: Sequence[str],
        max_bytes: int,
        max_file_bytes: int,
        reuse: Mapping[str, HistoryStore] | None = None,
    ) -> None:
        self.root = base
        self.max_bytes, self.max_file_bytes = max_bytes, max_file_bytes
        known = dict(reuse or {})

        def store(names: list[str]) -> HistoryStore:
            root = os.path.join(base, workspace_key(names))
            kept = known.get(root)
            if kept is not None:
                kept.resize(max_bytes, max_file_bytes)
                return kept
            return HistoryStore(root, max_bytes, max_file_bytes, tuple(names))

        #: One store per folder, by folder (real paths), in the order given.
        self.by_folder: dict[str, HistoryStore] = {}
        for folder in dict.fromkeys(os.path.realpath(f) for f in folders):
            self.by_folder[folder] = store([folder])
        #: For paths under no folder.
        self.elsewhere = store([])
        #: Stores kept by an earlier version for several folders at once: read only.
        self.legacy = [
            HistoryStore(path, max_bytes, max_file_bytes) for path in legacy_stores(base, folders)
        ]

    # -- which store ----------------------------------------------------------------

    @property
    def stores(self) -> list[HistoryStore]:
        """The stores changes are recorded in (each folder's, and the one for elsewhere)."""
        return [*self.by_folder.values(), self.elsewhere]

    def _all(self) -> list[HistoryStore]:
        return [*self.stores, *self.legacy]

    def for_path(self, path: str) -> HistoryStore:
        """The store a change to ``path`` is recorded in: the innermost folder's."""
        best: str | None = None
        for folder in self.by_folder:
            if _holds(folder, path) and (best is None or len(folder) > len(best)):
                best = folder
        return self.by_folder[best] if best is not None else self.elsewhere

    def _reading(self, path: str) -> list[HistoryStore]:
        """Every store that may hold changes to ``path``."""
        out = [s for f, s in self.by_folder.items() if _holds(f, path)]
        out.append(self.elsewhere)
        out += [s for s in self.legacy if any(_holds(f, path) for f in _folders(s))]
        return out

    # -- reading --------------------------------------------------------------------

    def refresh(self) -> None:
        """Read what was appended to every store (OSError: a store cannot be read). A
        legacy store that cannot be read is left out, with a log line."""
        for s in self.stores:
            s.refresh()
        for s in self.legacy:
            try:
                s.refresh()
            except OSError as exc:
                log.warning("history: cannot read the earlier store %s: %s", s.root, exc)

    def flush(self) -> None:
        for s in self.stores:
            s.flush()

    def resize(self, max_bytes: int, max_file_bytes: int) -> None:
        self.max_bytes, self.max_file_bytes = max_bytes, max_file_bytes
        for s in self._all():
            s.resize(max_bytes, max_file_bytes)

    @property
    def entries(self) -> list[Entry]:
        """Every change and checkpoint of every store, oldest first (a checkpoint written
        to several stores counted once: the same in every field, not only the same id,
        which lines an earlier version wrote may share). Positions in it hold for one
        look only."""
        merged = heapq.merge(*(s.entries for s in self._all()), key=lambda e: e.time)
        seen: set[Checkpoint] = set()
        out: list[Entry] = []
        for e in merged:
            if isinstance(e, Checkpoint):
                if e in seen:
                    continue
                seen.add(e)
            out.append(e)
        return out

    def named(self, given: str) -> list[Entry]:
        """Every entry of every store that ``given`` names, by its whole id or an
        abbreviation of it, oldest first (a checkpoint in several stores once). More than
        one means ``given`` is ambiguous: the caller refuses it, never picks one."""
        return [e for e in self.entries if id_matches(e.id, given)]

    def versions(self, path: str, who: Owner | None = None) -> list[Version]:
        """The changes to ``path``, oldest first (only ``who``'s, if given)."""
        return _by_time(s.versions(path, who) for s in self._reading(path))

    def last_change(self, path: str, who: Owner | None = None) -> Version | None:
        found = self.versions(path, who)
        return found[-1] if found else None

    def has(self, key: str | None) -> bool:
        return key is not None and any(s.has(key) for s in self._all())

    def get_text(self, key: str) -> str | None:
        """The text kept under ``key`` in any store, None if none has it intact."""
        for s in self._all():
            if s.has(key):
                text = s.get_text(key)
                if text is not None:
                    return text
        return None

    # -- checkpoints ------------------------------------------------------------------

    def add_checkpoint(self, who: Owner, label: str) -> Checkpoint:
        """A checkpoint, written to every folder's store (and to the one for paths under
        no folder, once that one is in use), under one id that none of the stores holds:
        their index locks are taken together (always in the same order, so two servers
        never wait for each other) while the id is chosen and written."""
        targets = list(self.by_folder.values())
        if not targets or os.path.isdir(self.elsewhere.root):
            targets.append(self.elsewhere)
        targets.sort(key=lambda s: s.root)
        for s in targets:
            s.prepare()
        with contextlib.ExitStack() as held:
            for s in targets:
                held.enter_context(s.turn())
            everywhere = [*targets, *self.legacy]
            cp_id = new_id("cp-", lambda i: any(s.taken(i) for s in everywhere))
            cp = Checkpoint(cp_id, who.session, label, time.time(), who.instance)
            for s in targets:
                s.write_locked(cp)
        return cp

    def checkpoints(self, who: Owner) -> list[Checkpoint]:
        """``who``'s checkpoints, oldest first (one written to several stores once)."""
        seen: dict[Checkpoint, None] = {}
        for s in self._all():
            for cp in s.checkpoints(who):
                seen.setdefault(cp, None)
        return sorted(seen, key=lambda c: c.time)

    def find_checkpoint(self, who: Owner, name: str) -> list[Checkpoint]:
        """The checkpoints of ``who`` called ``name``: those with that id (one, but lines
        an earlier version wrote may share an id), else the latest with that label."""
        mine = self.checkpoints(who)
        by_id = [cp for cp in mine if cp.id == name]
        if by_id:
            return by_id
        labelled = [cp for cp in mine if cp.label == name]
        return labelled[-1:]

    def changes_since(self, cp: Checkpoint) -> list[Version] | None:
        """Every change recorded after ``cp``, oldest first; None when a store compacted
        its index past the checkpoint (changes after it may be gone)."""
        parts: list[list[Version]] = []
        for s in self._all():
            at = s.position(cp)
            if at is not None:
                parts.append(s.changes_since(at))
            elif s.compacted_through >= cp.time:
                return None
            else:  # a folder added since the checkpoint: its changes after that time
                parts.append([v for v in s.changes_since(-1) if v.time >= cp.time])
        return _by_time(parts)


def _folders(store: HistoryStore) -> tuple[str, ...]:
    """The folders a store belongs to (for a legacy store, from its ``meta.json``)."""
    if store.folders:
        return store.folders
    meta = _read_meta(store.root)
    listed = meta.get("workspace") if isinstance(meta, dict) else None
    if isinstance(listed, list):
        store.folders = tuple(os.path.realpath(x) for x in listed if isinstance(x, str))
    return store.folders


def _by_time(parts: Iterable[list[Version]]) -> list[Version]:
    """Versions from several stores (each in order) as one list, oldest first."""
    return list(heapq.merge(*parts, key=lambda v: v.time))

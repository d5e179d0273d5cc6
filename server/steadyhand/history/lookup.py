"""Looking changes up in the history store: by id, the ones that came after, the text a
change left, and the listing of a workspace's changes with the checkpoints among them.

The text a change left is kept under the change's ``after`` key. Changes recorded before
that key existed, or whose blob was evicted, may still find it as the text the file's next
change started from (when that change started from exactly what this one left).
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from steadyhand.history.store import Checkpoint, Entry, Owner, Version, owner_of
from steadyhand.history.stores import History


def find_versions(store: History, given: str, path: str | None = None) -> list[Version]:
    """The changes ``given`` names (by their whole id or an abbreviation of it), oldest
    first; only those to ``path``, if given. One is the change; more than one means the
    id is ambiguous, and the caller refuses it: a change is never guessed."""
    return [
        e for e in store.named(given) if isinstance(e, Version) and (path is None or e.path == path)
    ]


def later_changes(store: History, v: Version) -> list[Version]:
    """The changes to ``v``'s file recorded after ``v``, oldest first."""
    out: list[Version] = []
    seen = False
    for e in store.entries:
        if not isinstance(e, Version) or e.path != v.path:
            continue
        if seen:
            out.append(e)
        elif e == v:
            seen = True
    return out


def after_key(store: History, v: Version, following: Version | None) -> str | None:
    """Where the text ``v`` left is kept (a key whose blob is there), else None.
    ``following``: the next change to the file, if any."""
    if v.after_view is None:
        return None
    if v.after is not None and store.has(v.after):
        return v.after
    if (
        following is not None
        and following.before_view == v.after_view
        and store.has(following.before)
    ):
        return following.before
    return None


def before_kept(store: History, v: Version) -> bool:
    """Whether the text from before ``v`` can be had (or there was none: a creation)."""
    return not v.existed or store.has(v.before)


def find_checkpoint(store: History, name: str, who: Owner | None) -> list[tuple[int, Checkpoint]]:
    """The checkpoints ``name`` names, with their places in the index: those with that
    id (by any session, or ``who``'s only; more than one only in lines an earlier
    version wrote), else the latest with that label of ``who`` (of any session when
    None)."""
    by_id: list[tuple[int, Checkpoint]] = []
    by_label: list[tuple[int, Checkpoint]] = []
    for i, e in enumerate(store.entries):
        if not isinstance(e, Checkpoint) or (who is not None and not who.made(e)):
            continue
        if e.id == name:
            by_id.append((i, e))
        elif e.label == name:
            by_label = [(i, e)]
    return by_id or by_label


@dataclass(frozen=True, slots=True)
class Listed:
    """One change in a listing, with what the listing knows about it."""

    version: Version
    #: Whether it is the latest recorded change to its file.
    latest: bool
    #: The latest checkpoint of its session before it, if any.
    checkpoint: Checkpoint | None
    #: The next change to its file, if any.
    following: Version | None


@dataclass(frozen=True, slots=True)
class Listing:
    #: The newest matching changes, newest first.
    changes: list[Listed]
    #: How many changes matched in all.
    total: int
    #: Checkpoints of the listed changes' sessions (or of ``session``) from the one the
    #: oldest listed change comes after, newest first.
    checkpoints: list[Checkpoint]


#: At most this many checkpoints are listed with the changes.
MAX_CHECKPOINTS = 100


def under(path: str, folder: str, sep: str = os.sep) -> bool:
    """Whether ``path`` is ``folder`` or lies inside it (both real paths; ``sep``: the
    system's separator, a backslash on Windows)."""
    return path == folder or path.startswith(folder.rstrip(sep) + sep)


def list_changes(
    entries: list[Entry],
    *,
    who: Owner | None = None,
    path: str | None = None,
    after: int = -1,
    limit: int,
) -> Listing:
    """The changes among ``entries`` (the index, oldest first) made by ``who``, to
    ``path`` (a file, or a folder and what it holds), placed after index ``after``;
    the newest ``limit`` of them, with the checkpoints among them. Sessions are told
    apart by name and server instance (:class:`~steadyhand.history.store.Owner`)."""
    latest: dict[str, Version] = {}
    following: dict[int, Version] = {}  # by the place of the change it follows
    at: dict[str, int] = {}  # the place of each file's latest change
    last_cp: dict[Owner, tuple[int, Checkpoint]] = {}
    matched: list[tuple[int, Version, tuple[int, Checkpoint] | None]] = []
    for i, e in enumerate(entries):
        if isinstance(e, Checkpoint):
            last_cp[owner_of(e)] = (i, e)
            continue
        prev = at.get(e.path)
        if prev is not None:
            following[prev] = e
        latest[e.path] = e
        at[e.path] = i
        if i <= after or (who is not None and not who.made(e)):
            continue
        if path is not None and not under(e.path, path):
            continue
        placed = _latest(last_cp.get(owner_of(e)), last_cp.get(Owner(e.session)))
        matched.append((i, e, placed))
    window = matched[len(matched) - limit :] if limit < len(matched) else matched
    listed = [
        Listed(v, latest[v.path] is v, cp[1] if cp else None, following.get(i))
        for i, v, cp in reversed(window)
    ]
    owners = {owner_of(v) for _, v, _ in window} | ({who} if who else set())
    # from the checkpoint the oldest listed change of any session comes after
    start = min((cp[0] if cp else i for i, _, cp in window), default=after + 1)
    checkpoints = [
        e
        for e in reversed(entries[start:])
        if isinstance(e, Checkpoint) and any(o.made(e) for o in owners)
    ][:MAX_CHECKPOINTS]
    return Listing(listed, len(matched), checkpoints)


def _latest(
    a: tuple[int, Checkpoint] | None, b: tuple[int, Checkpoint] | None
) -> tuple[int, Checkpoint] | None:
    """The later of two placed checkpoints (a session's own, and one an earlier version
    set under its name, which counts as its own too)."""
    if a is None or b is None:
        return a or b
    return a if a[0] > b[0] else b

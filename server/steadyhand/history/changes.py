"""Looking changes up in the history store: by id, the ones that came after, the text a
change left, and the listing of a workspace's changes with the checkpoints among them.

The text a change left is kept under the change's ``after`` key. Changes recorded before
that key existed, or whose blob was evicted, may still find it as the text the file's next
change started from (when that change started from exactly what this one left).
"""

from __future__ import annotations

from dataclasses import dataclass

from steadyhand.history.store import Checkpoint, Entry, Version
from steadyhand.history.stores import History


def find_version(store: History, change_id: str) -> Version | None:
    """The change ``change_id`` (newest first: ids are random, a match is the one)."""
    for e in reversed(store.entries):
        if isinstance(e, Version) and e.id == change_id:
            return e
    return None


def later_changes(store: History, v: Version) -> list[Version]:
    """The changes to ``v``'s file recorded after ``v``, oldest first."""
    out: list[Version] = []
    seen = False
    for e in store.entries:
        if not isinstance(e, Version) or e.path != v.path:
            continue
        if seen:
            out.append(e)
        elif e.id == v.id:
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


def find_checkpoint(
    store: History, name: str, session: str | None
) -> tuple[int, Checkpoint] | None:
    """The checkpoint ``name`` (an id, else the latest with that label) of ``session``,
    or of any session when None, with its place in the index."""
    by_label: tuple[int, Checkpoint] | None = None
    for i, e in enumerate(store.entries):
        if not isinstance(e, Checkpoint) or (session is not None and e.session != session):
            continue
        if e.id == name:
            return i, e
        if e.label == name:
            by_label = (i, e)
    return by_label


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


def under(path: str, folder: str) -> bool:
    """Whether ``path`` is ``folder`` or lies inside it."""
    return path == folder or path.startswith(folder.rstrip("/") + "/")


def list_changes(
    entries: list[Entry],
    *,
    session: str | None = None,
    path: str | None = None,
    after: int = -1,
    limit: int,
) -> Listing:
    """The changes among ``entries`` (the index, oldest first) made by ``session``, to
    ``path`` (a file, or a folder and what it holds), placed after index ``after``;
    the newest ``limit`` of them, with the checkpoints among them."""
    latest: dict[str, Version] = {}
    following: dict[str, Version] = {}
    last_cp: dict[str, tuple[int, Checkpoint]] = {}
    matched: list[tuple[int, Version, tuple[int, Checkpoint] | None]] = []
    for i, e in enumerate(entries):
        if isinstance(e, Checkpoint):
            last_cp[e.session] = (i, e)
            continue
        prev = latest.get(e.path)
        if prev is not None:
            following[prev.id] = e
        latest[e.path] = e
        if i <= after or (session is not None and e.session != session):
            continue
        if path is not None and not under(e.path, path):
            continue
        matched.append((i, e, last_cp.get(e.session)))
    window = matched[len(matched) - limit :] if limit < len(matched) else matched
    listed = [
        Listed(v, latest[v.path] is v, cp[1] if cp else None, following.get(v.id))
        for _, v, cp in reversed(window)
    ]
    sessions = {v.session for _, v, _ in window} | ({session} if session else set())
    # from the checkpoint the oldest listed change of any session comes after
    start = min((cp[0] if cp else i for i, _, cp in window), default=after + 1)
    checkpoints = [
        e for e in reversed(entries[start:]) if isinstance(e, Checkpoint) and e.session in sessions
    ][:MAX_CHECKPOINTS]
    return Listing(listed, len(matched), checkpoints)

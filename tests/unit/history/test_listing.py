"""Listing a workspace's changes (``history/lookup.py``) and reading index lines of
other versions of the store."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from steadyhand.history.lookup import after_key, list_changes, under
from steadyhand.history.store import (
    Checkpoint,
    Entry,
    HistoryStore,
    Owner,
    Version,
    _entry_from,
)


def _v(i: int, path: str, session: str = "s", *, after: str | None = None) -> Version:
    return Version(
        id=f"v{i}",
        path=path,
        time=float(i),
        session=session,
        tool="edit",
        existed=True,
        before=None,
        before_view=f"h{i}",
        before_size=1,
        encoding="utf-8",
        after_view=f"h{i + 1}",
        after_size=1,
        added=1,
        removed=1,
        after=after,
    )


def _cp(i: int, session: str = "s", label: str = "") -> Checkpoint:
    return Checkpoint(f"cp{i}", session, label, float(i))


ENTRIES: list[Entry] = [
    _v(0, "/w/a"),
    _cp(1),
    _v(2, "/w/d/b"),
    _v(3, "/w/a", "t"),
    _cp(4, "t"),
    _v(5, "/w/d/c"),
    _cp(6),
]


def test_newest_first_with_latest_following_and_checkpoint() -> None:
    out = list_changes(ENTRIES, limit=50)
    assert [x.version.id for x in out.changes] == ["v5", "v3", "v2", "v0"]
    assert out.total == 4
    assert [x.latest for x in out.changes] == [True, True, True, False]
    assert out.changes[3].following is ENTRIES[3]  # v0 is followed by v3 on /w/a
    assert [x.checkpoint.id if x.checkpoint else None for x in out.changes] == [
        "cp1",
        None,
        "cp1",
        None,
    ]
    assert [c.id for c in out.checkpoints] == ["cp6", "cp4", "cp1"]


def test_filters_and_limit() -> None:
    assert [x.version.id for x in list_changes(ENTRIES, who=Owner("t"), limit=50).changes] == ["v3"]
    assert [x.version.id for x in list_changes(ENTRIES, path="/w/d", limit=50).changes] == [
        "v5",
        "v2",
    ]
    assert [x.version.id for x in list_changes(ENTRIES, path="/w/a", limit=50).changes] == [
        "v3",
        "v0",
    ]
    since = list_changes(ENTRIES, who=Owner("s"), after=1, limit=50)
    assert [x.version.id for x in since.changes] == ["v5", "v2"]
    assert [c.id for c in since.checkpoints] == ["cp6", "cp1"]
    limited = list_changes(ENTRIES, limit=1)
    assert [x.version.id for x in limited.changes] == ["v5"] and limited.total == 4
    assert [c.id for c in limited.checkpoints] == ["cp6", "cp1"]


def test_under() -> None:
    assert under("/w/d/b", "/w/d") and under("/w/d", "/w/d") and under("/w/d/b", "/w/d/")
    assert not under("/w/dd/b", "/w/d")


def test_under_with_windows_separators() -> None:
    assert under("C:\\w\\d\\b.py", "C:\\w\\d", "\\") and under("C:\\w\\d", "C:\\w\\d", "\\")
    assert under("C:\\w\\d\\b.py", "C:\\w\\d\\", "\\") and under("C:\\b.py", "C:\\", "\\")
    assert not under("C:\\w\\dd\\b.py", "C:\\w\\d", "\\")
    assert under("\\\\srv\\share\\p\\x", "\\\\srv\\share\\p", "\\")


def test_index_lines_of_older_and_newer_versions_are_read() -> None:
    old = {
        "t": "change",
        "id": "x",
        "path": "/w/a",
        "time": 1.0,
        "session": "s",
        "tool": "edit",
        "existed": True,
        "before": "k",
        "before_view": "h",
        "before_size": 1,
        "encoding": "utf-8",
        "after_view": "h2",
        "after_size": 1,
        "added": 1,
        "removed": 1,
    }
    v = _entry_from(dict(old))
    assert isinstance(v, Version) and v.after is None
    newer = _entry_from({**old, "after": "k2", "a_field_from_later": [1]})
    assert isinstance(newer, Version) and newer.after == "k2"
    assert _entry_from({**old, "t": "something else"}) is None
    assert _entry_from({"t": "change", "id": "x"}) is None  # damaged: fields missing


def test_the_text_after_comes_from_the_next_change_when_not_kept(tmp_path: Path) -> None:
    store = HistoryStore(str(tmp_path), 1 << 20, 1 << 20)
    key = store.put_text("after\n")
    assert key is not None
    v = _v(0, "/w/a")
    nxt = Version(**_fields(_v(1, "/w/a"), key, "h1"))  # it started from what v left
    assert after_key(store, v, nxt) == key
    assert after_key(store, v, None) is None
    own = _v(0, "/w/a", after=key)
    assert after_key(store, own, None) == key
    moved = _fields(_v(1, "/w/a"), key, "other")  # the file changed between the two
    assert after_key(store, v, Version(**moved)) is None


def _fields(v: Version, before: str, before_view: str) -> dict[str, Any]:
    out = {name: getattr(v, name) for name in v.__dataclass_fields__}
    out.update(before=before, before_view=before_view)
    return out

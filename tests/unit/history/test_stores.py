"""History across folders: a change goes to the store of the innermost folder holding the
file, the versions of a path come from every store holding it (an earlier version's store
for several folders included), merged by time; a checkpoint is in every folder's store, and
a store that compacted its index past a checkpoint makes a rewind to it impossible."""

from __future__ import annotations

import dataclasses
import os
import time
from pathlib import Path

import pytest

from steadyhand.history import store as store_module
from steadyhand.history.store import Checkpoint, HistoryStore, Owner, Version, workspace_key
from steadyhand.history.stores import History, legacy_stores


def _version(path: str, t: float, vid: str, session: str = "s") -> Version:
    return Version(vid, path, t, session, "write", True, None, "b", 1, "utf-8", "a", 1, 1, 1)


@pytest.fixture
def tree(tmp_path: Path) -> tuple[str, str, str]:
    a = tmp_path / "a"
    inner = a / "inner"
    b = tmp_path / "b"
    inner.mkdir(parents=True)
    b.mkdir()
    return str(a), str(inner), str(b)


def test_a_change_goes_to_the_innermost_folder_holding_it(
    tmp_path: Path, tree: tuple[str, str, str]
) -> None:
    a, inner, b = tree
    h = History(str(tmp_path / "state"), [a, inner, b], 1 << 20, 1 << 20)
    assert h.for_path(os.path.join(inner, "f")) is h.by_folder[inner]
    assert h.for_path(os.path.join(a, "f")) is h.by_folder[a]
    assert h.for_path(os.path.join(b, "x", "f")) is h.by_folder[b]
    assert h.for_path(a + "-other/f") is h.elsewhere  # a sibling with a longer name
    assert h.for_path("/elsewhere/f") is h.elsewhere
    assert h.by_folder[a].root.endswith(workspace_key([a]))


def test_versions_of_a_path_are_merged_by_time_across_stores(
    tmp_path: Path, tree: tuple[str, str, str]
) -> None:
    a, inner, _ = tree
    state = tmp_path / "state"
    f = os.path.join(inner, "f")
    h = History(str(state), [a], 1 << 20, 1 << 20)
    h.by_folder[a].append(_version(f, 1.0, "one"))
    h.by_folder[a].append(_version(f, 3.0, "three"))
    # later the inner folder is opened too: new changes go there, the old stay readable
    h2 = History(str(state), [a, inner], 1 << 20, 1 << 20)
    h2.by_folder[inner].append(_version(f, 2.0, "two"))
    h2.refresh()
    assert [v.id for v in h2.versions(f)] == ["one", "two", "three"]
    assert h2.last_change(f).id == "three"  # type: ignore[union-attr]


def test_a_checkpoint_is_in_every_folder_and_rewinds_a_folder_added_after_it(
    tmp_path: Path, tree: tuple[str, str, str]
) -> None:
    a, _, b = tree
    state = str(tmp_path / "state")
    h = History(state, [a], 1 << 20, 1 << 20)
    h.by_folder[a].append(_version(os.path.join(a, "f"), time.time() - 10, "before"))
    cp = h.add_checkpoint(Owner("s"), "start")
    h.by_folder[a].append(_version(os.path.join(a, "f"), time.time(), "after-a"))
    h2 = History(state, [a, b], 1 << 20, 1 << 20, {s.root: s for s in h.stores})
    h2.by_folder[b].append(_version(os.path.join(b, "g"), time.time() + 1, "after-b"))
    h2.refresh()
    assert h2.find_checkpoint(Owner("s"), "start") == [cp]
    assert [v.id for v in h2.changes_since(cp) or []] == ["after-a", "after-b"]
    assert not os.path.isdir(h2.elsewhere.root)  # nothing was recorded there


def test_a_store_compacted_past_a_checkpoint_refuses_the_rewind(
    tmp_path: Path, tree: tuple[str, str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    a, _, _ = tree
    monkeypatch.setattr(store_module, "MAX_ENTRIES", 6)
    monkeypatch.setattr(store_module, "KEEP_ENTRIES", 3)
    h = History(str(tmp_path / "state"), [a], 1 << 20, 1 << 20)
    cp = h.add_checkpoint(Owner("s"), "start")
    for i in range(6):
        h.by_folder[a].append(_version(os.path.join(a, "f"), time.time(), f"v{i}"))
    h.refresh()
    assert h.by_folder[a].compacted_through >= cp.time
    assert h.changes_since(cp) is None
    fresh = HistoryStore(h.by_folder[a].root, 1 << 20, 1 << 20)
    fresh.refresh()  # another server reads the marker the compaction left
    assert fresh.compacted_through == h.by_folder[a].compacted_through


def test_an_earlier_store_for_several_folders_is_found_and_read(
    tmp_path: Path, tree: tuple[str, str, str]
) -> None:
    a, _, b = tree
    state = tmp_path / "state"
    old = HistoryStore(str(state / workspace_key([a, b])), 1 << 20, 1 << 20, (a, b))
    key = old.put_text("kept\n")
    old.append(dataclasses.replace(_version(os.path.join(b, "g"), 5.0, "old"), before=key))
    old.append(Checkpoint("cp-old", "s", "", 4.0))
    HistoryStore(str(state / workspace_key([a])), 1 << 20, 1 << 20, (a,)).append(
        Checkpoint("cp-one", "s", "", 1.0)
    )
    assert legacy_stores(str(state), [b]) == [old.root]
    assert legacy_stores(str(state), [str(tmp_path / "c")]) == []
    h = History(str(state), [b], 1 << 20, 1 << 20)
    h.refresh()
    assert [x.id for x in h.versions(os.path.join(b, "g"))] == ["old"]
    assert h.get_text(key) == "kept\n" and h.has(key)
    assert h.find_checkpoint(Owner("s"), "cp-old") != []
    assert h.versions(os.path.join(a, "f")) == []


def test_a_store_folder_whose_meta_is_a_fifo_or_too_deep_is_skipped_without_opening_it(
    tmp_path: Path, tree: tuple[str, str, str]
) -> None:
    a, _, b = tree
    state = tmp_path / "state"
    fifo_store = state / "fifo"
    fifo_store.mkdir(parents=True)
    os.mkfifo(fifo_store / "meta.json")  # opening it for reading would block for good
    deep_store = state / "deep"
    deep_store.mkdir()
    (deep_store / "meta.json").write_text("[" * 100_000 + "]" * 100_000)
    old = HistoryStore(str(state / workspace_key([a, b])), 1 << 20, 1 << 20, (a, b))
    old.append(Checkpoint("cp-old", "s", "", 4.0))
    assert legacy_stores(str(state), [b]) == [old.root]

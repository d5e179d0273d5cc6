"""Moves and deletions in the history index: every entry a store writes is read back the
same by another store on the same folder, whatever its names hold, and a line of either
kind that a store did not write (wrong types, a mode no file has) is skipped."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from steadyhand.history.lookup import net_of
from steadyhand.history.store import HistoryStore, KeptFile, Moved, Removed

# names as a file system may hand them over: any character but NUL and "/", lone
# surrogates included (the odd bytes of a name that is not UTF-8)
_NAME = st.text(
    st.characters(blacklist_characters="\x00/", blacklist_categories=("Cs",))
    | st.sampled_from(["\udcff", "\udc80"]),
    min_size=1,
    max_size=12,
)
_PATH = st.lists(_NAME, min_size=1, max_size=3).map(lambda parts: "/w/" + "/".join(parts))
_HASH = st.none() | st.text("0123456789abcdef", min_size=32, max_size=32)
_TIME = st.floats(min_value=0, max_value=4e9, allow_nan=False)

_MOVES = st.builds(
    Moved,
    id=st.text("0123456789abcdef", min_size=12, max_size=12),
    source=_PATH,
    destination=_PATH,
    time=_TIME,
    session=_NAME,
    tool=st.sampled_from(["move", "undo", "rewind"]),
    folder=st.booleans(),
    files=st.integers(0, 10_000),
    view=_HASH,
    size=st.integers(0, 1 << 40),
    replaced=_HASH,
    replaced_existed=st.booleans(),
    replaced_view=_HASH,
    replaced_size=st.integers(0, 1 << 40),
    replaced_mode=st.integers(0, 0o7777),
    instance=st.none() | _NAME,
    made=st.lists(_PATH, max_size=3).map(tuple),
)
_KEPT = st.builds(
    KeptFile,
    path=st.just("") | _NAME,
    key=_HASH,
    size=st.integers(0, 1 << 40),
    mode=st.integers(0, 0o7777),
    view=_HASH,
)
_REMOVALS = st.builds(
    Removed,
    id=st.text("0123456789abcdef", min_size=12, max_size=12),
    path=_PATH,
    time=_TIME,
    session=_NAME,
    tool=st.sampled_from(["delete", "undo", "rewind"]),
    folder=st.booleans(),
    files=st.lists(_KEPT, max_size=4).map(tuple),
    folders=st.lists(_NAME, max_size=3).map(tuple),
    back=st.booleans(),
    lines=st.integers(0, 1 << 30),
    instance=st.none() | _NAME,
)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(entries=st.lists(_MOVES | _REMOVALS, min_size=1, max_size=4, unique_by=lambda e: e.id))
def test_every_tree_entry_reads_back_the_same(
    tmp_path: Path, entries: list[Moved | Removed]
) -> None:
    folder = tempfile.mkdtemp(dir=tmp_path)  # a store of its own for each example
    store = HistoryStore(folder, 1 << 20, 1 << 20)
    written = [store.append(e) for e in entries]
    fresh = HistoryStore(folder, 1 << 20, 1 << 20)
    fresh.refresh()
    assert fresh.entries == written


def test_tree_lines_a_store_did_not_write_are_skipped(tmp_path: Path) -> None:
    store = HistoryStore(str(tmp_path / "h"), 1 << 20, 1 << 20)
    good = Removed(
        "aaaaaaaaaaaa", "/w/d", 1.0, "s", "delete", True, (KeptFile("x", None, 1, 0o644),)
    )
    store.append(good)
    index = tmp_path / "h" / "index.jsonl"
    line = json.loads(index.read_text().splitlines()[-1])
    bad = [
        {**line, "id": "b1", "files": [["x", None, 1, 0o17777, None]]},  # no such mode
        {**line, "id": "b2", "files": [["x", None, -1, 0o644, None]]},  # a negative size
        {**line, "id": "b3", "files": "x"},
        {**line, "id": "b4", "folders": [1]},
        {"t": "move", "id": "b5", "source": "/w/a", "destination": 5, "time": 1.0},
        {
            "t": "move",
            "id": "b6",
            "source": "/w/a",
            "destination": "/w/b",
            "time": 1.0,
            "session": "s",
            "tool": "move",
            "folder": False,
            "files": "1",
        },
    ]
    with index.open("a") as f:
        for obj in bad:
            f.write(json.dumps(obj) + "\n")
    fresh = HistoryStore(str(tmp_path / "h"), 1 << 20, 1 << 20)
    fresh.refresh()
    assert fresh.entries == [good]


def _move(i: str, src: str, dst: str) -> Moved:
    return Moved(i, src, dst, 1.0, "s", "move", False, 1)


def _removal(i: str, path: str, back: bool, key: str = "k") -> Removed:
    return Removed(
        i,
        path,
        1.0,
        "s",
        "undo" if back else "delete",
        False,
        (KeptFile("", key, 1, 0o644),),
        back=back,
    )


def test_what_later_undid_builds_on_nothing() -> None:
    a_b, b_a, b_c = (
        _move("1", "/w/a", "/w/b"),
        _move("2", "/w/b", "/w/a"),
        _move("3", "/w/b", "/w/c"),
    )
    gone, back = _removal("4", "/w/b", False), _removal("5", "/w/b", True)
    assert net_of([]) == []
    assert net_of([gone, back]) == []  # deleted, then made again
    assert net_of([back, gone]) == []  # made again, then deleted again
    assert net_of([a_b, b_a]) == []  # moved, then moved back
    assert net_of([gone, a_b, b_a, back]) == []  # pairs inside pairs
    assert net_of([gone, back, b_c]) == [b_c]  # a move that still stands
    assert net_of([a_b, b_c]) == [a_b, b_c]
    # other bytes made again, another path, or two deletions: not an undoing
    assert net_of([gone, _removal("6", "/w/b", True, key="other")]) != []
    assert net_of([gone, _removal("7", "/w/x", True)]) != []
    assert net_of([gone, _removal("8", "/w/b", False)]) == [gone, _removal("8", "/w/b", False)]

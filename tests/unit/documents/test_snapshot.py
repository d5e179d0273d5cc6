"""Snapshots of a file (``documents/snapshot.py``): the latest disk texts kept, bounded
and keyed by content."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from steadyhand.documents import snapshot as snapshots
from steadyhand.state.hashing import content_hash


def test_latest_disk_texts_are_bounded_and_keyed_by_content(tmp_path: Path) -> None:
    each = sys.getsizeof("x" * 30)
    latest = snapshots._Latest(most=3, budget=3 * each + 10)
    files = []
    for i in range(5):
        f = tmp_path / f"f{i}.txt"
        f.write_text("x" * 30)
        files.append(f)
        snap = snapshots.from_raw(str(f), snapshots.read_all(str(f)))
        assert snap.lines  # worked out from the text: not kept with the copy
        latest.put(snap)
    kept = [f for f in files if latest.get(str(f)) is not None]
    assert kept == files[2:]  # three at most, the oldest went first
    copy = latest.get(str(files[4]))
    assert copy is not None and "lines" not in copy.__dict__
    big = snapshots.from_raw(str(files[0]), snapshots.read_all(str(files[0])))
    object.__setattr__(big, "raw", "y" * (4 * each))
    latest.put(big)
    assert latest.get(str(files[0])) is None  # over the whole budget: not kept
    latest.put(snapshots.from_disk(str(files[1])))
    latest.put(snapshots.from_disk(str(files[0])))
    total = sum(sys.getsizeof(e.raw) for f in files if (e := latest.get(str(f))) is not None)
    assert total <= latest.budget and latest._total == total

    # the module's own memo: the same bytes give the text decoded before, as a copy
    f = files[4]
    f.write_text("first\n")
    snap = snapshots.from_disk(str(f))
    again = snapshots.from_disk(str(f))
    assert again == snap and again is not snap
    assert again.lines  # worked out on the copy handed out ...
    assert "lines" not in snapshots._LATEST._items[str(f)][0].__dict__  # ... not kept
    # other bytes of the same length, with the time put back: decoded afresh
    st = os.stat(f)
    f.write_text("other\n")
    os.utime(f, ns=(st.st_atime_ns, st.st_mtime_ns))
    changed = snapshots.from_disk(str(f))
    assert changed.raw == "other\n" and changed.hash != snap.hash

    # what was written is remembered only when reading it back would give the same
    g = tmp_path / "written.txt"
    for text, kept in (("plain text\n", True), ("a NUL \x00 reads back as binary\n", False)):
        data = text.encode()
        g.write_bytes(data)
        written = snapshots.Snapshot(
            str(g), "disk", text, snapshots.UTF8, content_hash(data), len(data), 0
        )
        snapshots.note_written(written, data)
        entry = snapshots._LATEST.get(str(g))
        assert (entry is not None and entry.raw == text) is kept

"""Index lines the store did not write (damaged, nested too deep, numbers no clock or
file can hold) are skipped: history, undo and rewind answer from the lines that are
entries, never fail on the others."""

from __future__ import annotations

import json
from pathlib import Path

from steadyhand.history.store import HistoryStore, Owner


def test_foreign_index_lines_are_skipped(tmp_path: Path) -> None:
    store = HistoryStore(str(tmp_path / "h"), 1 << 20, 1 << 20)
    store.add_checkpoint(Owner("s"), "first")
    good = (tmp_path / "h" / "index.jsonl").read_bytes()
    bad = [
        b"[" * 100_000 + b"]" * 100_000,
        b'{"t": "checkpoint", "id": "x", "session": "s", "label": "l", "time": '
        + b"9" * 5000
        + b"}",
        json.dumps(
            {"t": "checkpoint", "id": "y", "session": "s", "label": "l", "time": 1e300}
        ).encode(),
        json.dumps(
            {"t": "checkpoint", "id": "z", "session": 5, "label": "l", "time": 1.0}
        ).encode(),
        json.dumps({"t": "change", "id": "v", "path": "/p", "time": 1.0}).encode(),
    ]
    (tmp_path / "h" / "index.jsonl").write_bytes(good + b"\n".join(bad) + b"\n")
    fresh = HistoryStore(str(tmp_path / "h"), 1 << 20, 1 << 20)
    fresh.refresh()
    assert [c.label for c in fresh.checkpoints(Owner("s"))] == ["first"]
    assert fresh.versions("/p", None) == []

"""Unit tests for changes behind the agent's back and open editor buffers (the end-to-end
ones are in tests/e2e/apply/test_editor_and_disk.py): a watcher notice about a large file is
decided from its size and time without reading it, records already marked are not looked
at again, a buffer goes to disk in the file's own line endings, and a ranged read's
record compares with a buffer of the same disk bytes."""

from __future__ import annotations

import itertools
import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from steadyhand.apply.editor import EditorWorld, line_splices
from steadyhand.documents.snapshot import from_text
from steadyhand.lsp import server as server_mod
from steadyhand.state.file_state import FileRecord, SessionRegistry
from steadyhand.state.hashing import content_hash, text_hash
from steadyhand.state.staleness import is_stale
from steadyhand.text.encoding import UTF8
from steadyhand.text.splices import Splice, apply_splices
from steadyhand.watch import external as external_mod
from steadyhand.world import Change


def _bare_server(monkeypatch: pytest.MonkeyPatch) -> tuple[Any, list[Any], list[str]]:
    ls = server_mod.SteadyhandServer()
    sent: list[Any] = []
    reads: list[str] = []
    monkeypatch.setattr(ls.protocol, "notify", lambda method, params: sent.append(params))
    real_read_all = external_mod.read_all

    def counting(path: str, **kw: Any) -> Any:
        reads.append(path)
        return real_read_all(path, **kw)

    monkeypatch.setattr(external_mod, "read_all", counting)
    return ls, sent, reads


def _disk_record(path: str, data: bytes, st: os.stat_result, **kw: Any) -> FileRecord:
    digest = content_hash(data)
    return FileRecord(
        path=path,
        hash=digest,
        view_hash=digest,
        source="disk",
        mtime_ns=st.st_mtime_ns,
        size=st.st_size,
        encoding="utf-8",
        line_ending="lf",
        total_lines=data.count(b"\n"),
        shown=((1, 2),),
        **kw,
    )


def test_large_file_notice_decided_by_stat_without_reading(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(external_mod, "WATCH_HASH_MAX_BYTES", 64)
    ls, sent, reads = _bare_server(monkeypatch)
    f = tmp_path / "big.log"
    data = b"x" * 100 + b"\n"
    f.write_bytes(data)
    path = str(f)
    ls.ctx.sessions.get("default").put(_disk_record(path, data, f.stat()))
    ls.external_change(path, "modified")  # same size and time: nothing to report
    assert sent == [] and reads == []
    with open(f, "ab") as out:
        out.write(b"more\n")
    ls.external_change(path, "modified")
    assert sent == [{"path": path, "kind": "modified"}] and reads == []
    ls.external_change(path, "modified")  # every record marked already: skipped
    assert len(sent) == 1 and reads == []


def test_small_file_notice_still_hashes_and_stale_records_skip_the_read(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    ls, sent, reads = _bare_server(monkeypatch)
    f = tmp_path / "a.txt"
    data = b"one\n"
    f.write_bytes(data)
    path = str(f)
    ls.ctx.sessions.get("default").put(_disk_record(path, data, f.stat()))
    os.utime(f, ns=(1, 1))  # touched, same content: not a change
    ls.external_change(path, "modified")
    assert sent == [] and reads == [path]
    f.write_bytes(b"two\n")
    ls.external_change(path, "created")  # an atomic save over it: a modification
    assert sent == [{"path": path, "kind": "modified"}]
    reads.clear()
    ls.external_change(path, "modified")
    assert reads == [] and len(sent) == 1


def test_mark_changed_by_stat_keeps_records_with_the_same_size_and_time() -> None:
    reg = SessionRegistry(10)
    st = os.stat(__file__)
    rec = _disk_record("/x", b"a\n", st)
    reg.get("a").put(rec)
    reg.get("b").put(rec.replace(source="buffer"))
    assert reg.mark_changed("/x", None, disk_stat=(rec.size, rec.mtime_ns), buffers=False) == 0
    assert reg.mark_changed("/x", None, disk_stat=(rec.size + 1, rec.mtime_ns), buffers=False) == 1
    assert [r.stale for r in reg.records("/x")] == [True, False]


def test_disk_style_keeps_mixed_and_crlf_endings() -> None:
    disk = "a\r\nb\nc\r\n"
    before = from_text("/x", "a\nb\nc\n", None, 1, False)
    change = Change(
        path="/x",
        before=before,
        new_raw="a\nB\nc\n",
        data=b"",
        encoding=UTF8,
        tool="edit",
        splices=(Splice(2, 3, "B"),),
    )
    assert EditorWorld._in_disk_style("a\nB\nc\n", before, change, disk) == "a\r\nB\nc\r\n"
    whole = Change("/x", before, "a\nB\nc\n", b"", UTF8, "write")
    crlf = "a\r\nb\r\nc\r\n"
    assert EditorWorld._in_disk_style("x\ny\n", before, whole, crlf) == "x\r\ny\r\n"
    # a buffer that is not the disk's text keeps its own endings
    assert EditorWorld._in_disk_style("x\ny\n", before, whole, "q\r\n") == "x\ny\n"


def test_disk_record_compares_with_a_buffer_of_the_same_disk_bytes() -> None:
    data = b"a\r\nb\r\n"
    digest = content_hash(data)
    rec = FileRecord("/x", digest, digest, "disk", 0, 6, "utf-8", "crlf", 2, ((1, 1),))
    same = from_text("/x", "a\r\nb\r\n", None, 1, False, disk_hash=digest)
    assert not is_stale(rec, same)
    typed = from_text("/x", "a\r\nB\r\n", None, 2, True, disk_hash=digest)
    assert is_stale(rec, typed)
    moved = from_text("/x", "a\r\nb\r\n", None, 1, False, disk_hash=content_hash(b"other"))
    assert is_stale(rec, moved)
    assert not is_stale(rec.replace(view_hash=text_hash("a\nb\n")), moved)


_LINES = st.lists(
    st.tuples(st.sampled_from(["a", "b", "c", "", "ab"]), st.sampled_from(["\n", "\r\n", "\r"])),
    max_size=12,
).map(lambda parts: "".join(t + e for t, e in parts))


@settings(max_examples=300, deadline=None)
@given(_LINES, _LINES, st.sampled_from(["", "tail"]))
def test_line_splices_turn_old_into_new_in_order(old: str, new: str, tail: str) -> None:
    old, new = old + tail, new + tail
    splices = line_splices(old, new)
    assert apply_splices(old, splices) == new
    assert all(a.end <= b.start for a, b in itertools.pairwise(splices))
    if old == new:
        assert splices == []


def test_line_splices_of_two_distant_changes_are_two_small_edits() -> None:
    old = "".join(f"line {i}\n" for i in range(200))
    new = old.replace("line 0\n", "LINE 0\n").replace("line 198\n", "line 198!\n")
    splices = line_splices(old, new)
    assert len(splices) == 2
    assert all(len(sp.text) < 20 for sp in splices)

"""The on-disk history store: deduplication, LRU eviction, sharing between servers."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from steadyhand.fs.state_dir import state_dir
from steadyhand.history.store import (
    HistoryStore,
    Owner,
    Version,
    new_id,
    workspace_key,
)


def _version(path: str, key: str | None, session: str = "s") -> Version:
    return Version(
        id=new_id(),
        path=path,
        time=time.time(),
        session=session,
        tool="edit",
        existed=True,
        before=key,
        before_view="b",
        before_size=1,
        encoding="utf-8",
        after_view="a",
        after_size=1,
        added=1,
        removed=1,
    )


def test_identical_content_is_stored_once(tmp_path: Path) -> None:
    store = HistoryStore(str(tmp_path / "h"), 10_000, 10_000)
    k1 = store.put_text("same text\n" * 20)
    k2 = store.put_text("same text\n" * 20)
    assert k1 == k2 and k1 is not None
    assert len([p for p in (tmp_path / "h" / "blobs").rglob("*") if p.is_file()]) == 1
    assert store.get_text(k1) == "same text\n" * 20


def test_least_recently_used_content_is_evicted_first(tmp_path: Path) -> None:
    store = HistoryStore(str(tmp_path / "h"), 1500, 10_000)
    keys = []
    for i in range(3):
        key = store.put_text(os.urandom(400).hex())
        assert key is not None
        path = tmp_path / "h" / "blobs" / key[:2] / key
        os.utime(path, (1000 + i, 1000 + i))  # make the order of use explicit
        keys.append(key)
    store._scan()
    assert store.get_text(keys[0]) is not None  # using the oldest makes it the newest
    store.put_text(os.urandom(400).hex())
    assert store.has(keys[0])
    assert not store.has(keys[1])  # now the least recently used
    assert store.size_bytes <= 1500


def test_too_large_content_is_not_kept(tmp_path: Path) -> None:
    store = HistoryStore(str(tmp_path / "h"), 10_000, 100)
    assert store.put_text("x" * 101) is None


def test_two_servers_share_one_index(tmp_path: Path) -> None:
    root = str(tmp_path / "h")
    one, two = HistoryStore(root, 10_000, 10_000), HistoryStore(root, 10_000, 10_000)
    key = one.put_text("hello\n")
    one.append(_version("/ws/a", key))
    two.refresh()
    assert [v.before for v in two.versions("/ws/a")] == [key]
    assert two.get_text(key or "") == "hello\n"
    cp = two.add_checkpoint(Owner("s"), "label")
    one.refresh()
    assert one.find_checkpoint(Owner("s"), "label") == (1, cp)
    assert one.find_checkpoint(Owner("s"), cp.id) == (1, cp)


def test_a_damaged_or_partial_index_line_is_skipped(tmp_path: Path) -> None:
    root = tmp_path / "h"
    store = HistoryStore(str(root), 10_000, 10_000)
    store.append(_version("/ws/a", None))
    with open(root / "index.jsonl", "a") as f:
        f.write("{not json\n")
        f.write('{"t": "change", "unexpected": 1}\n')
        f.write('{"t": "checkpoint", "id": "cp-1"')  # still being written
    fresh = HistoryStore(str(root), 10_000, 10_000)
    fresh.refresh()
    assert len(fresh.entries) == 1
    assert fresh.last_change("/ws/a") is not None and fresh.last_change("/ws/b") is None


def test_workspace_keys_and_default_place(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    a = workspace_key([str(tmp_path / "proj")])
    assert a.startswith("proj-") and a != workspace_key([str(tmp_path / "other" / "proj")])
    assert workspace_key([]).startswith("no-workspace-")
    monkeypatch.delenv("STEADYHAND_STATE_DIR", raising=False)
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path))
    assert state_dir() == str(tmp_path / "steadyhand")
    monkeypatch.setenv("STEADYHAND_STATE_DIR", str(tmp_path / "explicit"))
    assert state_dir() == str(tmp_path / "explicit")


def test_a_large_text_is_kept_at_once_and_compressed_after_the_answer(tmp_path: Path) -> None:
    import asyncio

    from steadyhand.history.store import COMPRESS_LATER

    store = HistoryStore(str(tmp_path / "h"), 10_000_000, 10_000_000)
    text = "".join(f"line {i} of a big file\n" for i in range(COMPRESS_LATER // 10))
    path = tmp_path / "h" / "blobs"
    sizes: list[int] = []

    async def change() -> str | None:
        key = store.put_text(text)  # before the change
        assert key is not None
        blob = path / key[:2] / key
        sizes.append(blob.stat().st_size)  # written as it is
        assert store.get_text(key) == text
        # a store opened now (a restart after a crash) reads it as well
        assert HistoryStore(str(tmp_path / "h"), 10_000_000, 10_000_000).get_text(key) == text
        await asyncio.sleep(0)  # the answer goes out; then the deferred jobs run
        await asyncio.sleep(0)
        sizes.append(blob.stat().st_size)
        return key

    key = asyncio.run(change())
    assert key is not None
    assert sizes[0] > len(text) and sizes[1] < sizes[0] // 4
    assert store.get_text(key) == text
    assert store.size_bytes == sizes[1]
    assert [p.name for p in (path / key[:2]).iterdir()] == [key]  # no temp file left


def test_small_texts_are_compressed_at_once(tmp_path: Path) -> None:
    store = HistoryStore(str(tmp_path / "h"), 10_000, 10_000)
    key = store.put_text("small\n" * 100)
    assert key is not None
    assert (tmp_path / "h" / "blobs" / key[:2] / key).read_bytes()[:1] == b"\x78"


def test_a_file_name_that_is_not_utf8_survives_the_index(tmp_path: Path) -> None:
    """A name with bytes that are not UTF-8 (decoded as lone surrogates) is read back as
    it was written, by another server too."""
    odd = os.fsdecode(b"/w/caf\xe9.txt")
    store = HistoryStore(str(tmp_path / "h"), 10_000, 10_000)
    store.append(_version(odd, None))
    store.append(_version("/w/plain.txt", None))
    other = HistoryStore(str(tmp_path / "h"), 10_000, 10_000)
    other.refresh()
    assert [e.path for e in other.entries if isinstance(e, Version)] == [odd, "/w/plain.txt"]


def test_compacting_keeps_the_newest_entries_for_every_reader(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from steadyhand.history import store as store_module

    monkeypatch.setattr(store_module, "MAX_ENTRIES", 50)
    monkeypatch.setattr(store_module, "KEEP_ENTRIES", 30)
    store = HistoryStore(str(tmp_path / "h"), 10_000, 10_000)
    paths = [f"/w/f{i}.txt" for i in range(51)]
    paths[49] = os.fsdecode(b"/w/odd\xff.txt")
    for p in paths:
        store.append(_version(p, None))
    kept = [e.path for e in store.entries if isinstance(e, Version)]
    assert kept == paths[-30:]
    other = HistoryStore(str(tmp_path / "h"), 10_000, 10_000)
    other.refresh()
    assert [e.path for e in other.entries if isinstance(e, Version)] == kept
    store.append(_version("/w/after.txt", None))  # appending goes on from the new index
    other.refresh()
    assert [e.path for e in other.entries if isinstance(e, Version)][-2:] == [
        paths[-1],
        "/w/after.txt",
    ]


def test_a_torn_index_line_does_not_swallow_the_next_entry(tmp_path: Path) -> None:
    root = tmp_path / "h"
    first = HistoryStore(str(root), 10_000, 10_000)
    first.append(_version("/w/one", None))
    with open(root / "index.jsonl", "ab") as f:  # a server stopped halfway through a line
        f.write(b'{"t":"change","id":"dead","path":"/w/x"')
    HistoryStore(str(root), 10_000, 10_000).append(_version("/w/two", None))
    fresh = HistoryStore(str(root), 10_000, 10_000)
    fresh.refresh()
    assert [e.path for e in fresh.entries if isinstance(e, Version)] == ["/w/one", "/w/two"]


def test_a_short_write_still_appends_the_whole_line(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    store = HistoryStore(str(tmp_path / "h"), 10_000, 10_000)
    store.append(_version("/w/one", None))
    real_write = os.write

    def short(fd: int, data: bytes) -> int:  # as on a nearly full disk, or a signal
        return real_write(fd, bytes(data[:7]))

    monkeypatch.setattr(os, "write", short)
    store.append(_version("/w/two", None))
    monkeypatch.setattr(os, "write", real_write)
    store.append(_version("/w/three", None))
    fresh = HistoryStore(str(tmp_path / "h"), 10_000, 10_000)
    fresh.refresh()
    paths = [e.path for e in fresh.entries if isinstance(e, Version)]
    assert paths == ["/w/one", "/w/two", "/w/three"]


def test_a_compaction_never_drops_a_line_another_server_appends_meanwhile(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    import threading

    pytest.importorskip("fcntl", reason="appends and compactions take turns by flock")

    from steadyhand.history import store as store_module

    monkeypatch.setattr(store_module, "MAX_ENTRIES", 10)
    monkeypatch.setattr(store_module, "KEEP_ENTRIES", 5)
    root = str(tmp_path / "h")
    a, b = HistoryStore(root, 10_000, 10_000), HistoryStore(root, 10_000, 10_000)
    for i in range(10):
        a.append(_version(f"/w/f{i}", None))
    real = store_module._write_file
    other = threading.Thread(target=lambda: b.append(_version("/w/by-b", None)))

    def compacting(path: str, parts: list[bytes], *args: object) -> bool:
        if path == a.index_path and not other.is_alive():
            other.start()  # the other server appends while this one rewrites the index
            other.join(0.3)
        return real(path, parts, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(store_module, "_write_file", compacting)
    a.append(_version("/w/f10", None))  # past MAX_ENTRIES: compacts
    other.join(5)
    assert not other.is_alive()
    fresh = HistoryStore(root, 10_000, 10_000)
    fresh.refresh()
    paths = [e.path for e in fresh.entries if isinstance(e, Version)]
    assert paths[-1] == "/w/by-b" and "/w/f10" in paths
    a.refresh()
    assert [e.path for e in a.entries if isinstance(e, Version)] == paths


def test_an_idle_reader_sees_an_index_rewritten_under_the_same_inode(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from steadyhand.history import store as store_module

    monkeypatch.setattr(store_module, "MAX_ENTRIES", 20)
    monkeypatch.setattr(store_module, "KEEP_ENTRIES", 10)
    root = str(tmp_path / "h")
    busy, idle = HistoryStore(root, 10_000, 10_000), HistoryStore(root, 10_000, 10_000)
    for i in range(12):
        busy.append(_version(f"/w/early{i}", None))
    idle.refresh()
    index = Path(busy.index_path)
    idle_read = index.stat().st_size
    seen = tmp_path / "seen.jsonl"
    os.link(index, seen)  # the file the idle reader read (kept to reuse its inode)
    for i in range(18):  # compacts, and grows past where the idle reader stopped
        busy.append(_version(f"/w/late{i}", None))
    # The file system may give the new index the inode number of the old one: here it
    # is the very same inode, holding the new index.
    with open(seen, "r+b") as f:
        f.write(index.read_bytes())
        f.truncate()
    os.replace(seen, index)
    assert index.stat().st_size > idle_read
    idle.refresh()
    want = [e.path for e in busy.entries if isinstance(e, Version)]
    assert [e.path for e in idle.entries if isinstance(e, Version)] == want


def test_a_damaged_blob_is_written_again(tmp_path: Path) -> None:
    from steadyhand.state.hashing import text_hash

    text = "hello world\n" * 10
    key = HistoryStore(str(tmp_path / "h"), 100_000, 100_000).put_text(text)
    assert key is not None
    blob = tmp_path / "h" / "blobs" / key[:2] / key
    blob.write_bytes(b"")  # a power cut right after the rename lost its data
    store = HistoryStore(str(tmp_path / "h"), 100_000, 100_000)
    assert store.put_text(text, text_hash(text)) == key  # the next change replacing it
    assert store.get_text(key) == text
    blob.write_bytes(b"garbage")
    assert store.get_text(key) is None and not blob.exists()  # dropped, not trusted
    assert store.put_text(text, text_hash(text)) == key
    assert store.get_text(key) == text


def test_every_file_of_the_store_is_private(tmp_path: Path) -> None:
    store = HistoryStore(str(tmp_path / "h"), 10_000, 10_000)
    store.put_text("secret text\n", "utf-8")
    store.flush()
    for folder, _, files in os.walk(tmp_path / "h"):
        assert os.stat(folder).st_mode & 0o077 == 0, folder
        for name in files:
            path = os.path.join(folder, name)
            assert os.stat(path).st_mode & 0o077 == 0, path

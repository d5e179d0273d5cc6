"""A file another program holds open (Windows: without ``FILE_SHARE_DELETE``, as indexers and
antivirus scanners do) cannot be replaced for a while: the rename is tried again for about
a second, then refused with ``FileBusy``, nothing changed. The busy errors are injected
(Windows's own error numbers on the ``OSError``), so this runs on every system."""

from __future__ import annotations

import errno
import os
from collections.abc import Callable
from pathlib import Path

import pytest

from steadyhand.history.store import HistoryStore
from steadyhand.system import rename, win32


def _busy_error(path: str, winerror: int = win32.ERROR_SHARING_VIOLATION) -> OSError:
    exc = PermissionError(errno.EACCES, "The process cannot access the file", path)
    exc.winerror = winerror  # type: ignore[attr-defined]  # (set by Python on Windows)
    return exc


@pytest.fixture
def slept(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    waits: list[float] = []
    monkeypatch.setattr(rename, "_sleep", waits.append)
    return waits


@pytest.mark.parametrize("winerror", sorted(win32.BUSY_ERRORS))
def test_every_busy_error_of_windows_is_busy(winerror: int) -> None:
    assert rename.is_busy(_busy_error("f", winerror))


def test_no_other_error_is_busy() -> None:
    assert not rename.is_busy(PermissionError(errno.EACCES, "denied", "f"))  # a POSIX one
    assert not rename.is_busy(_busy_error("f", win32.ERROR_FILE_NOT_FOUND))
    assert not rename.is_busy(_busy_error("f", win32.ERROR_UNABLE_TO_MOVE_REPLACEMENT_2))


def _failing(
    times: int, then: Callable[[], str], error: Callable[[], OSError]
) -> Callable[[], str]:
    calls = 0

    def call() -> str:
        nonlocal calls
        calls += 1
        if calls <= times:
            raise error()
        return then()

    return call


@pytest.mark.parametrize("busy_tries", range(rename.BUSY_TRIES))
def test_a_busy_file_is_tried_again_until_it_is_free(busy_tries: int, slept: list[float]) -> None:
    call = _failing(busy_tries, lambda: "done", lambda: _busy_error("f"))
    assert rename.tried(call, "f") == "done"
    assert slept == list(rename.BUSY_DELAYS[:busy_tries])


def test_a_file_busy_try_after_try_is_file_busy(slept: list[float]) -> None:
    call = _failing(rename.BUSY_TRIES, lambda: "done", lambda: _busy_error("f"))
    with pytest.raises(rename.FileBusy) as caught:
        rename.tried(call, "f")
    assert caught.value.filename == "f" and caught.value.errno == errno.EBUSY
    assert isinstance(caught.value.cause, PermissionError)
    assert slept == list(rename.BUSY_DELAYS)  # about a second in all, bounded
    assert 0.5 < sum(rename.BUSY_DELAYS) < 2.0


def test_any_other_error_is_raised_at_once(slept: list[float]) -> None:
    call = _failing(1, lambda: "done", lambda: FileNotFoundError(errno.ENOENT, "gone", "f"))
    with pytest.raises(FileNotFoundError):
        rename.tried(call, "f")
    assert slept == []


def test_replace_own_replaces(tmp_path: Path, slept: list[float]) -> None:
    src, dst = tmp_path / "new", tmp_path / "old"
    src.write_text("new")
    dst.write_text("old")
    rename.replace_own(str(src), str(dst))
    assert dst.read_text() == "new" and not src.exists() and slept == []


# -- the history store's own files --------------------------------------------------------


class _HeldOpen:
    """``os.replace`` onto ``held`` refused as Windows refuses it while another program
    holds that file, the first ``times`` times."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, times: int) -> None:
        self.times = times
        self.refused = 0
        self.held: set[str] = set()
        self._real = os.replace
        monkeypatch.setattr(os, "replace", self)

    def __call__(self, src: str, dst: str, **kw: object) -> None:
        if os.path.basename(dst) in self.held and self.refused < self.times:
            self.refused += 1
            raise _busy_error(dst)
        self._real(src, dst, **kw)  # type: ignore[arg-type]


def _blob(store: HistoryStore, key: str) -> Path:
    return Path(store.blobs_dir) / key[:2] / key


def _leftovers(root: Path) -> list[Path]:
    return [p for p in root.rglob("*.tmp")]


def test_the_history_store_waits_for_a_blob_held_open(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, slept: list[float]
) -> None:
    store = HistoryStore(str(tmp_path / "h"), 1 << 20, 1 << 20)
    text = "kept for undo\n" * 10
    key = store.put_text(text)
    assert key is not None
    _blob(store, key).write_bytes(b"")  # a blob the system lost: it is written again
    held = _HeldOpen(monkeypatch, times=3)
    held.held.add(key)
    assert store.put_text(text, key) == key
    assert held.refused == 3 and slept == list(rename.BUSY_DELAYS[:3])
    assert store.get_text(key) == text and _leftovers(tmp_path) == []


def test_the_history_store_gives_up_on_a_blob_held_open_and_leaves_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, slept: list[float]
) -> None:
    store = HistoryStore(str(tmp_path / "h"), 1 << 20, 1 << 20)
    text = "kept for undo\n" * 10
    key = store.put_text(text)
    assert key is not None
    held = _HeldOpen(monkeypatch, times=rename.BUSY_TRIES)
    held.held.add(key)
    _blob(store, key).write_bytes(b"")  # written again, against a holder that never lets go
    with pytest.raises(rename.FileBusy):
        store.put_text(text, key)
    assert held.refused == rename.BUSY_TRIES and slept == list(rename.BUSY_DELAYS)
    assert _blob(store, key).read_bytes() == b"" and _leftovers(tmp_path) == []


def test_the_history_store_waits_for_its_index_held_open(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, slept: list[float]
) -> None:
    from tests.unit.history.test_store import _version

    monkeypatch.setattr("steadyhand.history.store.MAX_ENTRIES", 6)
    monkeypatch.setattr("steadyhand.history.store.KEEP_ENTRIES", 3)
    store = HistoryStore(str(tmp_path / "h"), 1 << 20, 1 << 20)
    held = _HeldOpen(monkeypatch, times=2)
    held.held.add("index.jsonl")
    for i in range(7):  # the seventh append compacts the index: a rename over it
        store.append(_version(str(tmp_path / f"f{i}"), None))
    assert held.refused == 2 and slept == list(rename.BUSY_DELAYS[:2])
    assert len(store.entries) == 3 and _leftovers(tmp_path) == []
    again = HistoryStore(str(tmp_path / "h"), 1 << 20, 1 << 20)
    again.refresh()  # the index as compacted, read by another server
    assert [e.id for e in again.entries] == [e.id for e in store.entries]


def test_an_index_held_open_throughout_is_compacted_later(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, slept: list[float]
) -> None:
    from tests.unit.history.test_store import _version

    monkeypatch.setattr("steadyhand.history.store.MAX_ENTRIES", 6)
    monkeypatch.setattr("steadyhand.history.store.KEEP_ENTRIES", 3)
    store = HistoryStore(str(tmp_path / "h"), 1 << 20, 1 << 20)
    held = _HeldOpen(monkeypatch, times=rename.BUSY_TRIES)
    held.held.add("index.jsonl")
    appended = [store.append(_version(str(tmp_path / f"f{i}"), None)) for i in range(7)]
    # the seventh entry is in the index; its compaction waits for a later append
    assert held.refused == rename.BUSY_TRIES and slept == list(rename.BUSY_DELAYS)
    assert [e.id for e in store.entries] == [e.id for e in appended]
    assert _leftovers(tmp_path) == []
    store.append(_version(str(tmp_path / "f7"), None))
    assert len(store.entries) == 3 and store.entries[-1].path == str(tmp_path / "f7")


# -- the descriptor attached mode reads ----------------------------------------------------


def test_the_descriptor_waits_for_a_reader_holding_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, slept: list[float]
) -> None:
    """On Windows, Python's ``open`` shares no deletion: a ``steadyhand mcp`` reading the
    editor server's descriptor holds it against the server's rewrite of it."""
    import json
    from types import SimpleNamespace

    from steadyhand.mcp.rendezvous import Rendezvous

    roots = SimpleNamespace(workspace=[str(tmp_path / "ws")], allowed=[])
    rv = Rendezvous(lambda: SimpleNamespace(roots=roots), lambda *_: None)  # type: ignore[arg-type,return-value]
    rv.folder, rv.sock_path = str(tmp_path), str(tmp_path / "1.sock")
    rv.desc_path = str(tmp_path / "1.json")
    rv._describe()
    held = _HeldOpen(monkeypatch, times=2)
    held.held.add("1.json")
    roots.workspace.append(str(tmp_path / "second"))
    rv._describe()
    assert held.refused == 2 and slept == list(rename.BUSY_DELAYS[:2])
    assert json.loads((tmp_path / "1.json").read_text())["roots"] == roots.workspace
    assert not (tmp_path / "1.json.tmp").exists()

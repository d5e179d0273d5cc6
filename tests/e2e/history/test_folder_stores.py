"""History follows the files, not the set of folders: a change made before a folder was
added (or removed) stays undoable, a checkpoint spanning folders rewinds them all (a folder
added after it included), and a store an earlier version kept for a set of several folders
stays readable when only one of them is open."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import LanguageClient

from steadyhand.history.store import Checkpoint, HistoryStore, Version, workspace_key
from steadyhand.protocol.commands import CHECKPOINT, HISTORY, PING, READ, REWIND, UNDO, WRITE
from steadyhand.state.hashing import text_hash
from tests.conftest import call, server_config


def _folder(path: Path) -> types.WorkspaceFolder:
    return types.WorkspaceFolder(uri=path.as_uri(), name=path.name)


def _change_folders(
    client: LanguageClient, added: list[Path], removed: list[Path] | None = None
) -> None:
    client.workspace_did_change_workspace_folders(
        types.DidChangeWorkspaceFoldersParams(
            event=types.WorkspaceFoldersChangeEvent(
                added=[_folder(p) for p in added], removed=[_folder(p) for p in removed or []]
            )
        )
    )


@pytest.fixture
def folders(tmp_path: Path) -> tuple[Path, Path, Path]:
    out = (tmp_path / "alpha", tmp_path / "beta", tmp_path / "gamma")
    for p in out:
        p.mkdir()
    return out


@pytest_lsp.fixture(config=server_config())
async def two(lsp_client: LanguageClient, folders: tuple[Path, Path, Path]):  # type: ignore[no-untyped-def]
    """A client whose workspace starts with the folders alpha and beta."""
    a, b, _ = folders
    await lsp_client.initialize_session(
        types.InitializeParams(
            capabilities=types.ClientCapabilities(),
            root_uri=a.as_uri(),
            workspace_folders=[_folder(a), _folder(b)],
            initialization_options={"historyDir": str(a.parent / "state")},
        )
    )
    yield
    await lsp_client.shutdown_session()


@pytest_lsp.fixture(config=server_config())
async def one(lsp_client: LanguageClient, folders: tuple[Path, Path, Path]):  # type: ignore[no-untyped-def]
    """A client whose workspace starts with the folder alpha only."""
    a, _, _ = folders
    await lsp_client.initialize_session(
        types.InitializeParams(
            capabilities=types.ClientCapabilities(),
            root_uri=a.as_uri(),
            workspace_folders=[_folder(a)],
            initialization_options={"historyDir": str(a.parent / "state")},
        )
    )
    yield
    await lsp_client.shutdown_session()


async def _settle(client: LanguageClient) -> None:
    """Let a notification (a folder change) be handled: a request after it is answered
    after it."""
    assert (await call(client, PING))["ok"]


async def test_a_change_stays_undoable_when_a_folder_is_added_or_removed(
    one: LanguageClient, folders: tuple[Path, Path, Path]
) -> None:
    a, b, c = folders
    f = a / "f.txt"
    f.write_text("before\n")
    await call(one, READ, file_path=str(f))
    assert (await call(one, WRITE, file_path=str(f), content="after\n"))["ok"]
    _change_folders(one, [b])
    await _settle(one)
    listed = await call(one, HISTORY, file_path=str(f))
    assert len(listed["versions"]) == 1, listed
    undone = await call(one, UNDO, file_path=str(f))
    assert undone["ok"], undone
    assert f.read_text() == "before\n"
    # and redone after the set changes again
    _change_folders(one, [c], [b])
    await _settle(one)
    redone = await call(one, UNDO, file_path=str(f))
    assert redone["ok"], redone
    assert f.read_text() == "after\n"


async def test_a_checkpoint_spanning_folders_rewinds_them_all(
    two: LanguageClient, folders: tuple[Path, Path, Path]
) -> None:
    a, b, c = folders
    fa, fb, fc = a / "a.txt", b / "b.txt", c / "c.txt"
    fa.write_text("a0\n")
    fb.write_text("b0\n")
    cp = await call(two, CHECKPOINT, label="start")
    assert cp["ok"], cp
    for f in (fa, fb):
        await call(two, READ, file_path=str(f))
        assert (await call(two, WRITE, file_path=str(f), content="agent\n"))["ok"]
    _change_folders(two, [c])  # a folder added after the checkpoint
    await _settle(two)
    assert (await call(two, WRITE, file_path=str(fc), content="new\n"))["ok"]
    back = await call(two, REWIND, checkpoint="start")
    assert back["ok"], back
    assert sorted(back["restored"]) == sorted([str(fa.resolve()), str(fb.resolve())]), back
    assert back["deleted"] == [str(fc.resolve())], back
    assert (fa.read_text(), fb.read_text(), fc.exists()) == ("a0\n", "b0\n", False)


async def test_each_folder_has_a_store_of_its_own(
    two: LanguageClient, folders: tuple[Path, Path, Path]
) -> None:
    a, b, _ = folders
    for f in (a / "x.txt", b / "y.txt"):
        assert (await call(two, WRITE, file_path=str(f), content="x\n"))["ok"]
    await call(two, HISTORY, file_path=str(a / "x.txt"))  # writes what is still pending
    state = a.parent / "state"
    for folder, name in ((a, "x.txt"), (b, "y.txt")):
        index = state / workspace_key([str(folder)]) / "index.jsonl"
        assert index.exists() and name in index.read_text(), index


def _legacy_store(state: Path, folders: list[Path], f: Path, before: str, after: str) -> None:
    """A store for a set of several folders, as an earlier version kept it, holding a
    checkpoint and then a change of ``f`` from ``before`` to ``after``."""
    real = [os.path.realpath(p) for p in folders]
    store = HistoryStore(str(state / workspace_key(real)), 1 << 20, 1 << 20, tuple(real))
    store.append(Checkpoint("cp-legacy", "default", "old", time.time() - 60))
    key = store.put_text(before)
    store.append(
        Version(
            id="v-legacy",
            path=os.path.realpath(f),
            time=time.time() - 30,
            session="default",
            tool="write",
            existed=True,
            before=key,
            before_view=text_hash(before),
            before_size=len(before),
            encoding="utf-8",
            after_view=text_hash(after),
            after_size=len(after),
            added=1,
            removed=1,
        )
    )


async def test_a_store_kept_for_several_folders_stays_readable(
    one: LanguageClient, folders: tuple[Path, Path, Path]
) -> None:
    a, b, _ = folders
    f = a / "old.txt"
    f.write_text("after\n")
    _legacy_store(a.parent / "state", [a, b], f, "before\n", "after\n")
    _change_folders(one, [], [])  # the stores are looked for again on every change
    await _settle(one)
    listed = await call(one, HISTORY, file_path=str(f))
    assert [v["id"] for v in listed["versions"]] == ["v-legacy"], listed
    assert listed["versions"][0]["restorable"] is True
    undone = await call(one, UNDO, file_path=str(f))
    assert undone["ok"], undone
    assert f.read_text() == "before\n"
    # its checkpoint rewinds too, through the earlier store and the folder's own
    redo = await call(one, UNDO, file_path=str(f))
    assert redo["ok"] and f.read_text() == "after\n", redo
    back = await call(one, REWIND, checkpoint="cp-legacy")
    assert back["ok"] and back["restored"] == [str(f.resolve())], back
    assert f.read_text() == "before\n"

"""``steadyhand.move`` end to end over stdio: a file or folder renamed in one step, both
ends held to the rules every path is (confinement, deny, protected, links), nothing
replaced without ``overwrite`` (and then what it replaced kept), and every record of
what moved following it."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
import pytest_lsp
from pytest_lsp import LanguageClient

from steadyhand.protocol.commands import EDIT, MOVE, READ
from steadyhand.protocol.commands import SESSION_FORK as FORK
from tests.conftest import call, client_with, init_params, server_config

mover = client_with({"denyGlobs": ["**/secret*"], "maxMoveFiles": 5})


async def test_a_file_moves_in_one_step_and_what_was_read_stays_read(
    mover: LanguageClient, workspace: Path
) -> None:
    src = workspace / "a.txt"
    src.write_bytes(b"one\r\ntwo\r\n")
    ino = src.stat().st_ino
    assert (await call(mover, READ, file_path="a.txt"))["ok"]
    moved = await call(mover, MOVE, source_path="a.txt", destination_path="deep/er/b.txt")
    assert moved["ok"], moved
    dst = workspace / "deep" / "er" / "b.txt"
    assert not src.exists() and dst.read_bytes() == b"one\r\ntwo\r\n"
    assert dst.stat().st_ino == ino  # a rename, not a copy
    assert moved["source"] == str(src) and moved["destination"] == str(dst)
    assert moved["kind"] == "file" and moved["files"] == 1 and moved["replaced"] is False
    assert moved["made"] == [str(workspace / "deep"), str(workspace / "deep" / "er")]
    assert moved["via"] == "disk" and moved["on_disk"] is True
    assert isinstance(moved["change_id"], str) and moved["change_id"] in moved["message"]
    assert "stays read" in moved["message"]
    # the record followed: an edit needs no new read, at the new path only
    edited = await call(mover, EDIT, file_path=str(dst), old_string="two", new_string="2")
    assert edited["ok"], edited
    assert dst.read_bytes() == b"one\r\n2\r\n"
    gone = await call(mover, EDIT, file_path="a.txt", old_string="one", new_string="1")
    assert gone["error"] == "not_found", gone


async def test_every_record_under_a_moved_folder_follows_it(
    mover: LanguageClient, workspace: Path
) -> None:
    (workspace / "pkg" / "sub").mkdir(parents=True)
    (workspace / "pkg" / "x.py").write_text("x = 1\n")
    (workspace / "pkg" / "sub" / "y.py").write_text("y = 2\n")
    for f in ("pkg/x.py", "pkg/sub/y.py"):
        assert (await call(mover, READ, file_path=f))["ok"]
    # another session's record follows too
    assert (await call(mover, FORK, session="other", parent="default"))["ok"]
    moved = await call(mover, MOVE, source_path="pkg/", destination_path="lib")
    assert moved["ok"] and moved["kind"] == "folder" and moved["files"] == 2, moved
    assert not (workspace / "pkg").exists()
    for session, name in (("default", "x"), ("other", "sub/y")):
        var = name[-1]
        r = await call(
            mover,
            EDIT,
            file_path=f"lib/{name}.py",
            old_string=f"{var} = ",
            new_string=f"{var} = 10 * ",
            session=session,
        )
        assert r["ok"], (session, r)
    assert (workspace / "lib" / "x.py").read_text() == "x = 10 * 1\n"
    assert (workspace / "lib" / "sub" / "y.py").read_text() == "y = 10 * 2\n"


async def test_nothing_is_replaced_without_overwrite_and_then_only_what_was_read(
    mover: LanguageClient, workspace: Path
) -> None:
    (workspace / "a.txt").write_text("new\n")
    (workspace / "b.txt").write_text("old\n")
    taken = await call(mover, MOVE, source_path="a.txt", destination_path="b.txt")
    assert taken["error"] == "exists" and "overwrite: true" in taken["message"], taken
    unread = await call(mover, MOVE, source_path="a.txt", destination_path="b.txt", overwrite=True)
    assert unread["error"] == "not_read", unread
    assert (await call(mover, READ, file_path="b.txt"))["ok"]
    (workspace / "b.txt").write_text("changed since\n")
    stale = await call(mover, MOVE, source_path="a.txt", destination_path="b.txt", overwrite=True)
    assert stale["error"] == "stale", stale
    assert (workspace / "a.txt").read_text() == "new\n"
    assert (workspace / "b.txt").read_text() == "changed since\n"
    over = await call(mover, MOVE, source_path="a.txt", destination_path="b.txt", overwrite=True)
    assert over["ok"] and over["replaced"] is True, over
    assert not (workspace / "a.txt").exists() and (workspace / "b.txt").read_text() == "new\n"
    # a folder never replaces anything, nor is a folder replaced
    (workspace / "d").mkdir()
    (workspace / "e").mkdir()
    onto_file = await call(mover, MOVE, source_path="d", destination_path="b.txt", overwrite=True)
    assert onto_file["error"] == "exists", onto_file
    onto_folder = await call(mover, MOVE, source_path="b.txt", destination_path="e", overwrite=True)
    assert onto_folder["error"] == "is_directory" and "e/b.txt" in onto_folder["message"]


async def test_refusals_at_either_end(
    mover: LanguageClient, workspace: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "o.txt").write_text("o\n")
    (workspace / "f.txt").write_text("f\n")
    (workspace / "secret.txt").write_text("s\n")
    (workspace / ".git").mkdir()
    (workspace / ".git" / "config").write_text("[core]\n")
    (workspace / "out").symlink_to(outside)
    (workspace / "link.txt").symlink_to(workspace / "f.txt")
    (workspace / "folder" / "inner").mkdir(parents=True)
    (workspace / "folder" / "inner" / "secret.key").write_text("k\n")
    (workspace / "repo" / ".git").mkdir(parents=True)
    (workspace / "repo" / ".git" / "HEAD").write_text("ref\n")
    cases = {
        # outside the workspace, at either end (a link out at either end included)
        (str(outside / "o.txt"), "in.txt"): "outside_workspace",
        ("f.txt", str(outside / "f.txt")): "outside_workspace",
        ("out/o.txt", "in.txt"): "outside_workspace",
        ("f.txt", "out/f.txt"): "outside_workspace",
        # a link itself at either end
        ("link.txt", "l2.txt"): "invalid_path",
        ("f.txt", "link.txt"): "invalid_path",
        # denied at either end, and inside a folder
        ("secret.txt", "plain.txt"): "denied",
        ("f.txt", "secret-f.txt"): "denied",
        ("folder", "folder2"): "denied",
        # protected at either end, and inside a folder
        (".git/config", "config"): "protected",
        ("f.txt", ".vscode/f.txt"): "protected",
        ("repo", "repo2"): "protected",
        # a folder into itself, a workspace folder, nothing there
        ("folder", "folder/inner/x"): "invalid_path",
        (str(workspace), "ws2"): "invalid_path",
        ("nothing.txt", "x.txt"): "not_found",
        ("f.txt", "f.txt"): "no_change",
    }
    for (src, dst), code in cases.items():
        r = await call(mover, MOVE, source_path=src, destination_path=dst)
        assert r["ok"] is False and r["error"] == code, (src, dst, r)
        assert r["message"], (src, dst)
    # nothing moved
    assert (workspace / "f.txt").read_text() == "f\n" and (outside / "o.txt").exists()
    assert (workspace / "folder" / "inner" / "secret.key").exists()
    assert not (outside / "f.txt").exists()


async def test_a_read_only_session_and_a_dry_run_move_nothing(
    mover: LanguageClient, workspace: Path
) -> None:
    (workspace / "a.txt").write_text("a\n")
    assert (await call(mover, FORK, session="viewer", read_only=True))["ok"]
    r = await call(mover, MOVE, source_path="a.txt", destination_path="b.txt", session="viewer")
    assert r["error"] == "read_only", r
    dry = await call(mover, MOVE, source_path="a.txt", destination_path="b.txt", dry_run=True)
    assert dry["ok"] and dry["dry_run"] is True and "Nothing was moved" in dry["message"]
    assert (workspace / "a.txt").exists() and not (workspace / "b.txt").exists()


async def test_a_folder_over_max_move_files_is_refused_with_its_count(
    mover: LanguageClient, workspace: Path
) -> None:
    big = workspace / "big"
    big.mkdir()
    for i in range(6):
        (big / f"{i}.txt").write_text(f"{i}\n")
    r = await call(mover, MOVE, source_path="big", destination_path="big2")
    assert r["error"] == "too_large" and r["count"] == 6 and "maxMoveFiles" in r["message"], r
    assert len(list(big.iterdir())) == 6 and not (workspace / "big2").exists()


#: A folder on another volume than the workspace's (a tmpfs), allowed to the server.
SHM = Path("/dev/shm") / f"steadyhand-move-{os.getpid()}"


@pytest_lsp.fixture(config=server_config())
async def two_volumes(lsp_client: LanguageClient, workspace: Path):  # type: ignore[no-untyped-def]
    if not SHM.parent.is_dir() or os.stat(SHM.parent).st_dev == workspace.stat().st_dev:
        pytest.skip("needs a second volume (/dev/shm)")
    SHM.mkdir(exist_ok=True)
    opts = {"historyDir": str(workspace.parent / "state"), "allowedPaths": [str(SHM)]}
    await lsp_client.initialize_session(init_params(workspace, opts))
    yield
    await lsp_client.shutdown_session()
    shutil.rmtree(SHM, ignore_errors=True)


async def test_another_volume_is_refused_never_copied(
    two_volumes: LanguageClient, workspace: Path
) -> None:
    (workspace / "a.txt").write_text("a\n")
    r = await call(two_volumes, MOVE, source_path="a.txt", destination_path=str(SHM / "a.txt"))
    assert r["error"] == "io_error" and r["reason"] == "cross_volume", r
    assert "different volumes" in r["message"]
    assert (workspace / "a.txt").read_text() == "a\n" and not (SHM / "a.txt").exists()

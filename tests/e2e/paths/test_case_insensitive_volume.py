"""The server on a real case-insensitive file system: a FAT image mounted through FUSE.

Lookups there ignore case (``secret.env`` opens ``Secret.ENV``), as on a default APFS or
NTFS volume, so everything that takes a path as a key or judges it by its name is held
to one file, one spelling: confinement, deny and protected globs, the agents' records,
the history and the editor's documents. Skipped where FUSE or fusefat is missing (with
the reason), except under ``CI=true``, where it must run (``.ci/run`` installs them).
The emulated macOS run takes it too.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from pytest_lsp import LanguageClient

from steadyhand.protocol.commands import EDIT, HISTORY, READ, UNDO, WRITE
from tests.conftest import call, client_with
from tests.editor import EditorState, open_doc, settle


def _fusermount() -> str:
    return shutil.which("fusermount") or shutil.which("fusermount3") or "fusermount"


def _unavailable() -> str | None:
    missing = [t for t in ("fusefat", "mkfs.vfat") if shutil.which(t) is None]
    if shutil.which(_fusermount()) is None:
        missing.append("fusermount")
    if missing:
        return f"{', '.join(missing)} not installed (apt-get install fusefat dosfstools fuse)"
    if not os.path.exists("/dev/fuse"):
        return "no /dev/fuse on this machine"
    return None


@pytest.fixture(scope="module")
def fat(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A 32 MiB FAT16 file system mounted read-write through FUSE."""
    why = _unavailable()
    if why is not None:
        if os.environ.get("CI") == "true":
            pytest.fail(f"the FAT battery must run under CI: {why}")
        pytest.skip(why)
    base = tmp_path_factory.mktemp("fat")
    img, mnt = base / "volume.img", base / "mnt"
    mnt.mkdir()
    subprocess.run(["mkfs.vfat", "-C", str(img), "32768"], check=True, capture_output=True)
    done = subprocess.run(
        ["fusefat", "-o", "rw+", str(img), str(mnt)], capture_output=True, text=True
    )
    deadline = time.monotonic() + 10
    while not os.path.ismount(mnt) and time.monotonic() < deadline:
        time.sleep(0.05)
    if not os.path.ismount(mnt):
        message = f"fusefat did not mount: {done.stdout} {done.stderr}".strip()
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    try:
        yield mnt
    finally:
        subprocess.run([_fusermount(), "-u", str(mnt)], capture_output=True)


_count = iter(range(1_000_000))


@pytest.fixture
def workspace(fat: Path) -> Path:
    """This module's workspaces lie on the FAT volume (one fresh folder per test)."""
    ws = fat / f"Proj{next(_count)}"
    ws.mkdir()
    return ws


denying = client_with({"denyGlobs": [".env", "secrets/**"]})
plain = client_with()
editor = client_with(editor=True)


def test_the_volume_ignores_case(fat: Path) -> None:
    (fat / "Probe.TXT").write_text("x")
    assert (fat / "probe.txt").read_text() == "x"
    assert os.listdir(fat).count("Probe.TXT") == 1


async def test_denied_names_are_denied_in_every_spelling(
    denying: LanguageClient, workspace: Path
) -> None:
    (workspace / ".ENV").write_text("TOKEN=1\n")
    (workspace / "Secrets").mkdir()
    (workspace / "Secrets" / "Key.pem").write_text("k\n")
    for spelling in (".ENV", ".env", ".Env", "Secrets/Key.pem", "SECRETS/key.PEM"):
        r = await call(denying, READ, file_path=spelling)
        assert not r["ok"] and r["error"] == "denied", (spelling, r)
    # a name that does not exist yet is judged by the glob, whatever its case
    r = await call(denying, WRITE, file_path="SECRETS/new.txt", content="x\n")
    assert not r["ok"] and r["error"] == "denied", r


async def test_protected_names_are_protected_in_every_spelling(
    plain: LanguageClient, workspace: Path
) -> None:
    (workspace / ".git").mkdir()
    (workspace / ".git" / "config").write_text("[core]\n")
    for spelling in (".Git/config", ".GIT/CONFIG", ".git/Config"):
        assert (await call(plain, READ, file_path=spelling))["ok"]
        r = await call(plain, WRITE, file_path=spelling, content="[core]\n\tbare = true\n")
        assert not r["ok"] and r["error"] == "protected", (spelling, r)
    r = await call(plain, WRITE, file_path=".GIT/hooks/pre-commit", content="#!/bin/sh\n")
    assert not r["ok"] and r["error"] == "protected", r
    assert (workspace / ".git" / "config").read_text() == "[core]\n"


async def test_one_file_is_one_record_and_keeps_its_stored_name(
    plain: LanguageClient, workspace: Path
) -> None:
    (workspace / "Notes.txt").write_text("alpha\nbeta\n")
    r = await call(plain, READ, file_path="notes.TXT")
    assert r["ok"], r
    # read under one spelling, edited under another: the same record, no not_read
    r = await call(plain, EDIT, file_path="NOTES.txt", old_string="beta", new_string="gamma")
    assert r["ok"], r
    assert (workspace / "Notes.txt").read_text() == "alpha\ngamma\n"
    assert os.listdir(workspace) == ["Notes.txt"]  # never renamed to the spelling used
    # a second read in a third spelling is of a file already seen
    r = await call(plain, READ, file_path="nOtEs.txt")
    assert r["ok"], r
    r = await call(plain, EDIT, file_path="Notes.txt", old_string="alpha", new_string="delta")
    assert r["ok"], r
    assert (workspace / "Notes.txt").read_text() == "delta\ngamma\n"


async def test_a_change_behind_the_agent_is_seen_under_any_spelling(
    plain: LanguageClient, workspace: Path
) -> None:
    (workspace / "Data.txt").write_text("one\n")
    assert (await call(plain, READ, file_path="data.txt"))["ok"]
    (workspace / "DATA.TXT").write_text("two\n")  # another program, another spelling
    r = await call(plain, EDIT, file_path="Data.TXT", old_string="one", new_string="three")
    assert not r["ok"] and r["error"] == "stale", r
    assert (workspace / "Data.txt").read_text() == "two\n"


async def test_the_workspace_folder_spelled_otherwise_is_inside(
    plain: LanguageClient, workspace: Path
) -> None:
    (workspace / "a.txt").write_text("x\n")
    other = str(workspace).replace("Proj", "PROJ")
    assert other != str(workspace)
    r = await call(plain, READ, file_path=os.path.join(other, "A.TXT"))
    assert r["ok"], r
    outside = workspace.parent / "Elsewhere"
    outside.mkdir()
    (outside / "b.txt").write_text("x\n")
    escaped = os.path.join(other, "..", "ELSEWHERE", "b.txt")
    r = await call(plain, READ, file_path=escaped)
    assert not r["ok"] and r["error"] == "outside_workspace", r


async def test_a_new_file_under_another_spelling_is_the_existing_one(
    plain: LanguageClient, workspace: Path
) -> None:
    (workspace / "Readme.md").write_text("old\n")
    r = await call(plain, WRITE, file_path="README.MD", content="new\n")
    assert not r["ok"] and r["error"] == "not_read", r  # it exists: no blind overwrite
    assert (workspace / "Readme.md").read_text() == "old\n"


async def test_history_of_a_file_answers_every_spelling(
    plain: LanguageClient, workspace: Path
) -> None:
    (workspace / "Log.txt").write_text("a\n")
    assert (await call(plain, READ, file_path="log.txt"))["ok"]
    assert (await call(plain, EDIT, file_path="LOG.txt", old_string="a", new_string="b"))["ok"]
    for spelling in ("Log.txt", "log.TXT"):
        h = await call(plain, HISTORY, file_path=spelling)
        assert h["ok"] and len(h["versions"]) == 1, (spelling, h)
    r = await call(plain, UNDO, file_path="LOG.TXT")
    assert r["ok"], r
    assert (workspace / "Log.txt").read_text() == "a\n"


async def test_the_editor_buffer_is_found_under_another_spelling(
    editor: LanguageClient, workspace: Path
) -> None:
    f = workspace / "Main.py"
    f.write_text("x = 1\n")
    state: EditorState = editor.editor  # type: ignore[attr-defined]
    uri = open_doc(editor, state, workspace / "main.PY")  # the editor's own spelling
    await settle()
    assert (await call(editor, READ, file_path="MAIN.py"))["ok"]
    r = await call(editor, EDIT, file_path="Main.py", old_string="1", new_string="2")
    assert r["ok"] and r["via"] == "workspaceEdit", r
    assert state.buffers[uri].text == "x = 2\n"


async def test_a_rename_of_case_only_is_a_new_name(plain: LanguageClient, workspace: Path) -> None:
    (workspace / "a.txt").write_text("one\n")
    assert (await call(plain, READ, file_path="a.txt"))["ok"]
    os.rename(workspace / "a.txt", workspace / "A.txt")
    assert os.listdir(workspace) == ["A.txt"]
    # the record was of the name "a.txt", which is gone: the file must be read as A.txt
    r = await call(plain, EDIT, file_path="a.txt", old_string="one", new_string="two")
    assert not r["ok"] and r["error"] == "not_read", r
    assert (await call(plain, READ, file_path="A.txt"))["ok"]
    assert (await call(plain, EDIT, file_path="a.txt", old_string="one", new_string="two"))["ok"]
    assert os.listdir(workspace) == ["A.txt"]
    assert (workspace / "A.txt").read_text() == "two\n"

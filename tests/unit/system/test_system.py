"""The system layer on this machine: the calls chosen for it keep their promises."""

from __future__ import annotations

import errno
import os
import subprocess
import sys
import unicodedata
from pathlib import Path

import pytest

from steadyhand import system
from steadyhand.system import at, checked, locks, names, process, rename
from steadyhand.system.dirs import state_dir


def test_describe_names_this_system_and_a_mechanism_per_promise() -> None:
    d = system.describe()
    want = {"linux": "linux", "darwin": "macos", "win32": "windows"}.get(sys.platform)
    assert d["os"] == want
    for promise in ("checked_open", "atomic_replace", "locks", "watch", "state_dir"):
        assert d[promise]


def test_state_dir_honours_the_overrides(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("STEADYHAND_STATE_DIR", str(tmp_path / "explicit"))
    assert state_dir() == str(tmp_path / "explicit")
    monkeypatch.delenv("STEADYHAND_STATE_DIR")
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "xdg"))
    assert state_dir() == str(tmp_path / "xdg" / "steadyhand")
    monkeypatch.delenv("XDG_STATE_HOME")
    assert state_dir().endswith("steadyhand")


def test_pid_alive() -> None:
    assert process.alive(os.getpid())
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    assert not process.alive(child.pid)


def test_swap_and_no_replace(tmp_path: Path) -> None:
    (tmp_path / "a").write_text("A")
    (tmp_path / "b").write_text("B")
    dfd = at.open_folder(str(tmp_path))
    try:
        try:
            rename.rename_flags("a", "b", rename.RENAME_EXCHANGE, dfd)
        except OSError as exc:
            if exc.errno in (errno.ENOSYS, errno.EINVAL):
                pytest.skip("no swap on this file system")
            raise
        assert (tmp_path / "a").read_text() == "B" and (tmp_path / "b").read_text() == "A"
        with pytest.raises(FileExistsError):
            rename.rename_flags("a", "b", rename.RENAME_NOREPLACE, dfd)
        rename.replace("a", "b", dfd)
        assert (tmp_path / "b").read_text() == "B" and not (tmp_path / "a").exists()
    finally:
        at.close(dfd)


@pytest.mark.skipif(sys.platform == "win32", reason="symbolic links need a privilege there")
def test_the_folder_walk_refuses_a_link(tmp_path: Path) -> None:
    (tmp_path / "real").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "real")
    with pytest.raises(OSError) as err:
        at.open_folder(str(tmp_path / "link" / "x"))
    assert err.value.errno in (errno.ELOOP, errno.ENOTDIR, errno.ENOENT)
    fd = at.open_folder(str(tmp_path / "real"))
    at.close(fd)


@pytest.mark.skipif(sys.platform == "win32", reason="no FIFOs in the file system there")
def test_a_probe_never_opens_a_fifo(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe")
    pr = checked.probe(str(tmp_path / "pipe"), None)
    try:
        assert not (pr.st.st_mode & 0o100000)  # not a regular file: the caller refuses it
    finally:
        pr.close()


@pytest.mark.skipif(sys.platform == "win32", reason="the other process uses flock")
def test_locks_exclude_another_process(tmp_path: Path) -> None:
    f = tmp_path / "lock"
    fd = os.open(f, os.O_RDWR | os.O_CREAT, 0o600)
    code = (
        "import os, sys, fcntl\n"
        f"fd = os.open({str(f)!r}, os.O_RDWR)\n"
        "try:\n    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)\nexcept OSError:\n"
        "    sys.exit(3)\n"
    )
    try:
        locks.lock(fd)
        assert subprocess.run([sys.executable, "-c", code]).returncode == 3
        locks.unlock(fd)
        assert subprocess.run([sys.executable, "-c", code]).returncode == 0
    finally:
        os.close(fd)


def test_the_volume_of_tmp_is_asked_and_remembered(tmp_path: Path) -> None:
    (tmp_path / "Name.txt").write_text("x")
    ignores = (tmp_path / "NAME.TXT").exists()  # what the volume does, asked directly
    assert names.case_insensitive(str(tmp_path)) is ignores
    assert names.known_volume(os.stat(tmp_path).st_dev) is ignores


def test_listed_spelling_takes_each_name_as_its_folder_lists_it(tmp_path: Path) -> None:
    (tmp_path / "Sub").mkdir()
    (tmp_path / "Sub" / "Notes.TXT").write_text("x")
    stored = str(tmp_path / "Sub" / "Notes.TXT")
    assert names.listed_spelling(str(tmp_path / "SUB" / "notes.txt"), insensitive=True) == stored
    assert names.listed_spelling(stored, insensitive=False) == stored
    new = str(tmp_path / "SUB" / "New.txt")  # what does not exist is kept as given
    assert names.listed_spelling(new, insensitive=True) == str(tmp_path / "Sub" / "New.txt")
    asked = str(tmp_path / "SUB" / "notes.txt")
    if not (tmp_path / "SUB").exists():  # a volume that compares names byte for byte
        assert names.listed_spelling(asked, insensitive=False) == asked


def test_fold_compares_forms_where_the_system_does() -> None:
    nfc, nfd = "caf\u00e9", unicodedata.normalize("NFD", "caf\u00e9")
    assert names.fold("A" + nfc, insensitive=True) == names.fold("a" + nfc, insensitive=True)
    assert (names.fold(nfc, insensitive=False) == names.fold(nfd, insensitive=False)) is (
        names.FORM_INSENSITIVE
    )
    assert checked.same_name("/x/" + nfc, "/X/" + nfd)


@pytest.mark.parametrize(
    ("told", "path", "agree"),
    [
        ("/Users/ana/p/x.txt", "/Users/ana/p/x.txt", True),
        ("/users/ANA/p/X.txt", "/Users/ana/p/x.txt", True),
        ("/System/Volumes/Data/Users/ana/p/x.txt", "/Users/ana/p/x.txt", True),
        ("\\\\srv\\share\\proj\\a.txt", "Z:\\proj\\a.txt", True),
        ("C:\\Proj\\A.TXT", "c:\\proj\\a.txt", True),
        ("/x/other/y.txt", "/x/p/y.txt", False),
        ("/x/p/z.txt", "/x/p/y.txt", False),
    ],
)
def test_a_name_the_system_reports_agrees_with_the_path_opened(
    told: str, path: str, agree: bool
) -> None:
    assert checked.names_agree(told, path) is agree

"""The per-user runtime folder: where it is comes from who the user is (never from the
environment), a folder is used only when it is this user's (and is made private when
others could enter it), and an entry is trusted only when it is this user's and closed
to everyone else."""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from steadyhand.system import runtime_dir

posix_only = pytest.mark.skipif(sys.platform == "win32", reason="POSIX folders and modes")

KINDS = {
    "folder": stat.S_IFDIR,
    "file": stat.S_IFREG,
    "socket": stat.S_IFSOCK,
    "link": stat.S_IFLNK,
    "fifo": stat.S_IFIFO,
}


@given(st.sampled_from(sorted(KINDS)), st.integers(0, 0o7777), st.sampled_from([0, 1000, 65534]))
def test_a_folder_is_fit_when_it_is_a_folder_of_this_user(
    kind: str, perms: int, owner: int
) -> None:
    problem = runtime_dir.folder_problem(KINDS[kind] | perms, owner, 1000)
    assert (problem is None) is (kind == "folder" and owner == 1000)


@given(
    st.sampled_from(sorted(KINDS)),
    st.sampled_from(["file", "socket"]),
    st.integers(0, 0o7777),
    st.sampled_from([0, 1000, 65534]),
)
def test_an_entry_is_trusted_when_of_its_kind_mine_and_closed_to_others(
    kind: str, wanted: str, perms: int, owner: int
) -> None:
    problem = runtime_dir.entry_problem(KINDS[kind] | perms, owner, 1000, kind=wanted)
    trusted = kind == wanted and owner == 1000 and not perms & 0o077
    assert (problem is None) is trusted


_FILTERED = ("XDG_RUNTIME_DIR", "XDG_CACHE_HOME", "HOME", "TMPDIR", "STEADYHAND_RUNTIME_DIR")


@posix_only
@pytest.mark.parametrize("platform", ["linux", "darwin"])
def test_the_folders_do_not_depend_on_the_environment(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, platform: str
) -> None:
    monkeypatch.setattr(sys, "platform", platform)
    for name in _FILTERED:
        monkeypatch.delenv(name, raising=False)
    bare = runtime_dir.candidates()
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    assert runtime_dir.candidates() == bare
    uid = os.geteuid()
    assert bare[-1] == f"/tmp/steadyhand-{uid}"
    assert not any(str(tmp_path) in c for c in bare)
    import pwd

    home = pwd.getpwuid(uid).pw_dir
    if os.path.isdir(home) and os.stat(home).st_uid == uid:
        if platform == "darwin":
            assert bare[0] == os.path.join(home, "Library", "Caches", "steadyhand", "run")
        else:
            assert os.path.join(home, ".cache", "steadyhand", "run") in bare


@posix_only
def test_the_login_runtime_folder_comes_first_when_it_is_private(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(sys, "platform", "linux")
    monkeypatch.delenv("STEADYHAND_RUNTIME_DIR", raising=False)
    run = f"/run/user/{os.geteuid()}"
    got = runtime_dir.candidates()
    try:
        st_run = os.lstat(run)
    except OSError:
        assert not any(c.startswith(run) for c in got)
        return
    private = stat.S_ISDIR(st_run.st_mode) and st_run.st_uid == os.geteuid()
    private = private and not st_run.st_mode & 0o077
    assert (got[0] == os.path.join(run, "steadyhand")) is private


def test_the_override_names_one_folder(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv(runtime_dir.OVERRIDE, str(tmp_path / "run"))
    assert runtime_dir.candidates() == [str(tmp_path / "run")]
    monkeypatch.setenv(runtime_dir.OVERRIDE, "relative/run")  # ignored: not absolute
    assert runtime_dir.candidates() != ["relative/run"]


@posix_only
def test_a_folder_is_made_private(tmp_path: Path) -> None:
    made = runtime_dir.private(str(tmp_path / "a" / "run"), create=True)
    assert made == runtime_dir.Folder(str(tmp_path / "a" / "run"))
    assert stat.S_IMODE(os.stat(tmp_path / "a" / "run").st_mode) == 0o700
    # found again, as it is
    assert runtime_dir.private(str(tmp_path / "a" / "run"), create=False) == made
    # not made when not asked to
    assert runtime_dir.private(str(tmp_path / "none"), create=False) is None
    assert not (tmp_path / "none").exists()


@posix_only
def test_a_folder_open_to_others_is_taken_back(tmp_path: Path) -> None:
    open_ = tmp_path / "open"
    open_.mkdir()
    os.chmod(open_, 0o777)
    got = runtime_dir.private(str(open_), create=False)
    assert got == runtime_dir.Folder(str(open_), tightened=True)
    assert stat.S_IMODE(os.stat(open_).st_mode) == 0o700


@posix_only
def test_a_link_or_a_file_is_no_folder(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir(mode=0o700)
    (tmp_path / "link").symlink_to(real)
    assert runtime_dir.private(str(tmp_path / "link"), create=False) is None
    assert runtime_dir.private(str(tmp_path / "link"), create=True) is None
    (tmp_path / "file").write_text("")
    assert runtime_dir.private(str(tmp_path / "file"), create=True) is None


@posix_only
def test_a_folder_of_another_user_is_not_used(tmp_path: Path) -> None:
    if os.geteuid() != 0:
        pytest.skip("needs root to give a folder away")
    theirs = tmp_path / "theirs"
    theirs.mkdir(mode=0o700)
    os.chown(theirs, 65534, 65534)
    assert runtime_dir.private(str(theirs), create=True) is None
    assert os.stat(theirs).st_uid == 65534  # left alone


@posix_only
def test_entries_are_judged_on_the_open_file(tmp_path: Path) -> None:
    mine = tmp_path / "mine.json"
    mine.write_text("{}")
    os.chmod(mine, 0o600)
    with open(mine, "rb") as fh:
        assert runtime_dir.file_is_private(fh.fileno())
    os.chmod(mine, 0o644)
    with open(mine, "rb") as fh:
        assert not runtime_dir.file_is_private(fh.fileno())
    if os.geteuid() == 0:
        os.chmod(mine, 0o600)
        os.chown(mine, 65534, 65534)
        with open(mine, "rb") as fh:
            assert not runtime_dir.file_is_private(fh.fileno())


@posix_only
def test_a_socket_is_trusted_when_mine_and_closed(tmp_path: Path) -> None:
    import socket

    where = tmp_path / "s.sock"
    with socket.socket(socket.AF_UNIX) as s:
        s.bind(str(where))
        os.chmod(where, 0o600)
        assert runtime_dir.socket_is_private(str(where))
        os.chmod(where, 0o666)
        assert not runtime_dir.socket_is_private(str(where))
    (tmp_path / "link.sock").symlink_to(where)
    assert not runtime_dir.socket_is_private(str(tmp_path / "link.sock"))
    assert not runtime_dir.socket_is_private(str(tmp_path / "missing.sock"))

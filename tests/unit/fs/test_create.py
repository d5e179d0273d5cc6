"""Creating a file: written without a name (``O_TMPFILE``) and named only when complete,
never over a file that appeared meanwhile, with the named temp file as the fallback where
the file system cannot do that. Every way must leave the same file, or nothing."""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

import pytest

from steadyhand.fs import atomic
from steadyhand.fs.syscalls import Syscalls
from steadyhand.protocol.errors import ErrorCode, ToolError

DATA = b"alpha\nbeta\n"


def _mode_for_new() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return 0o666 & ~mask


class _Recorder(Syscalls):
    """Real system calls, with a note of which way the file was made."""

    def __init__(self) -> None:
        self.calls: list[str] = []

    def open_anonymous(self, dir_fd: int, mode: int = 0o600) -> int:
        self.calls.append("open_anonymous")
        return super().open_anonymous(dir_fd, mode)

    def link_anonymous(self, fd: int, name: str, dir_fd: int) -> None:
        self.calls.append("link_anonymous")
        super().link_anonymous(fd, name, dir_fd)

    def open(self, path: str, flags: int, mode: int = 0o600, dir_fd: int | None = None) -> int:
        self.calls.append("open")
        return super().open(path, flags, mode, dir_fd)

    def rename(self, src: str, dst: str, dir_fd: int | None = None, flags: int = 0) -> None:
        self.calls.append("rename")
        super().rename(src, dst, dir_fd, flags)


class _NoAnonymous(_Recorder):
    """A file system without anonymous files."""

    def open_anonymous(self, dir_fd: int, mode: int = 0o600) -> int:
        self.calls.append("open_anonymous")
        raise OSError(errno.EOPNOTSUPP, "not supported here")


class _NoLinks(_Recorder):
    """A file system that holds no hard links."""

    def link_anonymous(self, fd: int, name: str, dir_fd: int) -> None:
        self.calls.append("link_anonymous")
        raise OSError(errno.EPERM, "no links here")


class _Racer(_Recorder):
    """Someone else creates the file between our write and our naming of it."""

    def __init__(self, other: bytes) -> None:
        super().__init__()
        self.other = other

    def link_anonymous(self, fd: int, name: str, dir_fd: int) -> None:
        with open(os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL, dir_fd=dir_fd), "wb") as f:
            f.write(self.other)
        super().link_anonymous(fd, name, dir_fd)


class _BadClose(_Recorder):
    """close(2) reports that the bytes may not all be stored."""

    def close(self, fd: int) -> None:
        os.close(fd)
        raise OSError(errno.EIO, "input/output error")


def _create(path: Path, sys: Syscalls, *, fsync: bool = False) -> os.stat_result:
    return atomic.atomic_write(str(path), DATA, sys=sys, fsync=fsync, create=True)


@pytest.mark.parametrize("fsync", [False, True])
def test_a_new_file_is_written_without_a_name_and_then_named(tmp_path: Path, fsync: bool) -> None:
    sys = _Recorder()
    st = _create(tmp_path / "new.txt", sys, fsync=fsync)
    assert (tmp_path / "new.txt").read_bytes() == DATA
    assert os.listdir(tmp_path) == ["new.txt"]
    assert sys.calls == ["open_anonymous", "link_anonymous"]
    got = os.stat(tmp_path / "new.txt")
    assert stat.S_IMODE(got.st_mode) == _mode_for_new()
    assert (st.st_ino, st.st_size) == (got.st_ino, len(DATA))


@pytest.mark.parametrize("sys", [_NoAnonymous(), _NoLinks()], ids=["no-tmpfile", "no-links"])
def test_without_anonymous_files_a_named_temp_file_is_used(tmp_path: Path, sys: _Recorder) -> None:
    _create(tmp_path / "new.txt", sys)
    assert (tmp_path / "new.txt").read_bytes() == DATA
    assert os.listdir(tmp_path) == ["new.txt"]
    assert "open" in sys.calls and "rename" in sys.calls
    assert stat.S_IMODE(os.stat(tmp_path / "new.txt").st_mode) == _mode_for_new()


def test_a_file_that_appears_meanwhile_is_never_replaced(tmp_path: Path) -> None:
    with pytest.raises(ToolError) as info:
        _create(tmp_path / "new.txt", _Racer(b"theirs\n"))
    assert info.value.code == ErrorCode.STALE
    assert (tmp_path / "new.txt").read_bytes() == b"theirs\n"
    assert os.listdir(tmp_path) == ["new.txt"]


def test_a_failed_close_takes_the_new_name_back(tmp_path: Path) -> None:
    with pytest.raises(OSError) as info:
        _create(tmp_path / "new.txt", _BadClose())
    assert info.value.errno == errno.EIO
    assert os.listdir(tmp_path) == []


def test_new_folders_are_made_and_removed_again_on_failure(tmp_path: Path) -> None:
    _create(tmp_path / "a" / "b" / "new.txt", _Recorder())
    assert (tmp_path / "a" / "b" / "new.txt").read_bytes() == DATA
    with pytest.raises(OSError):
        _create(tmp_path / "c" / "d" / "new.txt", _BadClose())
    assert sorted(os.listdir(tmp_path)) == ["a"]

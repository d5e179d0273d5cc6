"""Writes where the system differs: a file system without permission bits, and a file
another program holds open so that it cannot be replaced (Windows)."""

from __future__ import annotations

import errno
from pathlib import Path

import pytest

from steadyhand.fs import atomic
from steadyhand.fs.syscalls import Fault, FaultPlan, Syscalls
from steadyhand.protocol.errors import ErrorCode, ToolError
from steadyhand.state.hashing import content_hash
from steadyhand.system.rename import FileBusy


@pytest.mark.parametrize("err", [errno.ENOSYS, errno.EOPNOTSUPP])
def test_a_file_system_without_modes_still_takes_writes(tmp_path: Path, err: int) -> None:
    """FAT and exFAT (through FUSE) answer ``fchmod`` with ENOSYS: there is no mode to
    keep, and the write must not fail for it."""
    f = tmp_path / "a.txt"
    f.write_bytes(b"old\n")
    plan = FaultPlan([Fault("fchmod", err)])
    atomic.atomic_write(str(f), b"new\n", sys=plan, fsync=False, expect=content_hash(b"old\n"))
    assert f.read_bytes() == b"new\n"
    plan = FaultPlan([Fault("fchmod", err)])
    atomic.atomic_write(str(tmp_path / "b.txt"), b"b\n", sys=plan, fsync=False, create=True)
    assert (tmp_path / "b.txt").read_bytes() == b"b\n"


def test_a_refused_mode_still_fails_the_write(tmp_path: Path) -> None:
    f = tmp_path / "a.txt"
    f.write_bytes(b"old\n")
    with pytest.raises(OSError):
        atomic.atomic_write(
            str(f),
            b"new\n",
            sys=FaultPlan([Fault("fchmod", errno.EIO)]),
            fsync=False,
            expect=content_hash(b"old\n"),
        )
    assert f.read_bytes() == b"old\n"
    assert [p.name for p in tmp_path.iterdir()] == ["a.txt"]


class _Held(Syscalls):
    """Every rename meets a file held open without FILE_SHARE_DELETE (Windows's
    ReplaceFileW and MoveFileExW give up so after their tries)."""

    def rename(self, src: str, dst: str, dir_fd: int | None = None, flags: int = 0) -> None:
        raise FileBusy(dst, PermissionError(errno.EACCES, "The process cannot access the file"))


@pytest.mark.parametrize("expect", [True, False])
def test_a_file_held_open_is_refused_as_in_use_and_nothing_is_lost(
    tmp_path: Path, expect: bool
) -> None:
    f = tmp_path / "report.docx"
    f.write_bytes(b"theirs\n")
    with pytest.raises(ToolError) as err:
        atomic.atomic_write(
            str(f),
            b"ours\n",
            sys=_Held(),
            fsync=False,
            expect=content_hash(b"theirs\n") if expect else None,
        )
    assert err.value.code is ErrorCode.FILE_IN_USE
    assert "open in another program" in err.value.message
    assert err.value.fields["cause"]
    assert f.read_bytes() == b"theirs\n"
    assert [p.name for p in tmp_path.iterdir()] == ["report.docx"]  # no temp file left

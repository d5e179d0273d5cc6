"""Replacing a file: what the new file keeps of the old one, and what may not fail once
the new bytes are in place."""

from __future__ import annotations

import os
import shutil
import stat
import tempfile
from collections.abc import Callable
from pathlib import Path

import pytest

from steadyhand.apply.disk import delete_from_disk
from steadyhand.documents.snapshot import Snapshot
from steadyhand.fs import atomic
from steadyhand.fs.syscalls import Syscalls
from steadyhand.protocol.errors import ErrorCode, ToolError
from steadyhand.state.hashing import content_hash
from steadyhand.text.encoding import UTF8


def _replace(path: Path, data: bytes, later: atomic.Later | None = None) -> os.stat_result:
    old = path.read_bytes()
    return atomic.atomic_write(
        str(path), data, sys=Syscalls(), fsync=False, expect=content_hash(old), later=later
    )


def test_setuid_and_setgid_bits_are_kept(tmp_path: Path) -> None:
    """A change of owner clears setuid and setgid, so the mode is given after it."""
    f = tmp_path / "tool"
    f.write_bytes(b"#!/bin/sh\necho 1\n")
    f.chmod(0o6755)
    _replace(f, b"#!/bin/sh\necho 2\n")
    assert stat.S_IMODE(f.stat().st_mode) == 0o6755
    assert f.read_bytes() == b"#!/bin/sh\necho 2\n"


def test_a_long_name_in_any_script_can_be_replaced(tmp_path: Path) -> None:
    """The temp file's name takes the first 100 bytes of the name, not 100 characters."""
    for name in ("\U0001f600" * 58 + ".md", "文" * 80 + ".txt", "é" * 120):
        assert len(name.encode()) > 200
        f = tmp_path / name
        f.write_bytes(b"v1\n")
        _replace(f, b"v2\n")
        assert f.read_bytes() == b"v2\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        ("\U0001f600" * 58 + ".md", "文" * 80 + ".txt", "é" * 120)
    )


def test_once_the_new_bytes_are_in_place_the_write_succeeds(tmp_path: Path) -> None:
    """When the removal of the old copy cannot be put off, it is done at once, and the
    write still succeeds (it must never say "nothing changed" once it changed)."""
    f = tmp_path / "f.txt"
    f.write_bytes(b"old\n")

    def refuse(job: object) -> None:
        raise RuntimeError("no loop to run it on")

    _replace(f, b"new\n", later=refuse)
    assert f.read_bytes() == b"new\n"
    assert [p.name for p in tmp_path.iterdir()] == ["f.txt"]


def test_temp_names_of_names_with_a_line_break_are_recognised() -> None:
    tmp = atomic.temp_basename("a\nb")
    assert atomic.TEMP_PATTERN.match(tmp)
    assert atomic.TEMP_PATTERN.match(atomic.temp_basename("\U0001f600" * 60))


def _disk_snapshot(path: Path) -> Snapshot:
    data = path.read_bytes()
    st = path.stat()
    return Snapshot(
        str(path), "disk", data.decode(), UTF8, content_hash(data), st.st_size, st.st_mtime_ns
    )


def test_a_delete_removes_only_the_content_it_was_checked_against(tmp_path: Path) -> None:
    f = tmp_path / "made.txt"
    f.write_bytes(b"agent text\n")
    before = _disk_snapshot(f)
    f.write_bytes(b"the user's new work\n")  # after the check, before the delete
    with pytest.raises(ToolError) as err:
        delete_from_disk(str(f), before, Syscalls(), fsync=False)
    assert err.value.code == ErrorCode.STALE
    assert f.read_bytes() == b"the user's new work\n"
    assert [p.name for p in tmp_path.iterdir()] == ["made.txt"]
    unchanged = _disk_snapshot(f)
    delete_from_disk(str(f), unchanged, Syscalls(), fsync=True)
    assert list(tmp_path.iterdir()) == []
    delete_from_disk(str(f), unchanged, Syscalls(), fsync=False)  # already gone: fine


def test_a_delete_never_goes_through_a_folder_swapped_for_a_link(tmp_path: Path) -> None:
    ws, outside = tmp_path / "ws", tmp_path / "outside"
    (ws / "sub").mkdir(parents=True)
    outside.mkdir()
    (outside / "new.txt").write_bytes(b"x\n")
    inside = ws / "sub" / "new.txt"
    inside.write_bytes(b"x\n")
    before = _disk_snapshot(inside)
    shutil.rmtree(ws / "sub")
    (ws / "sub").symlink_to(outside)  # after the path was checked
    with pytest.raises(ToolError) as err:
        delete_from_disk(str(inside), before, Syscalls(), fsync=False)
    assert err.value.code == ErrorCode.INVALID_PATH
    assert (outside / "new.txt").read_bytes() == b"x\n"


def _as_other_user(job: Callable[[], int]) -> int:
    """``job``'s exit code, run in a child process as the unprivileged user ``nobody``
    (uid 65534) when this runs as root, else as this user."""
    pid = os.fork()
    if pid == 0:  # the child: never returns into pytest
        code = 99
        try:
            if os.geteuid() == 0:
                os.setgid(65534)
                os.setuid(65534)
            code = job()
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status)


def test_a_file_its_permissions_keep_from_writing_is_left_as_it_is() -> None:
    """Replacing takes only the folder's permission; the file's own must allow writing it
    too, as for an editor's save. The refusal is an OSError (``io_error`` for the tool)."""
    folder = Path(tempfile.mkdtemp(prefix="steadyhand-perm-"))
    try:
        folder.chmod(0o777)
        f = folder / "locked.txt"
        f.write_bytes(b"keep\n")
        f.chmod(0o444)
        expect = content_hash(b"keep\n")

        def attempt() -> int:
            try:
                atomic.atomic_write(str(f), b"new\n", sys=Syscalls(), fsync=False, expect=expect)
            except PermissionError:
                return 0
            return 1

        assert _as_other_user(attempt) == 0
        assert f.read_bytes() == b"keep\n"
        assert [p.name for p in folder.iterdir()] == ["locked.txt"]
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def test_extended_attributes_are_kept(tmp_path: Path) -> None:
    f = tmp_path / "tagged.txt"
    f.write_bytes(b"v1\n")
    try:
        os.setxattr(f, "user.origin", b"downloaded")
    except OSError as exc:
        pytest.skip(f"this file system keeps no user attributes ({exc.strerror})")
    _replace(f, b"v2\n")
    assert f.read_bytes() == b"v2\n"
    assert os.getxattr(f, "user.origin") == b"downloaded"


class _WriterAtTheSwap(Syscalls):
    """Another program writes the file right before the checked swap."""

    def __init__(self, path: Path, theirs: bytes) -> None:
        super().__init__()
        self.path, self.theirs = path, theirs

    def rename(self, src: str, dst: str, dir_fd: int | None = None, flags: int = 0) -> None:
        if flags and self.theirs:
            self.path.write_bytes(self.theirs)  # in place, as an editor saving would
            self.theirs = b""
        super().rename(src, dst, dir_fd, flags)


def _swap_raced(tmp_path: Path) -> tuple[Path, ToolError]:
    f = tmp_path / "f.txt"
    f.write_bytes(b"old\n")
    with pytest.raises(ToolError) as info:
        atomic.atomic_write(
            str(f),
            b"ours\n",
            sys=_WriterAtTheSwap(f, b"theirs\n"),
            fsync=False,
            expect=content_hash(b"old\n"),
        )
    assert info.value.code is ErrorCode.STALE
    return f, info.value


def test_a_write_at_the_swap_is_put_back(tmp_path: Path) -> None:
    f, err = _swap_raced(tmp_path)
    assert f.read_bytes() == b"theirs\n"
    assert [p.name for p in tmp_path.iterdir()] == ["f.txt"]
    assert "their version is kept" in err.message


def test_their_version_survives_when_it_cannot_be_put_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Both ways of putting theirs back fail: theirs gets a name no clean-up of temp
    files removes, and the refusal says where it is and that the file holds ours."""

    class Refusing(Syscalls):
        def rename(self, src: str, dst: str, dir_fd: int | None = None, flags: int = 0) -> None:
            raise OSError(5, "Input/output error", src)

    def refuse_replace(*args: object, **kwargs: object) -> None:
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(atomic, "_PLAIN", Refusing())
    monkeypatch.setattr(atomic.os, "replace", refuse_replace)
    f, err = _swap_raced(tmp_path)
    monkeypatch.undo()
    kept = err.fields["kept"]
    assert isinstance(kept, str) and not atomic.TEMP_PATTERN.match(kept)
    assert (tmp_path / kept).read_bytes() == b"theirs\n"
    assert f.read_bytes() == b"ours\n"
    assert kept in err.message and "now holds your content" in err.message
    atomic.clean_stale_temps(str(tmp_path))
    assert (tmp_path / kept).read_bytes() == b"theirs\n"

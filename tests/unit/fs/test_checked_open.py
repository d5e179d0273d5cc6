"""Opening a file only once the file opened is one that may be read: checked on its
descriptor (type, link count, device and inode), never opening a FIFO or a device, and
never reading a file whose name in the workspace went away while it was being opened."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from steadyhand.fs import atomic, checked_open
from steadyhand.fs.checked_open import (
    Replaced,
    identity,
    open_checked,
    open_checked_at,
    open_regular,
)
from steadyhand.fs.reader import read_all, stream_window
from steadyhand.protocol.errors import ErrorCode, ToolError


@contextmanager
def blocked_writer(fifo: Path) -> Iterator[threading.Thread]:
    """A thread blocked opening ``fifo`` for writing until someone opens it to read."""
    thread = threading.Thread(target=lambda: os.close(os.open(fifo, os.O_WRONLY)), daemon=True)
    thread.start()
    time.sleep(0.05)
    try:
        yield thread
    finally:
        if thread.is_alive():
            fd = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
            thread.join(5)
            os.close(fd)


def _read(path: Path, **kw: Any) -> bytes:
    fd, _ = open_checked(str(path), **kw)
    try:
        return os.read(fd, 1 << 16)
    finally:
        os.close(fd)


def test_a_plain_file_is_read(tmp_path: Path) -> None:
    f = tmp_path / "f.txt"
    f.write_text("hello\n")
    assert _read(f) == b"hello\n"
    assert _read(f, expect=identity(f.stat())) == b"hello\n"


def test_a_fifo_is_never_opened(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    with blocked_writer(fifo) as writer:
        for call in (
            lambda: _read(fifo),
            lambda: read_all(str(fifo)),
            lambda: stream_window(str(fifo), 1, 10),
        ):
            with pytest.raises(ToolError) as exc:
                call()
            assert exc.value.code is ErrorCode.NOT_REGULAR_FILE
        dfd = os.open(tmp_path, os.O_RDONLY | os.O_DIRECTORY)
        try:
            assert open_checked_at(dfd, "pipe", links_ok=False) is None
            assert atomic._hash_at(dfd, "pipe") is None
        finally:
            os.close(dfd)
        with pytest.raises(OSError):
            open_regular(str(fifo), os.O_RDONLY)
        with pytest.raises(OSError):
            open_regular(str(fifo), os.O_WRONLY | os.O_CREAT | os.O_APPEND)
        assert writer.is_alive(), "the FIFO was opened"


def test_a_second_link_is_refused_unless_allowed(tmp_path: Path) -> None:
    f = tmp_path / "f.txt"
    f.write_text("two names\n")
    os.link(f, tmp_path / "other.txt")
    with pytest.raises(ToolError) as exc:
        _read(f)
    assert exc.value.code is ErrorCode.OUTSIDE_WORKSPACE and "2 hard links" in exc.value.message
    assert _read(f, links_ok=True) == b"two names\n"
    dfd = os.open(tmp_path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        assert atomic._hash_at(dfd, "f.txt") is None
        assert atomic._hash_at(dfd, "f.txt", links_ok=True) is not None
    finally:
        os.close(dfd)


def test_another_file_than_the_one_resolved_is_replaced(tmp_path: Path) -> None:
    f = tmp_path / "f.txt"
    f.write_text("first\n")
    resolved = identity(f.stat())
    (tmp_path / "new").write_text("second\n")
    os.rename(tmp_path / "new", f)
    with pytest.raises(Replaced):
        _read(f, expect=resolved)
    with pytest.raises(Replaced):
        read_all(str(f), expect=resolved)


def test_a_link_or_a_folder_in_place_of_the_file(tmp_path: Path) -> None:
    (tmp_path / "target.txt").write_text("t\n")
    (tmp_path / "link").symlink_to(tmp_path / "target.txt")
    (tmp_path / "dir").mkdir()
    for name, code in (("link", ErrorCode.INVALID_PATH), ("dir", ErrorCode.IS_DIRECTORY)):
        with pytest.raises(ToolError) as exc:
            _read(tmp_path / name)
        assert exc.value.code is code, name
    with pytest.raises(FileNotFoundError):
        _read(tmp_path / "missing")


def test_a_name_lost_while_opening_never_gives_the_other_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The race behind a leak: the name in the workspace is a hard link to a file
    outside when it is opened, then (before the link count is looked at) the workspace
    name is replaced by a plain file, so the outside file has one link again. The file
    opened must not be read: the name no longer leads to it."""
    ws, out = tmp_path / "ws", tmp_path / "out"
    ws.mkdir()
    out.mkdir()
    secret = out / "secret.txt"
    secret.write_text("SECRET\n")
    name = ws / "f.txt"
    os.link(secret, name)
    real_fstat = os.fstat
    swapped = []

    def fstat(fd: int) -> os.stat_result:
        if not swapped:  # between the O_PATH open and its fstat
            swapped.append(True)
            (ws / "plain").write_text("inside\n")
            os.rename(ws / "plain", name)
        return real_fstat(fd)

    monkeypatch.setattr(checked_open.os, "fstat", fstat)
    try:
        got = _read(name)
    except ToolError as err:
        got = err.message.encode()
    assert b"SECRET" not in got
    assert got == b"inside\n"  # opened again: the name now leads to the plain file


def test_open_regular_creates_or_opens_a_regular_file(tmp_path: Path) -> None:
    p = tmp_path / "journal"
    fd = open_regular(str(p), os.O_WRONLY | os.O_CREAT | os.O_APPEND)
    os.write(fd, b"a")
    os.close(fd)
    fd = open_regular(str(p), os.O_WRONLY | os.O_CREAT | os.O_APPEND)
    os.write(fd, b"b")
    os.close(fd)
    assert p.read_bytes() == b"ab"
    (tmp_path / "link").symlink_to(p)
    with pytest.raises(OSError):
        open_regular(str(tmp_path / "link"), os.O_RDONLY)

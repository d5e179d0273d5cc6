"""Opening paths through no symbolic link: the one-call way (``openat2``) and the
folder-by-folder walk it falls back to must agree on every kind of path."""

from __future__ import annotations

import errno
import os
import stat
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from steadyhand.fs import atomic
from steadyhand.fs.checked_open import open_checked
from steadyhand.fs.syscalls import Syscalls, open_no_symlinks
from steadyhand.paths.resolve import Roots, resolve
from steadyhand.protocol.errors import ToolError
from steadyhand.system import rename as syscalls

pytestmark = pytest.mark.skipif(
    sys.platform != "linux" or not syscalls._openat2_known,
    reason="openat2 is Linux's (>= 5.6), and this kernel or machine has none",
)


@pytest.fixture()
def tree(tmp_path: Path) -> Path:
    """A workspace with files, folders, links in and out of it, a FIFO and a loop."""
    ws = tmp_path / "ws"
    (ws / "sub" / "deep").mkdir(parents=True)
    (ws / "f.txt").write_text("top\n")
    (ws / "sub" / "g.txt").write_text("sub\n")
    (ws / "sub" / "deep" / "h.txt").write_text("deep\n")
    out = tmp_path / "out"
    out.mkdir()
    (out / "secret.txt").write_text("outside\n")
    (ws / "link_in").symlink_to(ws / "sub")
    (ws / "link_out").symlink_to(out)
    (ws / "file_link").symlink_to(ws / "f.txt")
    (ws / "dangling").symlink_to(ws / "nowhere")
    (ws / "loop").symlink_to(ws / "loop")
    os.mkfifo(ws / "pipe")
    return ws


def _paths(ws: Path) -> Iterator[str]:
    names = [
        "f.txt",
        "sub",
        "sub/deep",
        "sub/missing",
        "link_in",
        "sub/g.txt",
        "sub/deep/h.txt",
        "sub/new.txt",
        "sub/missing/new.txt",
        "link_in/g.txt",
        "link_in/new.txt",
        "link_out/secret.txt",
        "link_out/new.txt",
        "file_link",
        "dangling",
        "loop",
        "loop/x",
        "pipe",
        "f.txt/below",
        "new.txt",
        "sub/../f.txt",
    ]
    for name in names:
        yield str(ws / name)


def _outcome(call: Callable[[], object]) -> object:
    try:
        return ("ok", call())
    except ToolError as err:
        return ("refused", err.code)
    except OSError as exc:
        return ("error", exc.errno)


def _without_openat2(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(syscalls, "_openat2_known", False)


def _resolved(path: str, roots: Roots) -> object:
    rp = resolve(path, roots)
    kind = None if rp.stat is None else stat.S_IFMT(rp.stat.st_mode)
    ino = None if rp.stat is None else rp.stat.st_ino
    return rp.path, rp.root, kind, ino


def test_resolve_agrees_with_the_walk(tree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    roots = Roots.of([str(tree)], (), ())
    fast = {p: _outcome(lambda p=p: _resolved(p, roots)) for p in _paths(tree)}
    _without_openat2(monkeypatch)
    slow = {p: _outcome(lambda p=p: _resolved(p, roots)) for p in _paths(tree)}
    assert fast == slow
    # and the cases mean what they should
    assert fast[str(tree / "link_in/g.txt")][1][0] == str(tree / "sub/g.txt")  # type: ignore[index]
    assert fast[str(tree / "link_out/secret.txt")] == ("refused", "outside_workspace")
    assert fast[str(tree / "pipe")] == ("refused", "not_regular_file")
    assert fast[str(tree / "sub/new.txt")][1][2] is None  # type: ignore[index]


def _read_checked(path: str) -> bytes:
    fd, _ = open_checked(path)
    try:
        return os.read(fd, 1 << 16)
    finally:
        os.close(fd)


def test_checked_open_agrees_with_the_walk(tree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fast = {p: _outcome(lambda p=p: _read_checked(p)) for p in _paths(tree)}
    _without_openat2(monkeypatch)
    slow = {p: _outcome(lambda p=p: _read_checked(p)) for p in _paths(tree)}
    assert fast == slow
    assert fast[str(tree / "sub/deep/h.txt")] == ("ok", b"deep\n")
    assert fast[str(tree / "link_out/secret.txt")] == ("refused", "invalid_path")
    assert fast[str(tree / "file_link")] == ("refused", "invalid_path")
    assert fast[str(tree / "pipe")] == ("refused", "not_regular_file")
    assert fast[str(tree / "sub")] == ("refused", "is_directory")


def _open_folder(folder: str, make: bool) -> object:
    fd, created = atomic._open_folder(folder, Syscalls(), make=make, path=folder)
    try:
        st = os.fstat(fd)
    finally:
        os.close(fd)
    for d in reversed(created):
        os.rmdir(d)  # leave the tree as it was for the other way
    return st.st_ino if not created else len(created)


@pytest.mark.parametrize("make", [False, True])
def test_folder_open_agrees_with_the_walk(
    tree: Path, monkeypatch: pytest.MonkeyPatch, make: bool
) -> None:
    fast = {p: _outcome(lambda p=p: _open_folder(p, make)) for p in _paths(tree)}
    _without_openat2(monkeypatch)
    slow = {p: _outcome(lambda p=p: _open_folder(p, make)) for p in _paths(tree)}
    assert fast == slow
    assert fast[str(tree / "link_in")] == ("refused", "invalid_path")
    assert fast[str(tree / "sub/deep")] == ("ok", (tree / "sub/deep").stat().st_ino)
    assert fast[str(tree / "sub/missing")] == (("ok", 1) if make else ("error", errno.ENOENT))


def test_one_call_open_refuses_any_link(tree: Path) -> None:
    for name in ("link_in/g.txt", "file_link", "link_out", "dangling"):
        with pytest.raises(OSError) as info:
            open_no_symlinks(str(tree / name), os.O_PATH)
        assert info.value.errno == errno.ELOOP, name
    fd = open_no_symlinks(str(tree / "sub/g.txt"), os.O_RDONLY)
    try:
        assert os.read(fd, 10) == b"sub\n"
        assert os.get_inheritable(fd) is False
    finally:
        os.close(fd)


def test_no_openat2_means_enosys(monkeypatch: pytest.MonkeyPatch, tree: Path) -> None:
    _without_openat2(monkeypatch)
    with pytest.raises(OSError) as info:
        open_no_symlinks(str(tree / "f.txt"), os.O_RDONLY)
    assert info.value.errno == errno.ENOSYS

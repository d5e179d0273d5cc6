"""Confinement first: a path outside the roots, or denied, gets one answer whatever is
there (a file, a folder, nothing, a FIFO, two hard links, a loop, a trailing slash)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from steadyhand.paths.resolve import Roots, resolve
from steadyhand.protocol.errors import ErrorCode, ToolError

KINDS = [
    "file.txt", "file.txt/", "missing", "missing/", "dir", "dir/", "fifo", "fifo/",
    "twice.txt", "loop1", "loop1/x", "file.txt/child", "missing/child", "elsewhere",
    "elsewhere/x/", "long" + "n" * 300,
]  # fmt: skip


@pytest.fixture
def places(tmp_path: Path) -> tuple[Path, Path]:
    ws, out = tmp_path / "ws", tmp_path / "out"
    for top in (ws, out):
        top.mkdir()
    for base in (out, ws / "secrets"):
        base.mkdir(exist_ok=True)
        (base / "file.txt").write_text("x\n")
        (base / "dir").mkdir()
        os.mkfifo(base / "fifo")
        os.link(base / "file.txt", base / "twice.txt")
        (base / "loop1").symlink_to(base / "loop2")
        (base / "loop2").symlink_to(base / "loop1")
        (base / "elsewhere").symlink_to("/usr")
    return ws, out


def _refusal(path: str, roots: Roots) -> ToolError:
    with pytest.raises(ToolError) as exc:
        resolve(path, roots)
    return exc.value


def test_every_path_outside_gets_one_answer(places: tuple[Path, Path]) -> None:
    ws, out = places
    roots = Roots.of([str(ws)], (), ())
    seen = set()
    for kind in KINDS:
        given = str(out / kind) + ("/" if kind.endswith("/") else "")
        err = _refusal(given, roots)
        assert err.code is ErrorCode.OUTSIDE_WORKSPACE, (given, err.message)
        assert err.fields["path"] == os.path.normpath(given)
        assert "/usr" not in err.message
        seen.add(err.message.replace(given, "<P>"))
    assert len(seen) == 1, seen


def test_every_denied_path_gets_one_answer(places: tuple[Path, Path]) -> None:
    ws, _ = places
    roots = Roots.of([str(ws)], (), ("secrets/**",))
    seen = set()
    for kind in KINDS:
        if kind.startswith("elsewhere"):  # leads outside: refused as outside
            continue
        given = f"secrets/{kind}"
        err = _refusal(given, roots)
        assert err.code is ErrorCode.DENIED, (given, err.message)
        seen.add(err.message.replace(given, "<P>"))
    assert len(seen) == 1, seen


def test_inside_the_roots_what_is_there_is_judged(places: tuple[Path, Path]) -> None:
    ws, _ = places
    roots = Roots.of([str(ws)], (), ())
    codes = {
        "secrets/file.txt/": ErrorCode.INVALID_PATH,
        "secrets/fifo": ErrorCode.NOT_REGULAR_FILE,
        "secrets/twice.txt": ErrorCode.OUTSIDE_WORKSPACE,
        "secrets/loop1": ErrorCode.INVALID_PATH,
        "secrets/file.txt/child": ErrorCode.INVALID_PATH,
        "secrets/elsewhere": ErrorCode.OUTSIDE_WORKSPACE,
    }
    for given, code in codes.items():
        assert _refusal(given, roots).code is code, given
    assert "through a symbolic link" in _refusal("secrets/elsewhere", roots).message
    assert resolve("secrets/twice.txt", Roots.of([str(ws)], (), (), True)).exists

"""The ignore rules above a folder are kept between listings and searches while the files
they rest on are unchanged, and worked out again as soon as one of them changes: an
edit that keeps the size and the modification time, an ignore file that appears, a new
repository top; an answer resting on a file changed a moment ago is not kept."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from steadyhand.tree import repo
from steadyhand.tree.repo import Above, rules_for

#: A modification time long past.
OLD = time.time() - 60
#: Longer than a tick of the coarsest clock a file system stamps times with.
TICK = 0.03


@pytest.fixture
def settled_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Files count as settled at once (a change time cannot be set back, and the tests
    need not wait): each test steps past a clock tick before a change instead."""
    monkeypatch.setattr(repo, "SETTLE_NS", 0)


def _age(*paths: Path) -> None:
    for p in paths:
        os.utime(p, (OLD, OLD), follow_symlinks=False)


def _repo(tmp_path: Path) -> tuple[Path, Path, dict[str, str]]:
    root = tmp_path / "ws"
    sub = root / "pkg" / "sub"
    sub.mkdir(parents=True)
    (root / ".git").mkdir()
    (root / ".gitignore").write_text("*.log\n")
    home = tmp_path / "home"
    home.mkdir()
    _age(root / ".git", root / ".gitignore")
    return root, sub, {"HOME": str(home)}


def _ignored(above: Above, name: str) -> bool:
    return above.rules.ignored(above.prefix + name, is_dir=False)


@pytest.mark.usefixtures("settled_at_once")
def test_kept_while_unchanged(tmp_path: Path) -> None:
    root, sub, env = _repo(tmp_path)
    first = rules_for(str(sub), str(root), env)
    assert _ignored(first, "a.log")
    assert not _ignored(first, "a.txt")
    assert rules_for(str(sub), str(root), env) is first


@pytest.mark.usefixtures("settled_at_once")
def test_edit_of_same_size_and_time_is_seen(tmp_path: Path) -> None:
    root, sub, env = _repo(tmp_path)
    first = rules_for(str(sub), str(root), env)
    assert rules_for(str(sub), str(root), env) is first
    time.sleep(TICK)
    (root / ".gitignore").write_text("*.txt\n")  # same size
    _age(root / ".gitignore")  # same modification time: only the change time moved
    again = rules_for(str(sub), str(root), env)
    assert not _ignored(again, "a.log")
    assert _ignored(again, "a.txt")


@pytest.mark.usefixtures("settled_at_once")
def test_ignore_file_that_appears_is_seen(tmp_path: Path) -> None:
    root, sub, env = _repo(tmp_path)
    first = rules_for(str(sub), str(root), env)
    assert rules_for(str(sub), str(root), env) is first
    time.sleep(TICK)
    (root / "pkg" / ".ignore").write_text("*.txt\n")
    again = rules_for(str(sub), str(root), env)
    assert _ignored(again, "a.txt")
    assert _ignored(again, "a.log")


@pytest.mark.usefixtures("settled_at_once")
def test_new_repository_top_is_seen(tmp_path: Path) -> None:
    root, sub, env = _repo(tmp_path)
    first = rules_for(str(sub), str(root), env)
    assert first.in_repository
    assert rules_for(str(sub), str(root), env) is first
    time.sleep(TICK)
    (root / "pkg" / ".git").mkdir()  # pkg is now a repository of its own
    again = rules_for(str(sub), str(root), env)
    assert not _ignored(again, "a.log")  # the outer repository's rules stop at its top


@pytest.mark.usefixtures("settled_at_once")
def test_global_excludes_that_appear_are_seen(tmp_path: Path) -> None:
    root, sub, env = _repo(tmp_path)
    first = rules_for(str(sub), str(root), env)
    assert rules_for(str(sub), str(root), env) is first
    time.sleep(TICK)
    config = Path(env["HOME"]) / ".config" / "git"
    config.mkdir(parents=True)
    (config / "ignore").write_text("*.tmp\n")
    assert _ignored(rules_for(str(sub), str(root), env), "a.tmp")


def test_fresh_answer_is_not_kept(tmp_path: Path) -> None:
    root, sub, env = _repo(tmp_path)
    (root / ".gitignore").write_text("*.log\n")  # changed a moment ago
    first = rules_for(str(sub), str(root), env)
    again = rules_for(str(sub), str(root), env)
    assert again is not first
    assert _ignored(again, "a.log")

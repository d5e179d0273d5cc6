"""The deny check a walk makes per entry (``DenyCheck``) says what ``deny_pattern`` says,
with one look at each folder's volume instead of one per entry; the texts it looks for
first are in every path a glob matches."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from steadyhand.paths import spelling
from steadyhand.paths.globs import compile_glob, needed_text
from steadyhand.paths.resolve import DenyCheck, Roots, deny_pattern

GLOBS = [
    "**/.env",
    "*.pem",
    "secrets/**",
    "./top/*.key",
    "/abs/x",
    "a?b",
    "[ab]c",
    "[!a]x",
    "{x,yz}.log",
    "**/cache/**",
    "*",
    "a*b/c",
    "\\ab",
    "a[b",
    "./a/./b",
]
PARTS = st.text(alphabet="abcxyz.enplogkt", min_size=1, max_size=6)


@settings(max_examples=500)
@given(pattern=st.sampled_from(GLOBS), parts=st.lists(PARTS, min_size=1, max_size=4))
def test_every_path_a_glob_matches_holds_one_of_its_texts(pattern: str, parts: list[str]) -> None:
    texts = needed_text(pattern)
    rx = compile_glob(pattern)
    for path in ("/".join(parts), "/ws/" + "/".join(parts)):
        if rx.fullmatch(path) and texts is not None:
            assert any(t in path for t in texts), (pattern, path, texts)


def test_the_texts_of_some_globs() -> None:
    assert needed_text("**/.env") == (".env",)
    assert needed_text("*.{pem,key}") == (".pem", ".key")
    assert needed_text("./secrets/**") == ("secrets",)
    assert needed_text("[abc]xy") == ("xy",)
    assert needed_text("*") is None
    assert needed_text("{a,*}") is None


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    for rel in (
        "a/.env",
        "a/b/key.pem",
        "a/b/notes.txt",
        "secrets/x.txt",
        "top/id.key",
        "sub/top/id.key",
        "abc",
        "a/xb",
        "cache/z.log",
        "q/yz.log",
    ):
        p = tmp_path / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text("x")
    return tmp_path


@pytest.mark.parametrize(
    "globs",
    [
        ("**/.env", "*.pem"),
        ("secrets/**", "./top/*.key"),
        ("a?c", "{x,yz}.log", "**/cache/**"),
        ("*",),
        ("*.txt", "[!a]x", "a*b"),
    ],
)
def test_the_check_agrees_with_deny_pattern(tree: Path, globs: tuple[str, ...]) -> None:
    roots = Roots((str(tree),), (), globs)
    check = DenyCheck(roots)
    for folder, dirs, files in os.walk(tree):
        for name in dirs + files:
            path = os.path.join(folder, name)
            assert check(path) == (deny_pattern(path, roots) is not None), path


def test_a_folder_is_looked_at_once(tree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    asked: list[str] = []
    real = spelling.ignores_case

    def counted(path: str, st: os.stat_result | None = None) -> bool:
        asked.append(path)
        return real(path, st)

    monkeypatch.setattr("steadyhand.paths.resolve.ignores_case", counted)
    check = DenyCheck(Roots((str(tree),), (), ("**/.env",)))
    names = [str(tree / "a" / n) for n in (".env", "b", "xb", "other", "more")]
    assert [check(n) for n in names] == [True, False, False, False, False]
    assert len(asked) == 1


def test_a_root_that_is_an_entry_is_matched_from_itself(tmp_path: Path) -> None:
    (tmp_path / "in" / "b").mkdir(parents=True)
    inner = str(tmp_path / "in")
    roots = Roots((inner, str(tmp_path)), (), ("./b",))
    check = DenyCheck(roots)
    for path in (inner, os.path.join(inner, "b")):
        assert check(path) == (deny_pattern(path, roots) is not None), path


def test_a_walk_with_deny_globs_looks_at_each_folder_once(
    tree: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from types import SimpleNamespace
    from typing import cast

    from steadyhand.context import ToolContext
    from steadyhand.tools.tree_scope import deny_skip
    from steadyhand.tree.walk import walk

    for i in range(40):
        (tree / "a" / "b" / f"f{i}.txt").write_text("x")
    asked: list[str] = []
    real = spelling.ignores_case

    def counted(path: str, st: os.stat_result | None = None) -> bool:
        asked.append(path)
        return real(path, st)

    monkeypatch.setattr("steadyhand.paths.resolve.ignores_case", counted)
    ctx = cast(ToolContext, SimpleNamespace(roots=Roots((str(tree),), (), ("**/.env", "*.pem"))))
    seen = [e.rel for e in walk(str(tree), rules=None, skip=deny_skip(ctx), stats=False)]
    assert "a/.env" not in seen and "a/b/key.pem" not in seen and "a/b/f39.txt" in seen
    folders = {os.path.dirname(p) for p in asked}
    assert len(asked) == len(folders) < 10, asked

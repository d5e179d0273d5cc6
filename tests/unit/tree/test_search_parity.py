"""Both search engines give the same answers, and the walk leaves out what git does."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from steadyhand.tree.grep import Query
from steadyhand.tree.repo import rules_above
from steadyhand.tree.search import (
    Found,
    Scope,
    python_search,
    rg_search,
    ripgrep_path,
    search,
)
from steadyhand.tree.walk import walk

RG = ripgrep_path()
needs_rg = pytest.mark.skipif(
    RG is None and not os.environ.get("CI"), reason="ripgrep is not installed"
)

WORDS = ["foo", "bar", "baz", "qux", "FOO", "foobar", "  foo  bar", "x=1", "é", ""]
IGNORES = ["*.log", "!keep.log", "build/", "/top.txt", "sub/*.md", "**/gen/", "*.tmp", "a*"]
NAMES = ["a.txt", "b.py", "keep.log", "x.log", "top.txt", "n.md", "c.tmp", "d"]
FOLDERS = ["", "sub", "sub/gen", "build", "src", "src/sub"]
PATTERNS = ["foo", "fo+", "^bar", "baz$", r"\bqux\b", "foo.*bar", "o", "x=1", "é", "FOO"]


def _answer(found: Found) -> list[tuple[str, int, list[tuple[int, str, bool]]]]:
    return [(f.rel, f.count, [(x.number, x.text, x.match) for x in f.lines]) for f in found.files]


lines_st = st.lists(
    st.tuples(st.sampled_from(WORDS), st.sampled_from(["\n", "\r\n"])), min_size=0, max_size=6
)
tree_st = st.dictionaries(
    st.tuples(st.sampled_from(FOLDERS), st.sampled_from(NAMES)), lines_st, max_size=14
)
ignores_st = st.dictionaries(
    st.tuples(st.sampled_from(FOLDERS), st.sampled_from([".gitignore", ".ignore"])),
    st.lists(st.sampled_from(IGNORES), max_size=4),
    max_size=4,
)


def _build(root: Path, tree: dict, ignores: dict, binary: bool) -> None:
    if root.exists():
        shutil.rmtree(root)
    root.mkdir(parents=True)
    for (folder, name), lines in tree.items():
        (root / folder).mkdir(parents=True, exist_ok=True)
        text = "".join(w + end for w, end in lines)
        (root / folder / name).write_bytes(text.encode())
    for (folder, name), patterns in ignores.items():
        (root / folder).mkdir(parents=True, exist_ok=True)
        (root / folder / name).write_text("\n".join(patterns) + "\n")
    if binary:
        (root / "bin.dat").write_bytes(b"foo\0bar\nfoo\n")
    (root / "u16.txt").write_bytes("foo\nbar\n".encode("utf-16"))


@needs_rg
@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    tree=tree_st,
    ignores=ignores_st,
    binary=st.booleans(),
    pattern=st.sampled_from(PATTERNS),
    literal=st.booleans(),
    case=st.booleans(),
    before=st.integers(0, 2),
    after=st.integers(0, 2),
    include_ignored=st.booleans(),
    repo=st.booleans(),
    start=st.sampled_from(["", "sub", "src"]),
)
def test_ripgrep_and_python_give_the_same_answer(
    tmp_path: Path,
    tree: dict,
    ignores: dict,
    binary: bool,
    pattern: str,
    literal: bool,
    case: bool,
    before: int,
    after: int,
    include_ignored: bool,
    repo: bool,
    start: str,
) -> None:
    assert RG is not None
    root = tmp_path / "ws"
    _build(root, tree, ignores, binary)
    if repo:
        subprocess.run(["git", "init", "-q", str(root)], check=True)
    folder = root / start
    folder.mkdir(exist_ok=True)
    above = rules_above(str(folder), str(root), environ={"HOME": str(tmp_path)})
    scope = Scope(
        str(folder),
        None if include_ignored else above.rules,
        above.prefix,
        in_repository=above.in_repository,
        from_parents=above.from_parents,
    )
    query = Query(pattern, literal=literal, case_insensitive=case, before=before, after=after)
    expected = _answer(python_search(scope, query, deadline=None))
    assert _answer(search(scope, query, deadline=None)) == expected
    if scope.ripgrep_reads_alike():
        assert _answer(rg_search(RG, scope, query, deadline=None)) == expected


@needs_rg
@pytest.mark.parametrize("pattern", ["foo\\nbar", "bar\\n", "o\\nb", "^foo$"])
def test_multiline_answers_agree(tmp_path: Path, pattern: str) -> None:
    assert RG is not None
    root = tmp_path / "ws"
    _build(
        root,
        {("", "a.txt"): [("foo", "\n"), ("bar", "\n"), ("foo", "\n")], ("sub", "b"): [("o", "\n")]},
        {},
        binary=True,
    )
    scope = Scope(str(root), rules_above(str(root), str(root)).rules)
    for before, after in [(0, 0), (1, 1)]:
        query = Query(pattern, multiline=True, before=before, after=after)
        rg_answer = _answer(rg_search(RG, scope, query, deadline=None))
        assert rg_answer == _answer(python_search(scope, query, deadline=None))
        assert rg_answer, pattern


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(tree=tree_st, ignores=ignores_st)
def test_the_walk_leaves_out_what_git_check_ignore_does(
    tmp_path: Path, tree: dict, ignores: dict
) -> None:
    root = tmp_path / "repo"
    _build(root, tree, {k: v for k, v in ignores.items() if k[1] == ".gitignore"}, False)
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    env = {"HOME": str(tmp_path), "XDG_CONFIG_HOME": str(tmp_path / "cfg")}
    above = rules_above(str(root), str(root), environ=env)
    listed = {e.rel for e in walk(str(root), rules=above.rules, prefix=above.prefix)}
    every = {e.rel for e in walk(str(root), rules=None)}
    candidates = sorted(every)
    out = subprocess.run(
        ["git", "-C", str(root), "check-ignore", "--no-index", "--stdin"],
        input="\n".join(candidates),
        capture_output=True,
        text=True,
        env={**os.environ, **env, "GIT_CONFIG_NOSYSTEM": "1"},
    )
    ignored = set(out.stdout.splitlines())
    # A path git ignores is not listed, nor is anything below an ignored folder; every
    # other path is listed.
    for rel in candidates:
        hidden = any(rel == p or rel.startswith(p + "/") for p in ignored)
        assert (rel in listed) == (not hidden), (rel, ignored)

"""Globs read as path filters (``compile_glob(..., exact=True)``): the patterns of
``list`` and of ``search``'s ``glob``, read as ripgrep's ``--glob`` and file-finding
tools read them."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from steadyhand.paths.globs import GlobError, compile_glob


def _hit(pattern: str, path: str) -> bool:
    return compile_glob(pattern, exact=True).fullmatch(path) is not None


@pytest.mark.parametrize(
    ("pattern", "hits", "misses"),
    [
        # No slash: a name at any depth, never what lies beneath it.
        ("*.py", ["a.py", "src/a.py", "a/b/c.py"], ["a.pyc", "a.py/x", "py"]),
        ("Makefile", ["Makefile", "sub/Makefile"], ["Makefile.am", "sub/Makefile/x"]),
        # A slash anchors at the folder listed or searched.
        ("src/*.py", ["src/a.py"], ["x/src/a.py", "src/a/b.py", "src"]),
        ("./a.py", ["a.py"], ["x/a.py"]),
        ("/src/*.py", ["src/a.py"], ["x/src/a.py"]),
        ("src/**", ["src/a", "src/a/b.py"], ["src", "x/src/a"]),
        ("src/**/*.ts", ["src/a.ts", "src/a/b/c.ts"], ["a.ts", "src/a.tsx"]),
        ("**/test_*.py", ["test_a.py", "t/test_b.py"], ["t/atest_b.py"]),
        # Braces and classes.
        ("*.{ts,tsx}", ["a.ts", "b/c.tsx"], ["a.js"]),
        ("[ab]*.txt", ["a1.txt", "d/b.txt"], ["c.txt"]),
        ("[!a]*.txt", ["b.txt"], ["a.txt"]),
        # A trailing slash alone does not anchor.
        ("build/", ["build", "x/build"], ["build/a"]),
    ],
)
def test_path_filter_forms(pattern: str, hits: list[str], misses: list[str]) -> None:
    for path in hits:
        assert _hit(pattern, path), (pattern, path)
    for path in misses:
        assert not _hit(pattern, path), (pattern, path)


def test_unusable_patterns_raise() -> None:
    for pattern in ("[z-a]", "/", "./", ""):
        with pytest.raises(GlobError):
            compile_glob(pattern, exact=True)


SEGMENT = st.text(alphabet="ab.*?", min_size=1, max_size=4).filter(lambda s: "**" not in s)
NAME = st.text(alphabet="ab.", min_size=1, max_size=4)


@given(pattern=SEGMENT, folders=st.lists(NAME, max_size=3), name=NAME)
def test_a_pattern_without_a_slash_is_matched_against_the_name(
    pattern: str, folders: list[str], name: str
) -> None:
    path = "/".join([*folders, name])
    assert _hit(pattern, path) == _hit(pattern, name)


@given(
    parts=st.lists(st.one_of(SEGMENT, st.just("**")), min_size=1, max_size=3),
    path=st.lists(NAME, min_size=1, max_size=4),
)
def test_a_path_filter_match_is_a_deny_glob_match(parts: list[str], path: list[str]) -> None:
    """What a filter matches, the same pattern read as a deny glob matches too (which
    also covers what lies beneath a match, at any depth)."""
    pattern = "/".join(parts)
    rel = "/".join(path)
    if _hit(pattern, rel):
        assert compile_glob(pattern).fullmatch(rel) is not None

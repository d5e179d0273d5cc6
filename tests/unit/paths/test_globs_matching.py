"""Glob matching (``paths/globs.py``): common forms, and one pass over several globs."""

from __future__ import annotations

import os

from hypothesis import given
from hypothesis import strategies as st

from steadyhand.paths.globs import first_match, matches, relative_to


def test_globs() -> None:
    assert matches("*.pem", "/w/a/b/key.pem", "a/b/key.pem")
    assert matches("secrets/**", "/w/secrets/x/y.txt", "secrets/x/y.txt")
    assert matches("**/.git/**", "/w/.git/config", ".git/config")
    assert not matches("*.pem", "/w/a/key.pem.txt", "a/key.pem.txt")
    assert matches("src/*.py", "/w/src/a.py", "src/a.py")
    assert not matches("src/*.py", "/w/src/sub/a.py", "src/sub/a.py")
    assert matches("/etc/**", "/etc/passwd")


_glob_parts = st.sampled_from(["a", "b", "*", "?", "**", ".git", "[ab]", "[!a]", "x.*"])


@given(
    st.lists(st.lists(_glob_parts, min_size=1, max_size=3).map("/".join), max_size=5),
    st.lists(st.sampled_from(["a", "b", "ab", ".git", "x.y", "c"]), min_size=1, max_size=4),
)
def test_one_pass_over_several_globs_finds_the_first_that_matches(
    globs: list[str], parts: list[str]
) -> None:
    root = "/w"
    path = root + "/" + "/".join(parts)
    rel = relative_to(path, root)
    assert rel == os.path.relpath(path, root)
    expected = next((g for g in globs if matches(g, path, rel)), None)
    assert first_match(globs, path, rel) == expected
    assert first_match(globs, path) == next((g for g in globs if matches(g, path)), None)

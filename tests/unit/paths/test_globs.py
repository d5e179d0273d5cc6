"""Glob patterns of ``denyGlobs`` and ``protectedGlobs``: the forms users write, and
patterns that cannot be used (which must never break a tool call)."""

from __future__ import annotations

import pytest

from steadyhand.paths.globs import (
    GlobError,
    compile_glob,
    expand_braces,
    first_match,
    invalid_glob,
    matches,
)

ROOT = "/ws"


def _hit(pattern: str, relative: str) -> bool:
    return matches(pattern, f"{ROOT}/{relative}", relative)


@pytest.mark.parametrize(
    ("pattern", "hits", "misses"),
    [
        # A trailing slash: the folder (anywhere, like a name) and everything under it.
        ("secrets/", ["secrets", "secrets/key.txt", "sub/secrets/a/b"], ["secretsx/a", "a.txt"]),
        ("**/secrets/", ["secrets/key.txt", "sub/secrets/key.txt"], ["secrets.txt"]),
        # A leading "/" or "./": anchored at the workspace root.
        ("/secrets/**", ["secrets/key.txt"], ["sub/secrets/key.txt"]),
        ("./secrets/**", ["secrets/key.txt"], ["sub/secrets/key.txt"]),
        ("./secrets/", ["secrets/key.txt"], ["sub/secrets/key.txt"]),
        ("/top.env", ["top.env"], ["sub/top.env"]),
        # Braces: either alternative.
        ("**/*.{pem,key}", ["server.pem", "a/b/c.key"], ["server.pub", "key.txt"]),
        ("*.{pem,key}", ["server.pem", "d/x.key"], ["x.keys"]),
        ("{a,b/c}/*.txt", ["a/x.txt", "b/c/x.txt", "q/a/x.txt"], ["b/x.txt"]),
        ("{a,{b,c}}.txt", ["a.txt", "b.txt", "c.txt"], ["d.txt"]),
        ("{a}.txt", ["{a}.txt"], ["a.txt"]),  # no comma: literal braces
        # Classes: "]" first is a member; no class matches "/".
        ("[]x]", ["]", "x", "d/x"], ["y"]),
        ("a[!b]c", ["axc"], ["abc", "a/c"]),
        ("a[/]c", [], ["a/c"]),
        # Unchanged forms.
        ("secrets", ["secrets/key.txt", "sub/secrets"], ["secrets.txt"]),
        ("secrets/**", ["secrets/key.txt", "sub/secrets/key.txt"], ["top.env"]),
        ("top.env", ["top.env", "d/top.env"], ["top.envx"]),
    ],
)
def test_glob_forms(pattern: str, hits: list[str], misses: list[str]) -> None:
    assert invalid_glob(pattern) is None
    for rel in hits:
        assert _hit(pattern, rel), (pattern, rel)
    for rel in misses:
        assert not _hit(pattern, rel), (pattern, rel)


def test_a_leading_slash_still_matches_the_absolute_path() -> None:
    assert matches("/etc/ssh/**", "/etc/ssh/sshd_config", None)
    assert matches("/ws/secrets/**", "/ws/secrets/key.txt", "secrets/key.txt")


@pytest.mark.parametrize("pattern", ["[z-a]", "", "/", "./", "{a,b}" * 9])  # 9: 512 choices
def test_unusable_patterns_are_reported_and_match_nothing(pattern: str) -> None:
    assert invalid_glob(pattern) is not None
    with pytest.raises(GlobError):
        compile_glob(pattern)
    assert not matches(pattern, "/ws/a.txt", "a.txt")
    # ... and do not stop the others from matching.
    assert first_match([pattern, "*.txt"], "/ws/a.txt", "a.txt") == "*.txt"


def test_brace_expansion() -> None:
    assert expand_braces("x.{a,b}") == ["x.a", "x.b"]
    assert expand_braces("{a,b}{c,d}") == ["ac", "ad", "bc", "bd"]
    assert expand_braces("{a,{b,c}}") == ["a", "b", "c"]
    assert expand_braces("{,x}y") == ["y", "xy"]
    assert expand_braces("a{b") == ["a{b"]


# -- any character a file name may hold ------------------------------------------------

from hypothesis import given  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

#: A file or folder name: any characters but "/" and NUL (a newline, a CR, a tab...).
NAME = st.text(st.characters(blacklist_characters="/\x00"), min_size=1, max_size=12).filter(
    lambda n: n not in (".", "..")
)
CHAR = st.characters(blacklist_characters="/\x00")


@given(name=NAME, folder=NAME)
def test_every_wildcard_matches_every_character_a_name_may_hold(name: str, folder: str) -> None:
    assert _hit("secrets/**", f"secrets/{name}")
    assert _hit("secrets/**", f"secrets/{folder}/{name}")
    assert _hit("secrets/*", f"secrets/{name}")
    assert _hit("secrets", f"{folder}/secrets/{name}")
    assert _hit("**/.git/**", f"{folder}/.git/config")
    assert _hit("**/.git/**", f"{folder}/{name}/.git/config")
    assert _hit("*.pem", f"{name}.pem")
    assert _hit("*.pem", f"{folder}/{name}.pem")
    assert _hit("/top/**", f"top/{folder}/{name}")
    assert _hit("./top/*", f"top/{name}")
    assert first_match(("x.none", "secrets/**"), f"{ROOT}/secrets/{name}") == "secrets/**"


@given(c=CHAR)
def test_one_character_wildcards_match_any_character_but_a_slash(c: str) -> None:
    assert _hit("a?b", f"a{c}b")
    assert _hit("a[!/]b", f"a{c}b") or c == "/"
    assert not _hit("a?b", "a/b") and not _hit("a*b", "a/b")

"""The one-regex shortcut of an ignore file (``IgnoreFile.quick``) gives the verdicts the
patterns give one by one."""

from __future__ import annotations

import dataclasses

from hypothesis import given
from hypothesis import strategies as st

from steadyhand.tree.ignore import IgnoreStack, parse

PATTERNS = ["*.log", "!keep.log", "build/", "/top", "a/**/b", "**/gen/", "?x", "[ab]*", "!a*"]
NAMES = st.text(alphabet="abx.log", min_size=1, max_size=5)


@given(
    lines=st.lists(st.sampled_from(PATTERNS), min_size=1, max_size=5),
    path=st.lists(NAMES, min_size=1, max_size=4),
    is_dir=st.booleans(),
)
def test_the_shortcut_agrees_with_each_pattern(
    lines: list[str], path: list[str], is_dir: bool
) -> None:
    rules = parse("\n".join(lines), "")
    assert rules is not None and rules.quick is not None
    slow = dataclasses.replace(rules, quick=None)
    rel = "/".join(path)
    fast_verdict = IgnoreStack((rules,)).ignored(rel, is_dir=is_dir)
    assert fast_verdict == IgnoreStack((slow,)).ignored(rel, is_dir=is_dir)

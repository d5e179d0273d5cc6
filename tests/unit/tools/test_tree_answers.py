"""The pure parts of ``list`` and ``search``: where a pattern lets a walk start, how a
long line is shown around its match, and line counts that agree with read's."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from steadyhand.text.lines import split_lines, to_view
from steadyhand.tools.listing import literal_folder
from steadyhand.tools.search import clip
from steadyhand.tools.tree_scope import count_lines, text_lines


@pytest.mark.parametrize(
    ("pattern", "folder"),
    [
        ("src/lib/**/*.py", "src/lib"),
        ("src/*.py", "src"),
        ("./src/a.py", "src"),
        ("/src/x/*.md", "src/x"),
        ("*.py", None),
        ("**/*.py", None),
        ("src*/a.py", None),
        ("{a,b}/c", None),
        ("a/../b/*.py", "a"),
        ("src/", None),
    ],
)
def test_the_folder_a_pattern_names(pattern: str, folder: str | None) -> None:
    assert literal_folder(pattern) == folder


@given(st.text(alphabet="ab\r\n", max_size=30))
def test_line_counts_agree_with_read(text: str) -> None:
    lines = len(split_lines(to_view(text)))
    assert count_lines(text.encode()) == lines
    assert text_lines(text) == lines
    assert count_lines(text.encode("utf-16")) == lines


def test_binary_has_no_line_count() -> None:
    assert count_lines(b"a\x00b\n") is None


def test_a_long_line_is_shown_around_its_match() -> None:
    line = "x" * 1000 + "NEEDLE" + "y" * 1000
    shown = clip(line, re.compile("NEEDLE"), most=100)
    assert "NEEDLE" in shown
    assert shown.startswith("[") and "characters cut]" in shown
    assert shown.endswith("more characters cut]")
    assert clip("short\r", None) == "short"
    head = clip("a" * 500, None, most=100)
    assert head.startswith("a" * 100) and head.endswith("[400 more characters cut]")

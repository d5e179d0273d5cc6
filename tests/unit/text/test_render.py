"""Numbered lines (``text/render.py``)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from steadyhand.text.render import number_lines


@given(
    st.lists(st.text(st.characters(blacklist_characters="\r\n"), max_size=8), max_size=50),
    st.sampled_from([1, 2, 4090, 4096, 8191, 999_998, 1_000_001]),
)
def test_numbered_lines_look_like_cat_n(lines: list[str], first: int) -> None:
    text, cut = number_lines(lines, first, 2000)
    expected = "\n".join(f"{n:>6}\t{line}" for n, line in enumerate(lines, start=first))
    assert text == expected and not cut

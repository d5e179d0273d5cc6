"""Splices merged to at most N make the same change."""

from __future__ import annotations

import itertools

from hypothesis import given
from hypothesis import strategies as st

from steadyhand.text.splices import Splice, apply_splices, coalesce


@st.composite
def spliced(draw: st.DrawFn) -> tuple[str, list[Splice]]:
    text = draw(st.text(st.sampled_from("ab\n"), max_size=80))
    cuts = sorted(draw(st.lists(st.integers(0, len(text)), max_size=30)))
    pairs = list(zip(cuts[::2], cuts[1::2], strict=False))
    return text, [
        Splice(a, b, draw(st.text(st.sampled_from("xy\n"), max_size=4))) for a, b in pairs
    ]


@given(spliced(), st.integers(1, 20))
def test_coalesced_splices_make_the_same_change(case: tuple[str, list[Splice]], most: int) -> None:
    text, splices = case
    merged = coalesce(text, splices, most)
    assert len(merged) <= most
    assert apply_splices(text, merged) == apply_splices(text, splices)
    assert all(a.end <= b.start for a, b in itertools.pairwise(merged))

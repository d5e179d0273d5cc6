"""Character normalization (``text/chars.py``)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from steadyhand.text.chars import normalize_quotes


@given(st.text(max_size=40))
def test_quote_normalization_preserves_length(s: str) -> None:
    assert len(normalize_quotes(s)) == len(s)
    assert "\u2019" not in normalize_quotes(s) and "\u201c" not in normalize_quotes(s)

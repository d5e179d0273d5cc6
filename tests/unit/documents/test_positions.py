"""LSP positions (``documents/positions.py``) in each position encoding."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from steadyhand.documents.positions import PositionIndex, units
from tests.unit.text.strategies import raw_texts


@given(raw_texts(), st.sampled_from(["utf-8", "utf-16", "utf-32"]), st.data())
def test_positions_round_trip(raw: str, enc: str, data: st.DataObject) -> None:
    idx = PositionIndex(raw, enc)
    view_offsets = [
        i
        for i in range(len(raw) + 1)
        if not (0 < i < len(raw) and raw[i - 1] == "\r" and raw[i] == "\n")
    ]
    off = data.draw(st.sampled_from(view_offsets))
    line, ch = idx.position(off)
    assert idx.offset(line, ch) == off


def test_units() -> None:
    assert (
        units("a😀", "utf-16") == 3 and units("a😀", "utf-8") == 5 and units("a😀", "utf-32") == 2
    )
    assert units("漢", "utf-16") == 1 and units("e\u0301", "utf-16") == 2

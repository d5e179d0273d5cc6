"""Splices (``text/splices.py``): the changed core of a splice."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from steadyhand.text.splices import Splice, apply_splices, changed_core


@given(
    st.text(alphabet="ab\n", max_size=30),
    st.integers(0, 30),
    st.integers(0, 30),
    st.text(alphabet="ab\n", max_size=30),
)
def test_the_changed_core_of_a_splice_does_the_same_and_keeps_the_rest(
    view: str, i: int, j: int, text: str
) -> None:
    start, end = sorted((min(i, len(view)), min(j, len(view))))
    sp = Splice(start, end, text)
    core = changed_core(view, sp)
    assert apply_splices(view, [core]) == apply_splices(view, [sp])
    assert sp.start <= core.start <= core.end <= sp.end
    old = view[core.start : core.end]
    if old and core.text:  # nothing shared is left at either end
        assert old[0] != core.text[0] and old[-1] != core.text[-1]

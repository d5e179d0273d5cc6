"""The deadline of a syntax check: 50 ms, or what ``$STEADYHAND_SYNTAX_DEADLINE_MS`` says
when it is a sensible number of milliseconds."""

from __future__ import annotations

import math

from hypothesis import given
from hypothesis import strategies as st

from steadyhand.syntax.engine import (
    DEADLINE_ENV,
    DEADLINE_MAX_MS,
    DEADLINE_S,
    Checker,
    deadline_from,
)


def test_the_default_is_50_ms() -> None:
    assert DEADLINE_S == 0.05 and DEADLINE_ENV == "STEADYHAND_SYNTAX_DEADLINE_MS"
    assert deadline_from({}) == DEADLINE_S
    assert deadline_from({DEADLINE_ENV: ""}) == DEADLINE_S
    assert Checker().deadline == DEADLINE_S


@given(st.floats(min_value=0.001, max_value=DEADLINE_MAX_MS, allow_nan=False))
def test_a_number_of_milliseconds_sets_it(ms: float) -> None:
    assert deadline_from({DEADLINE_ENV: repr(ms)}) == ms / 1000
    assert deadline_from({DEADLINE_ENV: f"  {ms!r}\n"}) == ms / 1000


def test_whole_numbers_as_people_write_them() -> None:
    assert deadline_from({DEADLINE_ENV: "10000"}) == 10.0
    assert deadline_from({DEADLINE_ENV: "250"}) == 0.25
    assert deadline_from({DEADLINE_ENV: "60000"}) == 60.0


@given(
    st.one_of(
        st.floats(max_value=0.0),
        st.floats(min_value=DEADLINE_MAX_MS, exclude_min=True),
        st.just(math.nan),
    )
)
def test_nothing_out_of_bounds_changes_it(ms: float) -> None:
    assert deadline_from({DEADLINE_ENV: repr(ms)}) == DEADLINE_S


@given(st.text().filter(lambda t: not _is_number(t)))
def test_what_is_no_number_changes_nothing(raw: str) -> None:
    assert deadline_from({DEADLINE_ENV: raw}) == DEADLINE_S


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True

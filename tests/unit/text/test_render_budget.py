"""How many numbered lines fit in a byte budget: the text of that many lines, numbered as a
read shows them, fits; one more would not (and one line always goes out)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from steadyhand.text.render import fitting_lines, number_lines, number_lines_within

_lines = st.lists(st.text(st.sampled_from("ab é😀\t"), max_size=60), max_size=60)


@given(_lines, st.integers(1, 10**7), st.integers(1, 80), st.integers(1, 3000))
def test_the_lines_that_fit_never_pass_the_budget(
    lines: list[str], first: int, max_line_chars: int, max_bytes: int
) -> None:
    n = fitting_lines(lines, first, max_line_chars, max_bytes)
    assert n == len(lines) or 1 <= n < len(lines)

    def size(k: int) -> int:
        text, _ = number_lines(lines[:k], first, max_line_chars)
        return len(text.encode("utf-8", "surrogatepass")) + 1  # and a newline after

    if n > 1:
        assert size(n) <= max_bytes


@given(
    st.lists(st.text(st.sampled_from("ab \t"), max_size=60), max_size=60),
    st.integers(1, 10**5),
    st.integers(1, 3000),
)
def test_lines_of_ascii_fit_exactly(lines: list[str], first: int, max_bytes: int) -> None:
    n = fitting_lines(lines, first, 100, max_bytes)
    width = max(6, len(str(first + len(lines) - 1))) + 2 if lines else 0
    used = sum(len(line) + width for line in lines[:n])
    assert n == len(lines) or used + len(lines[n]) + width > max_bytes
    assert n <= 1 or used <= max_bytes


def test_a_first_line_over_the_budget_still_goes_out() -> None:
    assert fitting_lines(["x" * 1000], 1, 2000, 10) == 1
    assert fitting_lines([], 1, 2000, 10) == 0


@given(_lines, st.integers(1, 10**5), st.integers(1, 80), st.integers(1, 3000))
def test_numbering_within_a_budget_is_numbering_the_lines_that_fit(
    lines: list[str], first: int, max_line_chars: int, max_bytes: int
) -> None:
    text, cut, count = number_lines_within(lines, first, max_line_chars, max_bytes)
    assert (text, cut) == number_lines(lines[:count], first, max_line_chars)
    if count < len(lines):
        assert count == fitting_lines(lines, first, max_line_chars, max_bytes)
    else:
        whole, _ = number_lines(lines, first, max_line_chars)
        fits = len(whole.encode("utf-8", "surrogatepass")) <= max_bytes
        assert fits or count == fitting_lines(lines, first, max_line_chars, max_bytes)

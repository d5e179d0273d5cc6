"""Searches past their deadline, and searches on very long lines, in-process."""

from __future__ import annotations

import random

import pytest

from steadyhand.protocol.errors import ErrorCode, ToolError
from steadyhand.text import matching
from steadyhand.text.budget import Budget
from steadyhand.text.nearmiss import (
    NearMiss,
    Unsearched,
    closest_region,
    unsearched_message,
)


def long_line(n: int, seed: int = 5) -> str:
    """One line of ``n`` characters, like minified code (no stretch repeats for long)."""
    rng = random.Random(seed)
    words = ["alpha", "beta(", ")", "{", "}", ";", "gamma", "=", "1", "delta."]
    out: list[str] = []
    size = 0
    while size < n:
        out.append(rng.choice(words) + str(rng.randrange(1000)))
        size += len(out[-1])
    return "".join(out)[:n]


def test_a_near_miss_search_past_its_deadline_is_refused_with_advice(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(matching, "SEARCH_SECONDS", -1.0)
    view = "def f():\n\treturn 1\n"
    # found exactly: no deadline applies
    assert matching.plan_edit(view, "return 1", "return 2").tier is matching.EXACT
    with pytest.raises(ToolError) as exc:
        matching.plan_edit(view, "def f():\n    return 1", "def f():\n    return 2", path="/w/f.py")
    assert exc.value.code == ErrorCode.NO_MATCH
    assert "too large to search for a near-miss" in exc.value.message
    assert "copy them into old_string exactly" in exc.value.message


def test_a_closest_region_search_past_its_deadline_says_what_to_do() -> None:
    line = long_line(50_000)
    miss = closest_region(line + "\n", line[:100] + "@" + line[101:], Budget(-1.0))
    assert miss == Unsearched(50_000)
    text = unsearched_message("/w/a.min.js", miss)
    assert "50,000 characters" in text and "copy old_string" in text and "retry" in text


@pytest.mark.parametrize("size", [10_000, 40_000, 200_000])
def test_the_whole_long_line_with_one_slip_is_explained(size: int) -> None:
    line = long_line(size)
    at = size // 2
    old = line[:at] + "@" + line[at + 1 :]
    miss = closest_region(line + "\n", old, Budget(None))
    assert isinstance(miss, NearMiss)
    assert (miss.start_line, miss.end_line) == (1, 1)
    assert len(miss.differences) == 1
    (what,) = miss.differences
    assert f"at column {at + 1:,}" in what and "@" in what and line[at - 5 : at] in what


def test_a_stretch_of_a_long_line_is_placed_within_it() -> None:
    line = long_line(40_000)
    at = 31_000
    piece = line[at : at + 200]
    old = piece[:90] + "~~" + piece[92:]
    miss = closest_region("first\n" + line + "\nlast\n", old, Budget(None))
    assert isinstance(miss, NearMiss) and (miss.start_line, miss.end_line) == (2, 2)
    assert f"line 2 at column {at + 91:,}" in miss.differences[0], miss.differences


def test_the_excerpt_of_a_long_line_stays_bounded() -> None:
    line = long_line(200_000)
    miss = closest_region(line + "\n", line[:1000] + "@" + line[1001:], Budget(None))
    assert isinstance(miss, NearMiss)
    assert len(miss.excerpt) < 2_200 and "line cut" in miss.excerpt
    assert all(len(d) < 300 for d in miss.differences)

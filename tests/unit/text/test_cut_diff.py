"""A diff cut for one answer keeps its headers and whole hunks only, within the budget, and
counts the hunks it left out."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from steadyhand.text.diff import cut_diff, unified

_lines = st.lists(
    st.text(st.sampled_from("ab é\t"), max_size=8).map(lambda t: t + "\n"), max_size=60
)


@given(_lines, _lines, st.integers(1, 2000))
def test_a_cut_diff_is_whole_hunks_within_the_budget(
    old: list[str], new: list[str], max_bytes: int
) -> None:
    diff = unified(old, new, name="/f.txt")
    kept, left_out = cut_diff(diff, max_bytes)
    hunks = diff.count("\n@@ ")
    if not left_out:
        assert kept == diff
        assert len(diff.encode()) <= max_bytes or not hunks
        return
    assert len(kept.encode()) <= max_bytes
    assert diff.startswith(kept)
    assert kept == "" or (diff[len(kept)] == "\n" and diff[len(kept) + 1 :].startswith("@@ "))
    assert kept.count("\n@@ ") + left_out == hunks

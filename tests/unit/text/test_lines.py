"""Line endings and line arithmetic (``text/lines.py``): the view, the newline map,
ending statistics, the changed middle of two texts."""

from __future__ import annotations

from collections import Counter

from hypothesis import given
from hypothesis import strategies as st

from steadyhand.documents.positions import line_starts
from steadyhand.text.lines import (
    NewlineMap,
    changed_lines,
    changed_middle,
    common_prefix_chars,
    common_suffix_chars,
    count_lines,
    ending_stats,
    ending_stats_spliced,
    split_lines,
    to_view,
    with_endings,
)
from steadyhand.text.splices import Splice, apply_splices
from tests.unit.text.strategies import raw_texts


@given(raw_texts())
def test_view_has_no_cr_and_same_line_count(raw: str) -> None:
    view = to_view(raw)
    assert "\r" not in view
    assert count_lines(view) == len(split_lines(view))
    if raw:
        trailing_break = raw.endswith(("\n", "\r"))
        assert count_lines(view) == len(line_starts(raw)) - (1 if trailing_break else 0)


@given(raw_texts(), st.data())
def test_newline_map_splices_keep_untouched_bytes(raw: str, data: st.DataObject) -> None:
    view = to_view(raw)
    a = data.draw(st.integers(0, len(view)))
    b = data.draw(st.integers(a, len(view)))
    nm = NewlineMap(raw)
    ra, rb = nm.to_raw(a), nm.to_raw(b)
    # the mapped region is exactly the view region, line endings aside
    assert to_view(raw[ra:rb]) == view[a:b]
    new = apply_splices(raw, [_splice(ra, rb, "X")])
    assert new[:ra] == raw[:ra] and new[ra + 1 :] == raw[rb:]


def _splice(a: int, b: int, text: str):  # type: ignore[no-untyped-def]
    return Splice(a, b, text)


def test_ending_stats_and_dominant() -> None:
    s = ending_stats("a\r\nb\r\nc\nd\re")
    assert (s.lf, s.crlf, s.cr) == (1, 2, 1)
    assert s.style == "mixed" and s.dominant == "\r\n"
    assert ending_stats("abc").style == "none" and ending_stats("abc").dominant == "\n"
    assert with_endings("a\nb\n", "\r\n") == "a\r\nb\r\n"


@given(
    st.lists(st.sampled_from("abcde"), max_size=30), st.lists(st.sampled_from("abcde"), max_size=30)
)
def test_changed_middle(old: list[str], new: list[str]) -> None:
    pre, om, nm = changed_middle(old, new)
    suf = len(old) - pre - len(om)
    assert suf == len(new) - pre - len(nm) >= 0
    assert old[:pre] == new[:pre] and old[len(old) - suf :] == new[len(new) - suf :]
    assert old[:pre] + om + old[len(old) - suf :] == old
    assert new[:pre] + nm + new[len(new) - suf :] == new


_texts = st.text(st.sampled_from("ab\n"), max_size=80)


@given(_texts, _texts)
def test_common_prefix_and_suffix_chars(a: str, b: str) -> None:
    p = common_prefix_chars(a, b)
    assert a[:p] == b[:p] and (p == min(len(a), len(b)) or a[p] != b[p])
    limit = min(len(a), len(b)) - p
    s = common_suffix_chars(a, b, limit)
    assert s <= limit and a[len(a) - s :] == b[len(b) - s :]
    assert s == limit or a[len(a) - s - 1] != b[len(b) - s - 1]


def test_common_prefix_chars_across_chunks() -> None:
    base = "x" * 100_000
    for at in (0, 31, 32_767, 32_768, 65_000, 99_999):
        other = base[:at] + "y" + base[at + 1 :]
        assert common_prefix_chars(base, other) == at
        assert common_suffix_chars(base, other, len(base)) == len(base) - at - 1


@given(_texts, _texts)
def test_changed_lines_matches_the_list_form(a: str, b: str) -> None:
    pre, om, nm = changed_lines(a, b)
    old, new = split_lines(a), split_lines(b)
    assert old[:pre] == new[:pre]
    # what was added and removed (as multisets) is what the whole-list form finds
    _, lom, lnm = changed_middle(old, new)
    assert Counter(nm) - Counter(om) == Counter(lnm) - Counter(lom)
    assert Counter(om) - Counter(nm) == Counter(lom) - Counter(lnm)
    # the middle is where it says it is in the new text
    assert new[pre : pre + len(nm)] == nm and old[pre : pre + len(om)] == om


@given(st.text(st.sampled_from("a\r\n"), max_size=40), st.data())
def test_ending_stats_after_several_splices(old: str, data: st.DataObject) -> None:
    cuts = sorted(data.draw(st.lists(st.integers(0, len(old)), max_size=8)))
    splices = [
        Splice(a, b, data.draw(st.text(st.sampled_from("a\r\n"), max_size=4)))
        for a, b in zip(cuts[::2], cuts[1::2], strict=False)
    ]
    new = apply_splices(old, splices)
    assert ending_stats_spliced(ending_stats(old), old, new, splices) == ending_stats(new)

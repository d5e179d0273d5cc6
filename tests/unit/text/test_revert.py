"""Taking back one earlier change: a three-way merge that keeps every later edit or
refuses (``text/revert.py``)."""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from steadyhand.text.lines import to_view
from steadyhand.text.revert import (
    Conflict,
    RawReverted,
    Reverted,
    describe_lines,
    in_the_way,
    revert,
    revert_raw,
    split_keep_ends,
)
from steadyhand.text.splices import apply_splices

# Few distinct lines, so that diffs have choices to make and hunks meet.
_LINE = st.sampled_from(["a", "b", "c", "", "  a"])


@st.composite
def texts(draw: st.DrawFn) -> str:
    lines = draw(st.lists(_LINE, max_size=9))
    if not lines:
        return ""
    return "\n".join(lines) + draw(st.sampled_from(["\n", "\n", ""]))


def _check_merge(before: str, after: str, current: str, out: Reverted) -> None:
    # the splices describe the same text, in order, apart, inside ``current``
    assert apply_splices(current, out.splices) == out.text
    pos = 0
    for sp in out.splices:
        assert pos <= sp.start <= sp.end <= len(current)
        pos = sp.end
    # every line the later work added is kept, every line the change added goes, every
    # line it removed comes back: as counted lines, result = current + before - after
    got = Counter(split_keep_ends(out.text))
    if out.already:
        # some hunks were taken back already and stay as they are: the lines that come
        # back are lines from before, the lines that go lines it left
        cur = Counter(split_keep_ends(current))
        b, a = Counter(split_keep_ends(before)), Counter(split_keep_ends(after))
        assert got - cur <= b and cur - got <= a, (got, cur)
        return
    want = Counter(split_keep_ends(current))
    want.update(split_keep_ends(before))
    want.subtract(split_keep_ends(after))
    assert +want == got and not -want, (got, want)


@given(texts(), texts())
def test_taking_back_the_latest_change_restores_the_text_before_it(before: str, after: str) -> None:
    out = revert(before, after, after)
    assert isinstance(out, Reverted)
    assert out.text == before


@given(texts(), texts())
def test_a_change_that_changed_nothing_leaves_the_text_as_it_is(after: str, current: str) -> None:
    out = revert(after, after, current)
    assert out == Reverted(current, ())


@pytest.mark.slow
@settings(max_examples=1500)
@given(texts(), texts(), texts())
def test_a_merge_never_drops_a_later_edit(before: str, after: str, current: str) -> None:
    out = revert(before, after, current)
    if isinstance(out, Reverted):
        _check_merge(before, after, current, out)
    else:
        total = max(1, len(split_keep_ends(current)))
        assert out.lines, "a conflict names the lines in the way"
        last = 0
        for lo, hi in out.lines:
            assert last + 1 < lo <= hi <= total or (last == 0 and 1 <= lo <= hi <= total)
            last = hi


# A text as segments: each is left alone, changed by the change being taken back
# (``before`` → ``after``), or changed later (``after`` → ``current``). Every line is
# unique, so there is one way to read each diff.
_KIND = st.sampled_from(["same", "change", "later"])


@st.composite
def segmented(draw: st.DrawFn, apart: bool) -> tuple[str, str, str, str]:
    kinds = draw(st.lists(_KIND, min_size=1, max_size=8))
    if apart:  # a line nobody touched between any two changed segments
        spaced: list[str] = []
        for k in kinds:
            if spaced and (k != "same" and spaced[-1] != "same"):
                spaced.append("same")
            spaced.append(k)
        kinds = spaced
    counter = iter(range(10_000))

    def fresh(n: int) -> list[str]:
        return [f"line {next(counter)}\n" for _ in range(n)]

    before: list[str] = []
    after: list[str] = []
    current: list[str] = []
    expected: list[str] = []
    for k in kinds:
        if k == "same":
            lines = fresh(draw(st.integers(1, 3)))
            before += lines
            after += lines
            current += lines
            expected += lines
        elif k == "change":
            old, new = fresh(draw(st.integers(0, 2))), fresh(draw(st.integers(0, 2)))
            if old == new:  # both empty: a change with nothing in it
                continue
            before += old
            after += new
            current += new
            expected += old
        else:
            old, new = fresh(draw(st.integers(0, 2))), fresh(draw(st.integers(0, 2)))
            before += old
            after += old
            current += new
            expected += new
    return "".join(before), "".join(after), "".join(current), "".join(expected)


@settings(max_examples=800)
@given(segmented(apart=True))
def test_a_change_no_later_edit_touched_is_taken_back_alone(
    case: tuple[str, str, str, str],
) -> None:
    before, after, current, expected = case
    out = revert(before, after, current)
    assert isinstance(out, Reverted), out
    assert out.text == expected
    _check_merge(before, after, current, out)


@settings(max_examples=800)
@given(segmented(apart=False))
def test_changes_side_by_side_merge_with_every_line_or_refuse(
    case: tuple[str, str, str, str],
) -> None:
    # Side by side, a hunk that ends where another starts is kept with it in the order
    # of their places (which may differ from how they were made); nothing else moves.
    before, after, current, expected = case
    out = revert(before, after, current)
    if isinstance(out, Reverted):
        assert Counter(split_keep_ends(out.text)) == Counter(split_keep_ends(expected))
        _check_merge(before, after, current, out)


def test_a_later_edit_on_the_same_line_is_a_conflict_naming_it() -> None:
    before = "one\ntwo\nthree\nfour\n"
    after = "one\nTWO\nthree\nfour\n"
    current = "zero\none\nTwo!\nthree\nfour\n"
    assert revert(before, after, current) == Conflict(((3, 3),))


def test_a_later_edit_on_the_next_line_is_kept() -> None:
    before = "one\ntwo\nthree\nfour\n"
    after = "one\nTWO\nthree\nfour\n"
    current = "one\nTWO\nTHREE\nfour\n"
    out = revert(before, after, current)
    assert isinstance(out, Reverted)
    assert out.text == "one\ntwo\nTHREE\nfour\n"


def test_lines_a_later_change_deleted_are_named_where_they_were() -> None:
    before = "a\nb\nc\nd\n"
    after = "a\nB\nc\nd\n"
    current = "a\nd\n"  # B and c deleted later
    assert revert(before, after, current) == Conflict(((2, 2),))


def test_two_insertions_at_one_place_are_in_each_others_way() -> None:
    # the change deleted "x"; later, "y" was inserted where it was
    out = revert("a\nx\nb\n", "a\nb\n", "a\ny\nb\n")
    assert out == Conflict(((2, 2),))


def test_an_unended_last_line_is_never_run_into_the_next() -> None:
    # the change added the final line break; later a line was appended after it
    out = revert("a\nx", "a\nx\n", "a\nx\nmore\n")
    assert isinstance(out, Conflict)
    out = revert("a\nx\n", "a\nx\ny\n", "a\nx\nz")
    assert isinstance(out, Conflict) or "\n" in out.text


def test_in_the_way() -> None:
    assert in_the_way((1, 3), (2, 4)) and not in_the_way((1, 3), (3, 4))
    assert in_the_way((2, 2), (2, 2)) and not in_the_way((2, 2), (3, 3))
    assert in_the_way((2, 2), (1, 3)) and not in_the_way((1, 1), (1, 3))
    assert not in_the_way((3, 3), (1, 3))


def test_describe_lines() -> None:
    assert describe_lines(((4, 4),)) == "line 4"
    assert describe_lines(((4, 6),)) == "lines 4-6"
    assert describe_lines(((4, 6), (9, 9))) == "lines 4-6 and 9"
    assert describe_lines(((1, 1), (3, 3), (5, 8))) == "lines 1, 3 and 5-8"


# -- taken back already: only where the file holds the lines from before ------------------


@st.composite
def partly_taken_back(draw: st.DrawFn) -> tuple[str, str, str, str, int]:
    """As :func:`segmented` (apart), with some of the change's hunks taken back by hand
    since: the file holds the lines from before there. The last item counts them."""
    kinds = draw(st.lists(st.sampled_from(["same", "change", "undone", "later"]), max_size=8))
    counter = iter(range(10_000))

    def fresh(n: int) -> list[str]:
        return [f"line {next(counter)}\n" for _ in range(n)]

    before: list[str] = []
    after: list[str] = []
    current: list[str] = []
    expected: list[str] = []
    undone = 0
    for k in ["same", *(x for kind in kinds for x in ("same", kind)), "same"]:
        if k == "same":
            lines = fresh(1)
            before, after, current, expected = (
                before + lines,
                after + lines,
                current + lines,
                expected + lines,
            )
            continue
        old, new = fresh(draw(st.integers(0, 2))), fresh(draw(st.integers(0, 2)))
        if not old and not new:
            continue
        if k == "later":
            before, after, current, expected = (
                before + old,
                after + old,
                current + new,
                expected + new,
            )
            continue
        before, after, expected = before + old, after + new, expected + old
        current += new if k == "change" else old
        undone += k == "undone"
    return "".join(before), "".join(after), "".join(current), "".join(expected), undone


@settings(max_examples=800)
@given(partly_taken_back())
def test_hunks_taken_back_by_hand_are_left_as_they_are_and_counted(
    case: tuple[str, str, str, str, int],
) -> None:
    before, after, current, expected, undone = case
    out = revert(before, after, current)
    assert isinstance(out, Reverted), out
    assert out.text == expected and out.already == undone


@st.composite
def added_line_kept(draw: st.DrawFn) -> tuple[str, str, str]:
    """A change that adds the line ``U``, and later work that keeps a ``U`` somewhere."""
    before = draw(st.lists(_LINE, max_size=6))
    at = draw(st.integers(0, len(before)))
    after = [*before[:at], "U", *before[at:]]
    current = list(after)
    for _ in range(draw(st.integers(1, 4))):
        op = draw(st.sampled_from(["insert", "delete", "replace"]))
        i = draw(st.integers(0, len(current)))
        line = draw(st.sampled_from(["a", "b", "U", "x"]))
        if op == "insert":
            current.insert(i, line)
        elif i < len(current) and op == "delete":
            del current[i]
        elif i < len(current):
            current[i] = line
    return tuple("".join(f"{x}\n" for x in t) for t in (before, after, current))  # type: ignore[return-value]


@settings(max_examples=1000)
@given(added_line_kept())
def test_a_change_whose_added_line_is_still_there_is_never_taken_back_already(
    case: tuple[str, str, str],
) -> None:
    before, after, current = case
    out = revert(before, after, current)
    if isinstance(out, Reverted) and not out.splices and "U\n" not in before:
        assert "U\n" not in split_keep_ends(current), out


def test_a_moved_line_is_not_taken_back_already() -> None:
    # the change added U at the end; later it was moved to the top
    out = revert("a\n", "a\nU\n", "U\na\n")
    assert isinstance(out, Conflict) and out.lines[0][0] == 1
    # the file found by a search: U still there, the lines around it changed
    assert isinstance(revert("a\na\n", "a\nU\na\n", "U\nX\na\n"), Conflict)


def test_a_hunk_taken_back_by_hand_beside_a_later_edit_is_taken_back_already() -> None:
    out = revert("one\ntwo\nthree\n", "one\nTWO\nthree\n", "one\ntwo\nTHREE\n")
    assert out == Reverted("one\ntwo\nTHREE\n", (), 1)


# -- line endings ------------------------------------------------------------------------

_ENDING = st.sampled_from(["\n", "\r\n", "\r"])


@st.composite
def raw_texts(draw: st.DrawFn) -> str:
    lines = draw(st.lists(_LINE, max_size=8))
    text = "".join(line + draw(_ENDING) for line in lines)
    return text + draw(st.sampled_from(["", "", "end"]))


@settings(max_examples=400)
@given(raw_texts(), raw_texts())
def test_taking_back_the_latest_change_restores_its_bytes(before: str, after: str) -> None:
    out = revert_raw(before, after, after)
    assert isinstance(out, RawReverted)
    if to_view(out.raw) == out.view.text:  # (else the caller keeps the file's endings)
        assert out.raw == before


@settings(max_examples=400)
@given(raw_texts(), raw_texts())
def test_a_change_of_nothing_leaves_every_byte(after: str, current: str) -> None:
    out = revert_raw(after, after, current)
    assert isinstance(out, RawReverted) and out.raw == current


@settings(max_examples=500)
@given(raw_texts(), raw_texts(), raw_texts())
def test_the_raw_merge_is_the_merge_of_the_views(before: str, after: str, current: str) -> None:
    raw = revert_raw(before, after, current)
    view = revert(to_view(before), to_view(after), to_view(current))
    assert (raw if isinstance(raw, Conflict) else raw.view) == view


def test_a_switch_of_line_endings_is_taken_back_around_later_work() -> None:
    out = revert_raw("one\ntwo\nthree\n", "one\r\ntwo\r\nthree\r\n", "one\r\ntwo\r\n3\r\n4\r\n")
    assert isinstance(out, RawReverted)
    assert out.raw == "one\ntwo\n3\n4\n"  # lines written later follow the file back
    assert (out.endings_back, out.endings_kept) == (2, 0)


def test_endings_changed_again_since_are_kept() -> None:
    out = revert_raw("a\nb\n", "a\r\nb\r\n", "a\rb\r\n")
    assert isinstance(out, RawReverted)
    assert out.raw == "a\rb\n" and (out.endings_back, out.endings_kept) == (1, 1)


def test_lines_brought_back_follow_endings_switched_later() -> None:
    out = revert_raw("one\ntwo\n", "one\nTWO\n", "one\r\nTWO\r\n")
    assert isinstance(out, RawReverted) and out.raw == "one\r\ntwo\r\n"

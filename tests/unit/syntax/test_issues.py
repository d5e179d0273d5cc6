"""Messages for errors, and which errors a change introduced (pure, with properties)."""

from __future__ import annotations

from dataclasses import replace

from hypothesis import given
from hypothesis import strategies as st

from steadyhand.syntax.issues import (
    EXCERPT_CHARS,
    Edit,
    Issue,
    Leaf,
    error_message,
    excerpt,
    introduced,
    map_offset,
    missing_message,
    new_range,
)

# -- messages ----------------------------------------------------------------------


def leaves(*tokens: str) -> list[Leaf]:
    out, pos = [], 0
    for t in tokens:
        named = t.isidentifier() or t.isdigit()
        out.append(Leaf("identifier" if named else t, named, t, pos))
        pos += len(t) + 1
    return out


def test_a_bracket_without_its_partner_is_named_where_it_is() -> None:
    assert error_message(leaves("print", "(", "a", ")", ")"), "") == ("unexpected `)`", 12)
    assert error_message(leaves("x", "=", "(", "1", "+", "2"), "") == ("unclosed `(`", 4)
    assert error_message(leaves("[", "1", "}"), "")[0] == "unexpected `}`"
    # the innermost bracket left open
    assert error_message(leaves("f", "(", "[", "1"), "")[0] == "unclosed `[`"


def test_one_token_is_unexpected_and_more_are_quoted() -> None:
    assert error_message(leaves("="), "=") == ("unexpected `=`", 0)
    message, at = error_message(leaves("if", "x", "pass"), "if x\n    pass")
    assert message == "syntax error near `if x`" and at is None
    assert error_message([], "") == ("syntax error", None)
    long = "a" * 80
    assert error_message(leaves(long, "b"), long + " b")[0].endswith("…`")


def test_missing_tokens_and_kinds() -> None:
    assert missing_message(";", named=False) == "missing `;`"
    assert missing_message("}", named=False) == "missing `}`"
    assert missing_message("type_identifier", named=True) == "missing type identifier"


@given(st.text(alphabet=st.characters(blacklist_characters="\n"), max_size=400), st.data())
def test_an_excerpt_is_bounded_and_shows_the_column(line: str, data: st.DataObject) -> None:
    column = data.draw(st.integers(1, len(line) + 1))
    ex = excerpt(line, column)
    assert len(ex) <= EXCERPT_CHARS + 2
    body = line.rstrip()
    if len(body) <= EXCERPT_CHARS:
        assert ex == body
    elif column <= len(body):
        assert body[column - 1] in ex


# -- mapping offsets through edits ------------------------------------------------


@st.composite
def edits_of(draw: st.DrawFn, size: int) -> list[Edit]:
    """Ordered, non-overlapping edits of a text of ``size`` bytes."""
    cuts = sorted(draw(st.lists(st.integers(0, size), max_size=8)))
    out: list[Edit] = []
    for a, b in zip(cuts[::2], cuts[1::2], strict=False):
        if out and a < out[-1].end:
            continue
        if out and a == out[-1].end == out[-1].start:
            continue
        out.append(Edit(a, b, draw(st.integers(0, 20))))
    return out


def apply(size: int, edits: list[Edit]) -> list[int | None]:
    """Where each old offset lands, or None inside an edit: the reference mapping."""
    out: list[int | None] = []
    for pos in range(size + 1):
        shift = 0
        where: int | None = pos
        for e in edits:
            if pos <= e.start:
                break
            if pos < e.end:
                where = None
                break
            shift += e.length - (e.end - e.start)
        out.append(None if where is None else where + shift)
    return out


@given(st.integers(0, 200).flatmap(lambda n: st.tuples(st.just(n), edits_of(n))))
def test_map_offset_moves_offsets_past_edits(case: tuple[int, list[Edit]]) -> None:
    size, edits = case
    expected = apply(size, edits)
    for pos, want in enumerate(expected):
        got, inside = map_offset(pos, edits)
        if want is None:
            assert inside is not None
            assert got == new_range(edits, inside)[0]
        else:
            assert inside is None and got == want


# -- what a change introduced -----------------------------------------------------

MESSAGES = ["unexpected `)`", "missing `;`", "unclosed `(`", "syntax error near `x`"]


@st.composite
def issues_in(draw: st.DrawFn, size: int) -> list[Issue]:
    out = []
    for _ in range(draw(st.integers(0, 6))):
        start = draw(st.integers(0, size))
        end = draw(st.integers(start, min(size, start + 30)))
        out.append(
            Issue(
                start=start,
                end=end,
                line=1,
                column=1,
                message=draw(st.sampled_from(MESSAGES)),
                excerpt="",
                context=f"0:line {draw(st.integers(0, 50))}",
            )
        )
    return sorted(out, key=lambda i: (i.start, i.end))


def moved(old: list[Issue], edits: list[Edit]) -> list[Issue]:
    """What the old errors become when the change leaves them alone: untouched ones move
    with the text, those inside an edit stay inside its new text."""
    out = []
    for o in old:
        start, _inside = map_offset(o.start, edits)
        end, end_inside = map_offset(o.end, edits)
        if end_inside is not None:
            end = new_range(edits, end_inside)[1]
        out.append(replace(o, start=start, end=max(start, end)))
    return out


cases = st.integers(1, 300).flatmap(lambda n: st.tuples(st.just(n), issues_in(n), edits_of(n)))


@given(cases)
def test_an_unchanged_set_of_errors_is_never_blamed(
    case: tuple[int, list[Issue], list[Edit]],
) -> None:
    _, old, edits = case
    assert introduced(old, old, []) == []
    assert introduced(old, moved(old, edits), edits) == []
    assert introduced(old, [], edits) == []


@given(cases, st.randoms(use_true_random=False))
def test_errors_moved_with_their_lines_are_never_blamed(
    case: tuple[int, list[Issue], list[Edit]], rnd: object
) -> None:
    size, old, edits = case
    # the same errors (same message, same line text), anywhere in the new text
    shuffled = [replace(o, start=(o.start * 7919) % (size + 1), end=size + 1) for o in old]
    assert introduced(old, shuffled, edits) == []


@given(cases, st.data())
def test_a_new_error_outside_every_old_one_is_reported_alone(
    case: tuple[int, list[Issue], list[Edit]], data: st.DataObject
) -> None:
    size, old, edits = case
    carried = moved(old, edits)
    spans = [(i.span[0], i.end) for i in carried]
    new_size = size + sum(e.length - (e.end - e.start) for e in edits)
    free = [p for p in range(new_size + 1) if not any(a <= p <= b for a, b in spans)]
    if not free:
        return
    pos = data.draw(st.sampled_from(free))
    fresh = Issue(pos, pos, 1, 1, "missing `}`", "", context="0:brand new line")
    new = sorted([*carried, fresh], key=lambda i: (i.start, i.end))
    assert introduced(old, new, edits) == [fresh]


@given(cases, st.data())
def test_more_known_errors_never_blame_more(
    case: tuple[int, list[Issue], list[Edit]], data: st.DataObject
) -> None:
    size, old, edits = case
    new = data.draw(issues_in(size))
    extra = data.draw(issues_in(size))
    blamed = introduced(old, new, edits)
    assert set(introduced(old + extra, new, edits)) <= set(blamed)
    # and what is blamed is always some of the new errors, in their order (a subsequence:
    # ``new`` may hold two equal errors of which only one is blamed)
    rest = iter(new)
    assert all(any(b == i for i in rest) for b in blamed), (new, blamed)


def test_the_same_message_elsewhere_on_another_line_is_new() -> None:
    old = [Issue(10, 11, 2, 5, "unclosed `(`", "", context="4:f(a")]
    new_same_place = [Issue(10, 11, 2, 5, "unclosed `(`", "", context="4:f(a")]
    elsewhere = [*new_same_place, Issue(50, 51, 9, 5, "unclosed `(`", "", context="4:g(b")]
    assert introduced(old, new_same_place, []) == []
    assert introduced(old, elsewhere, []) == [elsewhere[1]]


def test_an_error_left_inside_the_text_an_edit_replaced_is_not_new() -> None:
    # `foo(a b)` became `foo(c b)`: the edit replaced `a`, the error is still there
    old = [Issue(6, 7, 1, 7, "unexpected `b`", "", context="6:foo(a b)")]
    new = [Issue(6, 7, 1, 7, "unexpected `b`", "", context="6:foo(c b)")]
    assert introduced(old, new, [Edit(4, 7, 3)]) == []

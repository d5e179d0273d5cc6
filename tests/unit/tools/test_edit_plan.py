"""What an edit plans (``tools/edit_plan.py``): the lines of its places, the changed
span, the lines shown after it."""

from __future__ import annotations

from hypothesis import assume, given
from hypothesis import strategies as st

from steadyhand.state.file_state import merge_ranges
from steadyhand.text.splices import Splice, apply_splices
from steadyhand.tools.edit_plan import _line_at, changed_span, shown_after, splice_lines


@given(
    st.lists(st.text("ab\n", max_size=60), min_size=1, max_size=3),
    st.lists(st.tuples(st.integers(0, 2), st.integers(0, 60), st.booleans()), max_size=12),
)
def test_line_lookups_in_any_order_count_from_the_start(
    texts: list[str], lookups: list[tuple[int, int, bool]]
) -> None:
    for which, off, copy in lookups:
        view = texts[which % len(texts)]
        if copy:  # an equal text in another object: found by its key, not its identity
            view = "".join(list(view))
        off = min(off, len(view))
        key = ("disk", view, "utf-8")
        assert _line_at(view, off, key) == view.count("\n", 0, off) + 1


@st.composite
def _spliced(draw: st.DrawFn) -> tuple[str, list[Splice]]:
    """A text and ordered, non-overlapping splices on it (any may be empty)."""
    view = draw(st.text(alphabet="ab\n", max_size=60))
    cuts = sorted(draw(st.lists(st.integers(0, len(view)), min_size=2, max_size=8)))
    pairs = list(zip(cuts[::2], cuts[1::2], strict=False))
    assume(pairs)
    texts = st.text(alphabet="xy\n", max_size=6)
    return view, [Splice(a, b, draw(texts)) for a, b in pairs]


@given(_spliced(), st.integers(0, 60))
def test_splice_lines_and_the_changed_span_count_as_from_the_top(
    case: tuple[str, list[Splice]], known: int
) -> None:
    view, splices = case
    key = ("disk", view + "\0splices", "utf-8")
    _line_at(view, min(known, len(view)), key)  # some line already known in this text
    lines = splice_lines(view, splices, key)
    assert lines == [
        (
            view.count("\n", 0, sp.start) + 1,
            view.count("\n", 0, max(sp.start, sp.end - 1)) + 1,
        )
        for sp in splices
    ]
    # what the whole-span counts from the first splice gave
    new_view = apply_splices(view, splices)
    first, last = splices[0], splices[-1]
    first_line = view.count("\n", 0, first.start) + 1
    new_end = last.end + len(new_view) - len(view)
    assert changed_span(view, new_view, splices, lines) == (
        first_line,
        first_line + view.count("\n", first.start, max(first.start, last.end - 1)),
        first_line + new_view.count("\n", first.start, max(first.start, new_end - 1)),
    )


def _shown_by_origin(view: str, splices: list[Splice], shown: set[int]) -> set[int]:
    """The lines of the spliced text that hold only characters the agent wrote or
    characters of old lines in ``shown``: a character-by-character model."""
    origin: list[int] = []  # per character of the new text: its old line, or 0 if written
    line, pos = 1, 0
    for sp in [*splices, Splice(len(view), len(view), "")]:
        for ch in view[pos : sp.start]:
            origin.append(line)
            line += ch == "\n"
        for ch in view[sp.start : sp.end]:
            line += ch == "\n"
        origin.extend([0] * len(sp.text))
        pos = sp.end
    new_view = apply_splices(view, splices)
    out: set[int] = set()
    n, start = 1, 0
    while start < len(new_view):
        end = new_view.find("\n", start)
        end = len(new_view) if end < 0 else end + 1
        if all(o == 0 or o in shown for o in origin[start:end]):
            out.add(n)
        n, start = n + 1, end
    return out


@given(_spliced(), st.sets(st.integers(1, 40)))
def test_lines_shown_after_splices_are_those_seen_or_written(
    case: tuple[str, list[Splice]], extra: set[int]
) -> None:
    """After an edit, a line counts as shown only if it holds nothing but what the agent
    saw (every line an edit replaces had to be shown) or wrote; none between the places."""
    view, splices = case
    lines = splice_lines(view, splices, ("disk", view + "\0shown", "utf-8"))
    seen = set(extra) | {n for first, last in lines for n in range(first, last + 1)}
    ranges: tuple[tuple[int, int], ...] = ()
    for n in sorted(seen):
        ranges = merge_ranges(ranges, (n, n))
    after = shown_after(ranges, view, splices, lines)
    new_view = apply_splices(view, splices)
    total = new_view.count("\n") + (0 if new_view.endswith("\n") or not new_view else 1)
    got = {n for a, b in after for n in range(a, b + 1) if n <= total}
    assert got == _shown_by_origin(view, splices, seen)

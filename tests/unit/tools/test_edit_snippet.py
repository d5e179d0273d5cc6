"""The snippet an edit's result shows: the new text at every changed place, numbered."""

from __future__ import annotations

from hypothesis import given, settings

from steadyhand.text.lines import split_lines
from steadyhand.text.render import snippet_at
from steadyhand.text.splices import Splice, apply_splices
from steadyhand.tools.edit_plan import SNIPPET_LINES, changed_snippet
from tests.unit.text.test_diff import spliced


def _lines_of(view: str, splices: list[Splice]) -> list[tuple[int, int]]:
    return [
        (
            view.count("\n", 0, sp.start) + 1,
            view.count("\n", 0, max(sp.start, sp.end - 1)) + 1,
        )
        for sp in splices
    ]


def _numbered(snippet: str) -> dict[int, str]:
    out: dict[int, str] = {}
    for row in snippet.split("\n"):
        number, tab, text = row.partition("\t")
        if tab:
            out[int(number)] = text
    return out


@settings(max_examples=300, deadline=None)
@given(spliced())
def test_every_numbered_line_is_that_line_of_the_new_text(
    case: tuple[str, list[Splice]],
) -> None:
    old, splices = case
    if not splices:
        return
    new = apply_splices(old, splices)
    snippet = changed_snippet(old, new, splices, _lines_of(old, splices))
    new_lines = split_lines(new)
    shown = _numbered(snippet)
    for number, text in shown.items():
        assert new_lines[number - 1] == text
    # the first changed place is always shown, at its line in the new text
    first = new.count("\n", 0, splices[0].start) + 1
    if first <= len(new_lines):
        assert first in shown, snippet


def test_one_change_shows_its_lines_with_context() -> None:
    old = "".join(f"line {k}\n" for k in range(1, 41))
    sp = Splice(old.index("line 20"), old.index("line 20") + 7, "twenty")
    new = apply_splices(old, [sp])
    snippet = changed_snippet(old, new, [sp], _lines_of(old, [sp]))
    assert snippet == snippet_at(new, sp.start, 20, 20)
    assert sorted(_numbered(snippet)) == [18, 19, 20, 21, 22]


def test_places_far_apart_are_each_shown_between_dots() -> None:
    old = "".join(f"line {k}\n" for k in range(1, 1001))
    splices = [
        Splice(old.index(f"line {k}\n"), old.index(f"line {k}\n") + len(f"line {k}"), f"L{k}")
        for k in (250, 500, 750)
    ]
    new = apply_splices(old, splices)
    snippet = changed_snippet(old, new, splices, _lines_of(old, splices))
    shown = _numbered(snippet)
    assert {250: "L250", 500: "L500", 750: "L750"}.items() <= shown.items()
    assert snippet.count("\n   ...\n") == 2
    assert len(shown) == 15  # each with two lines of context


def test_places_close_together_are_shown_as_one() -> None:
    old = "".join(f"line {k}\n" for k in range(1, 41))
    splices = [
        Splice(old.index(f"line {k}\n"), old.index(f"line {k}\n") + 4, "LINE") for k in (10, 14)
    ]
    new = apply_splices(old, splices)
    snippet = changed_snippet(old, new, splices, _lines_of(old, splices))
    assert "..." not in snippet
    assert sorted(_numbered(snippet)) == list(range(8, 17))


def test_many_places_stop_at_the_budget_and_say_how_many_more() -> None:
    old = "".join(f"line {k}\n" for k in range(1, 401))
    ks = range(10, 400, 20)  # 20 places, one line each
    splices = [Splice(old.index(f"line {k}\n"), old.index(f"line {k}\n") + 4, "LINE") for k in ks]
    new = apply_splices(old, splices)
    snippet = changed_snippet(old, new, splices, _lines_of(old, splices))
    assert snippet.endswith(
        f"... and {len(ks) - SNIPPET_LINES} more changed places (the diff has every change)"
    )
    assert (
        sum(1 for text in _numbered(snippet).values() if text.startswith("LINE")) == SNIPPET_LINES
    )

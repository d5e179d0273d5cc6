"""Edge cases of edit matching: indentation of a tab file whose first line the model
copied without indentation, blank lines left as they were, quote pairs on insertions,
and line breaks of mixed-ending files the model did not change."""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from steadyhand.protocol.errors import ErrorCode, ToolError
from steadyhand.text.lines import NewlineMap, ending_stats, to_view
from steadyhand.text.matching import INDENTATION, carry_over, plan_edit
from steadyhand.text.splices import apply_splices, raw_splices

SETTINGS = settings(
    max_examples=int(os.environ.get("STEADYHAND_EXAMPLES", "300")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)


def edit(view: str, old: str, new: str) -> str:
    plan = plan_edit(view, old, new)
    return apply_splices(view, plan.splices)


# -- 1: the first line's indentation counts ------------------------------------------

TABS = "def f():\n\tif a:\n\t\tb()\n\treturn 1\n"
SPACES = "def f():\n    if a:\n        b()\n    return 1\n"


@pytest.mark.parametrize(
    ("new", "tabs", "spaces"),
    [
        (
            "if a:\n    b()\nc()",
            "def f():\n\tif a:\n\t\tb()\n\tc()\n\treturn 1\n",
            "def f():\n    if a:\n        b()\n    c()\n    return 1\n",
        ),
        (
            "if a:\n    if c:\n        b()",
            "def f():\n\tif a:\n\t\tif c:\n\t\t\tb()\n\treturn 1\n",
            "def f():\n    if a:\n        if c:\n            b()\n    return 1\n",
        ),
    ],
)
def test_unindented_first_line_in_a_tab_file(new: str, tabs: str, spaces: str) -> None:
    plan = plan_edit(TABS, "if a:\n    b()", new)
    assert plan.tier is INDENTATION
    assert apply_splices(TABS, plan.splices) == tabs
    assert edit(SPACES, "if a:\n    b()", new) == spaces


def test_a_reindent_with_more_than_one_reading_is_refused() -> None:
    # The first line starts the file line, so only ("  ", "\t\t\t") is known: tab widths
    # 2, 4 and 8 all fit with some shift, and put an unindented new line in different
    # places, so the edit has no single reading.
    view = "if a:\n\t\t\tb()\n"
    with pytest.raises(ToolError) as err:
        plan_edit(view, "if a:\n  b()", "if a:\n  b()\nc()")
    assert err.value.code is ErrorCode.NO_MATCH
    # where all readings agree, the edit goes through
    assert edit(view, "if a:\n  b()", "if a:\n  c()") == "if a:\n\t\t\tc()\n"


def test_a_line_at_the_first_lines_level_stays_there() -> None:
    # tab width 2 with no shift is the one reading that needs none: c() stays at column 0
    view = "if a:\n\t\tb()\n"
    assert edit(view, "if a:\n    b()", "if a:\n    b()\nc()") == "if a:\n\t\tb()\nc()\n"


def test_tabs_drawn_as_four_spaces_still_work() -> None:
    view = "func f() {\n\tif a {\n\t\tb()\n\t}\n}\n"
    old = "    if a {\n        b()\n    }"
    new = "    if a {\n        b()\n        c()\n    }"
    assert edit(view, old, new) == "func f() {\n\tif a {\n\t\tb()\n\t\tc()\n\t}\n}\n"


# -- 2: blank lines the model left alone keep the file's bytes ------------------------


def test_blank_line_with_a_tab_stays_a_tab() -> None:
    view = "def f():\n\tif x:\n\t\n\t\treturn 1\n"
    old = "    if x:\n    \n        return 1"
    new = "    if x:\n    \n        return 2"
    assert edit(view, old, new) == "def f():\n\tif x:\n\t\n\t\treturn 2\n"


def test_blank_line_with_spaces_keeps_them() -> None:
    view = "def f():\n    a = 1\n    \n    b = 2\n"
    assert (
        edit(view, "a = 1\n\nb = 2", "a = 1\n\nb = 3") == "def f():\n    a = 1\n    \n    b = 3\n"
    )


def test_blank_line_the_model_changed_is_as_given() -> None:
    view = "def f():\n    a = 1\n    \n    b = 2\n"
    out = edit(view, "a = 1\n\nb = 2", "a = 1\n\n\nb = 3")
    assert out.startswith("def f():\n    a = 1\n") and out.endswith("    b = 3\n")


# -- 3: quote pairs on insertions ------------------------------------------------------


@pytest.mark.parametrize(
    ("view", "old", "new", "want"),
    [
        ("f(“a”, “b”)\n", 'f("a", "b")', 'f("a", "z", "b")', 'f(“a”, "z", “b”)\n'),
        ("x = “a” “b”\n", 'x = "a" "b"', 'x = "a" "c" "b"', 'x = “a” "c" “b”\n'),
        ("l = [‘a’, ‘b’]\n", "l = ['a', 'b']", "l = ['a', 'new', 'b']", "l = [‘a’, 'new', ‘b’]\n"),
        (
            "He said “yes” and “no”.\n",
            'He said "yes" and "no".',
            'He said "yes", "maybe" and "no".',
            'He said “yes”, "maybe" and “no”.\n',
        ),
        ("s = “abc”\n", 's = "abc"', 's = "abd"', "s = “abd”\n"),
        ("I don’t say ‘x’\n", "I don't say 'x'", "I don't say 'y'", "I don’t say ‘y’\n"),
    ],
)
def test_inserted_quoted_items_keep_quote_pairs(view: str, old: str, new: str, want: str) -> None:
    assert edit(view, old, new) == want


def paired(text: str) -> bool:
    """Every quote opens or closes a pair of one kind: “…” or "…"."""
    quotes = [c for c in text if c in '“”"']
    if len(quotes) % 2:
        return False
    return all(
        (a, b) in (("“", "”"), ('"', '"')) for a, b in zip(quotes[::2], quotes[1::2], strict=True)
    )


word = st.text(alphabet="abcxyz ", min_size=1, max_size=5)


@SETTINGS
@given(
    st.lists(word, min_size=1, max_size=6),
    st.data(),
    st.sampled_from(["f({})", "[{}]", "x = {}", "say {} now"]),
    st.sampled_from([", ", " ", " and "]),
)
def test_quotes_stay_paired_when_a_quoted_item_is_inserted(
    items: list[str], data: st.DataObject, shape: str, sep: str
) -> None:
    k = data.draw(st.integers(0, len(items)))
    extra = data.draw(word)
    curly = shape.format(sep.join(f"“{w}”" for w in items))
    old = shape.format(sep.join(f'"{w}"' for w in items))
    new_items = [f'"{w}"' for w in items]
    new_items.insert(k, f'"{extra}"')
    new = shape.format(sep.join(new_items))
    out = carry_over(curly, old, new)
    assert out.replace("“", '"').replace("”", '"') == new
    assert paired(out), (curly, new, out)
    # the unchanged items keep their curly quotes
    assert (
        out.count("“") == len(items) - (1 if extra in items else 0)
        or out.count("“") >= len(items) - 1
    )
    view = f"before\n{curly}\nafter\n"
    assert paired(edit(view, old, new))


# -- 4: mixed line endings: line breaks the model kept keep their bytes ----------------


def raw_edit(raw: str, old: str, new: str) -> str:
    view = to_view(raw)
    plan = plan_edit(view, old, new)
    stats = ending_stats(raw)
    mixed = view if stats.style == "mixed" else None
    rsp = raw_splices(NewlineMap(raw), plan.splices, stats.dominant, mixed_view=mixed, raw=raw)
    return apply_splices(raw, rsp)


@pytest.mark.parametrize(
    ("raw", "old", "new", "want"),
    [
        ("a\r\nb\nc\r\nd\r\n", "b\nc", "B\nC", "a\r\nB\nC\r\nd\r\n"),
        ("a\rb\nc\r\n", "a\nb", "A\nB", "A\rB\nc\r\n"),
        ("a\r\nb\nc\r\nd\r\n", "b\nc", "B\nX\nC", None),
        ("a\nb\r\nc\r\n", "a\nb", "a", "a\r\nc\r\n"),
        # a lone CR never ends up right before an LF (they would read as one break)
        ("a\rX\nb\n", "X", "", "a\r\r\nb\n"),
        ("a\rX\nb\n", "X", "\nY", "a\r\r\nY\nb\n"),
        ("a\rb\rX\n\rc\r", "X", "Y\n", "a\rb\rY\r\n\n\rc\r"),
    ],
)
def test_mixed_endings_keep_unchanged_breaks(
    raw: str, old: str, new: str, want: str | None
) -> None:
    out = raw_edit(raw, old, new)
    assert to_view(out) == apply_splices(to_view(raw), plan_edit(to_view(raw), old, new).splices)
    if want is not None:
        assert out == want
    else:  # lines added: which break is new is unclear; the lines around keep theirs
        assert out.startswith("a\r\nB") and out.endswith("C\r\nd\r\n")


@SETTINGS
@given(
    st.lists(
        st.tuples(st.text(alphabet="abc", max_size=3), st.sampled_from(["\n", "\r\n", "\r"])),
        min_size=2,
        max_size=8,
    ),
    st.data(),
)
def test_mixed_endings_edit_gives_the_planned_view(
    parts: list[tuple[str, str]], data: st.DataObject
) -> None:
    raw = "".join(t + e for t, e in parts)
    view = to_view(raw)
    i = data.draw(st.integers(0, len(view) - 1))
    j = data.draw(st.integers(i + 1, len(view)))
    new = data.draw(st.text(alphabet="abcX\n", max_size=10))
    old = view[i:j]
    if old == new or view.find(old, view.find(old) + 1) >= 0:  # one place only
        return
    out = raw_edit(raw, old, new)
    assert to_view(out) == view[:i] + new + view[j:]
    # a line the edit does not reach keeps its ending
    assert out.endswith(raw[len(raw) - (len(view) - j) :] if j < len(view) else "")

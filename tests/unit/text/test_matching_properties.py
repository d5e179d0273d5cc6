"""Properties of tiered matching over generated files and edits."""

from __future__ import annotations

import itertools
import os

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from steadyhand.protocol.errors import ErrorCode, ToolError
from steadyhand.text.encoding import Encoding, decode
from steadyhand.text.lines import NewlineMap, ending_stats, to_view
from steadyhand.text.matching import EXACT, TIERS, locate, plan_edit
from steadyhand.text.splices import Splice, apply_splices, compose, raw_splices

SETTINGS = settings(
    max_examples=int(os.environ.get("STEADYHAND_EXAMPLES", "300")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)

CHARS = "ab x=()'\"\u2019\u201c\u201d-\u2013\u2014.\u2026\u00a0\t"
line = st.text(alphabet=CHARS, max_size=12)
lines = st.lists(line, min_size=1, max_size=12)


def view_of(ls: list[str]) -> str:
    return "\n".join(ls) + "\n"


def occurrences(hay: str, needle: str) -> int:
    """Occurrences of ``needle``, overlapping ones included."""
    n, i = 0, hay.find(needle)
    while i >= 0:
        n += 1
        i = hay.find(needle, i + 1)
    return n


def region(draw: st.DrawFn, text: str) -> tuple[int, int]:
    i = draw(st.integers(0, len(text) - 1))
    j = draw(st.integers(i + 1, min(len(text), i + 40)))
    return i, j


@st.composite
def exact_edits(draw: st.DrawFn) -> tuple[str, str, str]:
    view = view_of(draw(lines))
    i, j = region(draw, view)
    new = draw(st.text(alphabet=CHARS + "\n", max_size=20))
    return view, view[i:j], new


@SETTINGS
@given(exact_edits())
def test_unique_exact_edit_is_str_replace(case: tuple[str, str, str]) -> None:
    view, old, new = case
    assume(old != new and occurrences(view, old) == 1)
    plan = plan_edit(view, old, new, markdown=True)
    assert plan.tier is EXACT
    assert apply_splices(view, plan.splices) == view.replace(old, new, 1)


@st.composite
def repeated_edits(draw: st.DrawFn) -> tuple[str, str, str]:
    chunk = draw(st.text(alphabet=CHARS + "\n", min_size=1, max_size=10))
    parts = draw(st.lists(line, min_size=2, max_size=4))
    view = chunk.join(parts)
    new = draw(st.text(alphabet=CHARS + "\n", max_size=10))
    return view, chunk, new


@SETTINGS
@given(repeated_edits())
def test_repeated_exact_text_is_ambiguous_unless_replace_all(case: tuple[str, str, str]) -> None:
    view, old, new = case
    assume(old != new and occurrences(view, old) > 1)
    with pytest.raises(ToolError) as exc:
        plan_edit(view, old, new, markdown=True)
    assert exc.value.code == ErrorCode.AMBIGUOUS
    if view.count(old) == occurrences(view, old):  # no overlaps: str.replace semantics
        plan = plan_edit(view, old, new, markdown=True, replace_all=True)
        assert apply_splices(view, plan.splices) == view.replace(old, new)


# One near-miss kind per example, each undone by exactly one tier.
PERTURB = {
    "line_endings": lambda s: s.replace("\n", "\r\n"),
    "quotes": lambda s: s.replace("\u2019", "'").replace("\u201c", '"').replace("\u201d", '"'),
    "punctuation": lambda s: (
        s.replace("\u2013", "-").replace("\u2014", "-").replace("\u2026", "...")
    ).replace("\u00a0", " "),
    "trailing_whitespace": lambda s: s.replace("\n", "  \n"),
    "indentation": lambda s: "\n".join("    " + x if x.strip() else x for x in s.split("\n")),
}


@st.composite
def near_misses(draw: st.DrawFn) -> tuple[str, tuple[int, int], str, str, str]:
    kind = draw(st.sampled_from(sorted(PERTURB)))
    view = view_of(draw(lines))
    if kind == "indentation":  # whole lines, so the block can be re-indented
        starts = [0] + [k + 1 for k, c in enumerate(view) if c == "\n" and k + 1 < len(view)]
        a = draw(st.integers(0, len(starts) - 1))
        b = draw(st.integers(a + 1, len(starts)))
        i, j = starts[a], starts[b] if b < len(starts) else len(view)
    else:
        i, j = region(draw, view)
    old = PERTURB[kind](view[i:j])
    new = old + draw(st.sampled_from(["Z", "\nZZ", "\u201cZ\u201d"]))
    return view, (i, j), old, new, kind


@SETTINGS
@given(near_misses())
def test_tolerated_tier_never_touches_text_outside_the_match(
    case: tuple[str, tuple[int, int], str, str, str],
) -> None:
    view, _, old, new, _ = case
    assume(old != new)
    try:
        plan = plan_edit(view, old, new, markdown=True)
    except ToolError as err:
        assert err.code in (ErrorCode.AMBIGUOUS, ErrorCode.NO_MATCH)
        return
    result = apply_splices(view, plan.splices)
    pos = 0
    out_pos = 0
    for sp in plan.splices:
        assert 0 <= sp.start <= sp.end <= len(view)
        untouched = view[pos : sp.start]
        assert result[out_pos : out_pos + len(untouched)] == untouched
        out_pos += len(untouched) + len(sp.text)
        pos = sp.end
    assert result[out_pos:] == view[pos:]


@SETTINGS
@given(near_misses())
def test_a_tier_finds_the_place_the_model_meant(
    case: tuple[str, tuple[int, int], str, str, str],
) -> None:
    view, (i, j), old, _, kind = case
    found = locate(view, old)
    assert found is not None, "the perturbed text must be found by some tier"
    tier_names = [t.name for t in TIERS]
    assert tier_names.index(found.tier.name) <= tier_names.index(kind)
    if found.tier.name == kind and len(found.candidates) == 1 and found.overlap is None:
        c = found.candidates[0]
        assert c.start < max(j, i + 1) and c.end > i - 1, (c, (i, j))


@st.composite
def twins(draw: st.DrawFn) -> tuple[str, str]:
    """A file holding two spellings of one phrase that only a tolerant tier equates."""
    pre, mid, post = draw(line), draw(line), draw(line)
    a = "say \u201chi\u201d \u2013 ok"
    b = "say \u201chi\u201d \u2014 ok"
    view = f"{pre}\n{a}\n{mid}\n{b}\n{post}\n"
    return view, 'say "hi" - ok'


@SETTINGS
@given(twins())
def test_a_tier_never_picks_one_of_two_equal_candidates(case: tuple[str, str]) -> None:
    view, old = case
    assume(old not in view)
    with pytest.raises(ToolError) as exc:
        plan_edit(view, old, "changed")
    assert exc.value.code == ErrorCode.AMBIGUOUS


endings = st.sampled_from(["\n", "\r\n", "\r"])
encodings = st.sampled_from(["utf-8", "utf-8-sig", "utf-16-le", "utf-16-be"])


@pytest.mark.slow
@SETTINGS
@given(st.lists(st.tuples(line, endings), min_size=1, max_size=10), encodings, st.data())
def test_line_endings_bom_and_encoding_round_trip(
    raw_lines: list[tuple[str, str]], enc_name: str, data: st.DataObject
) -> None:
    raw = "".join(text + nl for text, nl in raw_lines)
    enc = Encoding(enc_name.replace("-sig", ""), bom=enc_name != "utf-8")
    text, found_enc = decode(enc.encode(raw))
    assert text == raw and found_enc.label == enc.label
    view = to_view(raw)
    i = data.draw(st.integers(0, len(view) - 1))
    j = data.draw(st.integers(i + 1, len(view)))
    old = view[i:j]
    assume(occurrences(view, old) == 1 and "\n" not in old)
    plan = plan_edit(view, old, "NEW\nLINE", markdown=True)
    newline = ending_stats(raw).dominant
    new_raw = apply_splices(raw, raw_splices(NewlineMap(raw), plan.splices, newline))
    assert to_view(new_raw) == apply_splices(view, plan.splices)
    # Every line ending outside the edit is kept; the new line break takes the dominant one.
    nmap = NewlineMap(raw)
    a, b = nmap.to_raw(i), nmap.to_raw(j)
    assert new_raw[:a] == raw[:a] and new_raw[len(new_raw) - (len(raw) - b) :] == raw[b:]
    assert new_raw[a : len(new_raw) - (len(raw) - b)] == f"NEW{newline}LINE"
    back, enc2 = decode(enc.encode(new_raw))
    assert back == new_raw and enc2.label == enc.label


@SETTINGS
@given(st.text(alphabet="abc\n", min_size=1, max_size=30), st.data())
def test_composed_splices_equal_applying_each_step(base: str, data: st.DataObject) -> None:
    current = base
    steps: list[tuple[Splice, ...]] = []
    for _ in range(data.draw(st.integers(1, 4))):
        i = data.draw(st.integers(0, len(current)))
        j = data.draw(st.integers(i, len(current)))
        text = data.draw(st.text(alphabet="XYZ\n", max_size=5))
        step = (Splice(i, j, text),)
        steps.append(step)
        current = apply_splices(current, step)
    composed = compose(len(base), steps)
    assert apply_splices(base, composed) == current
    assert all(a.end <= b.start for a, b in itertools.pairwise(composed))


def test_match_may_end_between_two_ellipsis_characters() -> None:
    # "…" becomes "..."; a model's "..." for the first of two "…" ends between them.
    found = locate("ab……\n", "ab...")
    assert found is not None and len(found.candidates) == 1
    assert (found.candidates[0].start, found.candidates[0].end) == (0, 3)


@st.composite
def _multi_edits(draw: st.DrawFn) -> tuple[str, list[tuple[str, str]]]:
    """A text and edits whose old strings are mostly cut from it (so many match)."""
    words = st.sampled_from(["alpha", "beta", "gamma", "x = 1", "y", "\n", " ", "(", ")"])
    if draw(st.booleans()):  # numbered lines: most cuts from them are unique
        n = draw(st.integers(1, 60))
        base = "".join(f"{k}: {draw(words)}\n" for k in range(n))
    else:
        base = "".join(draw(st.lists(words, min_size=1, max_size=40)))
    edits = []
    for _ in range(draw(st.integers(2, 4))):
        choice = draw(st.integers(0, 3))
        starts = [0] + [i + 1 for i, c in enumerate(base[:-1]) if c == "\n"]
        if choice >= 2 and base:  # from a line start: with a line number, often unique
            a = draw(st.sampled_from(starts))
            old = base[a : a + draw(st.integers(4, 12))]
        elif choice == 1 and base:
            a = draw(st.integers(0, len(base) - 1))
            b = draw(st.integers(a + 1, min(len(base), a + 12)))
            old = base[a:b]
        else:
            old = "".join(draw(st.lists(words, min_size=1, max_size=3)))
        if draw(st.booleans()) and base:  # new text that may make a place for a later edit
            a = draw(st.integers(0, len(base) - 1))
            new = base[a : a + draw(st.integers(1, 12))] + draw(words)
        else:
            new = "".join(draw(st.lists(words, max_size=3)))
        edits.append((old, new))
    return base, edits


@st.composite
def _spaced_line_edits(draw: st.DrawFn) -> tuple[str, list[tuple[str, str]]]:
    """Numbered lines, and edits of whole lines a few lines apart; a new text may carry a
    later edit's old line (a second place for it) or join two lines."""
    words = st.sampled_from(["alpha", "beta", "x = 1", "y", ""])
    n = draw(st.integers(8, 60))
    lines = [f"{k}: {draw(words)}\n" for k in range(n)]
    picks = draw(st.lists(st.integers(0, n - 1), min_size=2, max_size=4, unique=True))
    olds = [lines[k] for k in picks]
    edits = []
    for i, old in enumerate(olds):
        later = olds[i + 1 :]
        kind = draw(st.integers(0, 3))
        if kind == 0 and later:
            new = draw(st.sampled_from(later)) + "z\n"
        elif kind == 1:
            new = old.rstrip("\n")  # joins the next line
        else:
            new = old.replace(": ", ":: ")
        edits.append((old, new))
    return "".join(lines), edits


@settings(max_examples=400, deadline=None)
@given(st.one_of(_multi_edits(), _spaced_line_edits()))
def test_planning_on_the_original_text_agrees_with_planning_edit_by_edit(
    case: tuple[str, list[tuple[str, str]]],
) -> None:
    from steadyhand.protocol.params import EditItem
    from steadyhand.tools.multi_edit import plan_all, plan_on_base

    base, pairs = case
    items = [EditItem(old, new) for old, new in pairs]
    fast = plan_on_base(base, "f.py", items)
    if fast is None:
        return  # edit by edit, as always
    final, splices, plans = fast
    slow_final, steps, slow_plans = plan_all(base, "f.py", items)  # must not refuse
    assert final == slow_final
    assert apply_splices(base, splices) == slow_final
    assert splices == compose(len(base), steps)
    assert [p.tier for p in plans] == [p.tier for p in slow_plans]
    assert [p.replacements for p in plans] == [p.replacements for p in slow_plans]


def test_planning_on_the_original_text_is_used_for_far_apart_edits() -> None:
    from steadyhand.protocol.params import EditItem
    from steadyhand.tools.multi_edit import plan_on_base

    base = "".join(f"value_{k} = {k}\n" for k in range(100))
    items = [EditItem(f"value_{k} = {k}\n", f"value_{k} = -{k}\n") for k in (80, 10, 50)]
    fast = plan_on_base(base, "f.py", items)
    assert fast is not None
    final, splices, _ = fast
    assert [sp.start for sp in splices] == sorted(sp.start for sp in splices)
    assert "value_10 = -10\n" in final and "value_80 = -80\n" in final
    # an edit whose new text makes a second place for a later edit: edit by edit
    items = [
        EditItem("value_3 = 3\n", "value_3 = 3\nvalue_60 = 60\n"),
        EditItem("value_60 = 60\n", ""),
    ]
    assert plan_on_base(base, "f.py", items) is None


def test_a_tolerated_match_keeps_the_blank_the_model_wrote_mid_line() -> None:
    """A blank that ends the model's old_string is trailing in the file, but the model's
    line goes on after it in new_string: it stays there, as in an exact match."""
    view = "x = 1\t\ny = a \n"  # a trailing tab the model left out, and a space it kept
    plan = plan_edit(view, "x = 1\ny = a ", "x = 1\ny = a + b")
    assert plan.tier.name == "trailing_whitespace"
    assert apply_splices(view, plan.splices) == "x = 1\t\ny = a + b\n"
    view = "def f():\n    return a \n"  # indented otherwise by the model
    plan = plan_edit(view, "def f():\n        return a ", "def f():\n        return a if ok else b")
    assert plan.tier.name == "indentation"
    assert apply_splices(view, plan.splices).startswith("def f():\n    return a if ok else b")


@pytest.mark.parametrize(
    ("view", "old"), [("a\n\n\nb\n", "\n\n"), ("aaa\n", "aa"), ("xyxyx\n", "xyx")]
)
def test_overlapping_places_are_ambiguous_whatever_the_flags(view: str, old: str) -> None:
    for flags in (
        {},
        {"replace_all": True},
        {"expected_replacements": 2},
        {"expected_replacements": 1},
    ):
        with pytest.raises(ToolError) as exc:
            plan_edit(view, old, "Z", markdown=True, **flags)  # type: ignore[arg-type]
        assert exc.value.code == ErrorCode.AMBIGUOUS, flags
        assert exc.value.fields["matches"] == 2
        assert "overlapping" in exc.value.message and "replace_all" not in exc.value.message

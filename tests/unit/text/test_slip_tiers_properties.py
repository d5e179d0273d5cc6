"""Properties of the second round of near-miss tiers over generated files and edits.

Each example makes one slip of one kind in a stretch of a generated file, the way a
model would (the text in another normalization form, escaped as HTML, with tabs
written as spaces, with the read output's line numbers, with a final line break the
file lacks, escaped once more as in JSON), and appends ``Z`` in ``new_string``. Then:

- some tier finds it, no later than the kind's own, and the kind's tier finds the place
  the slip came from;
- a tolerated match never changes a byte outside its splices, and when the kind's tier
  decides alone, the result is the file with ``Z`` appended there and nothing else:
  ``new_string`` was read the way ``old_string`` was, and the file's own characters
  stayed;
- two places equal under a tier, and mixed readings, are refused.
"""

from __future__ import annotations

import html
import json
import os
import unicodedata
from collections.abc import Callable

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from steadyhand.protocol.errors import ErrorCode, ToolError
from steadyhand.text import slips
from steadyhand.text.matching import TIERS, locate, plan_edit
from steadyhand.text.render import number_lines
from steadyhand.text.splices import apply_splices

SETTINGS = settings(
    max_examples=int(os.environ.get("STEADYHAND_EXAMPLES", "300")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)

CHARS = "ab x=()'\"-.\t&<>é\u00f1"
line = st.text(alphabet=CHARS, max_size=12)
lines = st.lists(line, min_size=1, max_size=10)

Case = tuple[str, tuple[int, int], str, str, str]  # view, (i, j), old, new, kind


def _region(draw: st.DrawFn, text: str) -> tuple[int, int]:
    i = draw(st.integers(0, len(text) - 1))
    j = draw(st.integers(i + 1, min(len(text), i + 40)))
    return i, j


def _whole_lines(draw: st.DrawFn, view: str) -> tuple[int, int]:
    starts = [0] + [k + 1 for k, c in enumerate(view) if c == "\n" and k + 1 < len(view)]
    a = draw(st.integers(0, len(starts) - 1))
    b = draw(st.integers(a + 1, len(starts)))
    return starts[a], starts[b] if b < len(starts) else len(view)


@st.composite
def unicode_forms(draw: st.DrawFn) -> Case:
    plain = "\n".join(draw(lines)) + "\n"
    i, j = _region(draw, plain)
    file_form, model_form = draw(st.sampled_from([("NFC", "NFD"), ("NFD", "NFC")]))

    def f(s: str) -> str:
        return unicodedata.normalize(file_form, s)

    view = f(plain)
    a = len(f(plain[:i]))
    b = a + len(f(plain[i:j]))
    old = unicodedata.normalize(model_form, plain[i:j])
    return view, (a, b), old, old + "Z", "unicode_normalization"


@st.composite
def references(draw: st.DrawFn) -> Case:
    plain = "\n".join(draw(lines)) + "\n"
    i, j = _region(draw, plain)
    if draw(st.booleans()):  # the model escaped what the file has as characters
        old = html.escape(plain[i:j], quote=False)
        return plain, (i, j), old, old + "&amp;Z", "entities"
    view = html.escape(plain, quote=False)  # the file has references, the model not
    a = len(html.escape(plain[:i], quote=False))
    b = a + len(html.escape(plain[i:j], quote=False))
    return view, (a, b), plain[i:j], plain[i:j] + "Z", "entities"


@st.composite
def tabs_as_spaces(draw: st.DrawFn) -> Case:
    view = "\n".join(draw(lines)) + "\n"
    i, j = _region(draw, view)
    # runs of blanks inside a line compare as one unit: old_string starts before a run
    # or after it, never within it (nor right at it, mid-line), and does not end in one
    blank = " \t\u00a0"
    assume(i == 0 or view[i - 1] == "\n" or view[i] not in blank)
    assume(view[j - 1] not in blank or view[j] == "\n")
    width = draw(st.sampled_from([2, 4, 8]))
    old = slips.INNER_RUN_RE.sub(lambda m: m.group().replace("\t", " " * width), view[i:j])
    return view, (i, j), old, old + "Z", "tabs"


@st.composite
def numbered(draw: st.DrawFn) -> Case:
    view = "\n".join(draw(lines)) + "\n"
    i, j = _whole_lines(draw, view)
    first = view.count("\n", 0, i) + 1
    body = view[i:j]
    ends = body.endswith("\n")
    shown, _ = number_lines((body[:-1] if ends else body).split("\n"), first, 2000)
    if "\n" in shown and draw(st.booleans()):  # the model dropped the padding
        shown = "\n".join(x.lstrip(" ") for x in shown.split("\n"))
    old = shown + ("\n" if ends else "")
    return view, (i, j), old, old + "Z", "line_numbers"


@st.composite
def missing_final_newline(draw: st.DrawFn) -> Case:
    view = "\n".join(draw(lines))
    assume(view and not view.endswith("\n"))
    i = draw(st.integers(0, len(view) - 1))
    old = view[i:] + "\n"
    return view, (i, len(view)), old, view[i:] + "Z\n", "final_newline"


@st.composite
def escaped(draw: st.DrawFn) -> Case:
    view = "\n".join(draw(st.lists(st.text(alphabet=CHARS + "\\", max_size=12), min_size=1)))
    view += "\n"
    i, j = _region(draw, view)

    def esc(s: str) -> str:
        return json.dumps(s, ensure_ascii=False)[1:-1]

    return view, (i, j), esc(view[i:j]), esc(view[i:j] + "Z"), "escapes"


slipped = st.one_of(
    unicode_forms(), references(), tabs_as_spaces(), numbered(), missing_final_newline(), escaped()
)
NAMES = [t.name for t in TIERS]


@SETTINGS
@given(slipped)
def test_a_tier_finds_the_place_the_model_meant(case: Case) -> None:
    view, (i, j), old, _, kind = case
    found = locate(view, old)
    assert found is not None, "the slipped text must be found by some tier"
    assert NAMES.index(found.matched.name) <= NAMES.index(kind)
    if found.matched.name == kind and len(found.candidates) == 1 and found.overlap is None:
        c = found.candidates[0]
        assert c.start < max(j, i + 1) and min(c.end, len(view)) > i - 1, (c, (i, j))


@SETTINGS
@given(slipped)
def test_a_tolerated_match_touches_nothing_else(case: Case) -> None:
    view, (i, j), old, new, kind = case
    assume(old != new)
    try:
        plan = plan_edit(view, old, new, markdown=True)
    except ToolError as err:
        assert err.code in (ErrorCode.AMBIGUOUS, ErrorCode.NO_MATCH)
        return
    result = apply_splices(view, plan.splices)
    pos = out_pos = 0
    for sp in plan.splices:
        assert 0 <= sp.start <= sp.end <= len(view)
        untouched = view[pos : sp.start]
        assert result[out_pos : out_pos + len(untouched)] == untouched
        out_pos += len(untouched) + len(sp.text)
        pos = sp.end
    assert result[out_pos:] == view[pos:]
    plain = not view[i:j].endswith((" ", "\t")) and not {"'", '"'} & set(view[i:j])
    if plan.tier.name == kind and plain:
        # (blanks ending old_string may stand for a line end, and a quoted string is
        # carried over only as a whole: see test_matching_properties)
        # new_string was read as old_string was: the file's text stays, Z is added
        # (the model's "&amp;Z" is "&Z" when it escaped everything)
        tail = "&Z" if new.endswith("&amp;Z") else "Z"
        assert result == view[:j] + tail + view[j:], (view, old, new, result)


# -- refused -------------------------------------------------------------------------


def _refused(view: str, old: str, code: ErrorCode = ErrorCode.AMBIGUOUS) -> None:
    with pytest.raises(ToolError) as exc:
        plan_edit(view, old, "changed")
    assert exc.value.code == code, exc.value.message


TWINS: dict[str, tuple[Callable[[str], str], str]] = {
    # two places that only the tier makes equal to old_string: ambiguous
    "unicode_normalization": (lambda pad: f"{pad}cafe\u0301\n{pad}x\ncafe\u0301\n", "caf\u00e9"),
    "entities": (lambda pad: f"{pad}a &amp; b\n{pad}\na &#38; b\n", "a & b"),
    "tabs": (lambda pad: f"{pad}x\t= 1\n{pad}\nx\t\t= 1\n", "x    = 1"),
    "line_numbers": (lambda pad: f"{pad}\nfoo()\n{pad}\nfoo()\n", "     2\tfoo()"),
    "escapes": (lambda pad: f'{pad}say "hi"\n{pad}\nsay "hi"\n', 'say \\"hi\\"'),
}


@SETTINGS
@given(st.sampled_from(sorted(TWINS)), st.text(alphabet="ab =", max_size=8))
def test_two_readings_are_refused(kind: str, pad: str) -> None:
    make, old = TWINS[kind]
    view = make(pad)
    assume(old not in view)
    _refused(view, old)


@SETTINGS
@given(st.text(alphabet="abcxyz ", min_size=3, max_size=30), st.data())
def test_letter_case_and_numbers_stay_refused(text: str, data: st.DataObject) -> None:
    view = f"{text}\n1 + 1\n"
    k = data.draw(st.integers(0, len(text) - 1))
    assume(text[k].isalpha())
    _refused(view, text[:k] + text[k].upper() + text[k + 1 :], ErrorCode.NO_MATCH)
    _refused(view, "1 + 2", ErrorCode.NO_MATCH)
    # nor with line-number prefixes, entities or escapes around them
    _refused(view, "     2\t1 + 2", ErrorCode.NO_MATCH)
    _refused(view, "1 &#43; 2", ErrorCode.NO_MATCH)


def test_mixed_reference_directions_are_refused() -> None:
    _refused("x &amp; y < z\n", "x & y &lt; z", ErrorCode.NO_MATCH)


def test_a_missing_or_extra_line_stays_refused() -> None:
    view = "a()\nb()\nc()\n"
    _refused(view, "     1\ta()\n     2\tc()", ErrorCode.NO_MATCH)  # numbers skip a line
    _refused(view, "     1\ta()\n     2\tc()\n     3\td()", ErrorCode.NO_MATCH)
    _refused(view, "a()\\nc()", ErrorCode.NO_MATCH)


def test_a_final_newline_is_only_read_at_the_end_of_the_file() -> None:
    # "return foo\n" is not "return foo" + "bar": the line break must be where the file ends
    _refused("x = 1\nreturn foobar", "return foo\n", ErrorCode.NO_MATCH)
    plan = plan_edit("x = 1\nreturn foo", "return foo\n", "return bar\n")
    assert plan.tier.name == "final_newline"
    assert apply_splices("x = 1\nreturn foo", plan.splices) == "x = 1\nreturn bar"


def test_real_line_numbers_in_the_file_are_never_stripped() -> None:
    view = "1\talpha\n2\tbeta\n"  # a table whose lines start with numbers and tabs
    plan = plan_edit(view, "2\tbeta", "2\tgamma")
    assert plan.tier.name == "exact"
    assert apply_splices(view, plan.splices) == "1\talpha\n2\tgamma\n"
    # copied with the read output's prefixes: one prefix comes off each line
    plan = plan_edit(view, "     2\t2\tbeta", "     2\t2\tgamma")
    assert plan.tier.name == "line_numbers"
    assert apply_splices(view, plan.splices) == "1\talpha\n2\tgamma\n"


def test_blanks_ending_old_string_mid_line_are_the_files_own() -> None:
    """A tier that drops the blanks ending old_string (re-indentation here) stops before
    the file's own blanks: the replacement covers them, rather than writing the model's
    again before them; other blanks there (a tab) have no single reading."""
    view = "if x:\n    y = a  + b\n"
    plan = plan_edit(view, "if x:\n  y = a ", "if x:\n  y = a * 3 ")
    assert plan.tier.name == "indentation"
    assert apply_splices(view, plan.splices) == "if x:\n    y = a * 3  + b\n"
    _refused("if x:\n    y = a\t+ b\n", "if x:\n  y = a ", ErrorCode.NO_MATCH)

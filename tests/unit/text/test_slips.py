"""The pure pieces behind the second round of near-miss tiers, and the size bounds."""

from __future__ import annotations

import difflib
import html
import itertools
import json
import os
import unicodedata

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from steadyhand.text import slips
from steadyhand.text.budget import Budget, OutOfTime, common_ends, opcodes, similarity
from steadyhand.text.render import number_lines

SETTINGS = settings(
    max_examples=int(os.environ.get("STEADYHAND_EXAMPLES", "300")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)

texts = st.text(alphabet="ab c\n\t(){}=;\"'\\&<>é\u00a0", max_size=60)


# -- bounds -------------------------------------------------------------------------


def _apply(a: str, b: str, ops: list[tuple[str, int, int, int, int]]) -> str:
    out = []
    pos_a = pos_b = 0
    for op, i1, i2, j1, j2 in ops:
        assert (i1, j1) == (pos_a, pos_b), ops  # contiguous, in order
        out.append(a[i1:i2] if op == "equal" else b[j1:j2])
        if op == "equal":
            assert a[i1:i2] == b[j1:j2]
        pos_a, pos_b = i2, j2
    assert (pos_a, pos_b) == (len(a), len(b))
    return "".join(out)


@SETTINGS
@given(texts, texts, st.sampled_from([0, 4, 40, 40_000]))
def test_bounded_opcodes_always_turn_a_into_b(a: str, b: str, cells: int) -> None:
    assert _apply(a, b, opcodes(a, b, cells)) == b


@SETTINGS
@given(texts, texts)
def test_bounded_opcodes_are_difflibs_when_small(a: str, b: str) -> None:
    ops = opcodes(a, b, 10**9)
    pre, suf = common_ends(a, b)
    inner = difflib.SequenceMatcher(
        None, a[pre : len(a) - suf], b[pre : len(b) - suf], autojunk=False
    )
    assert [o for o in ops if o[0] != "equal"] == [
        (op, pre + i1, pre + i2, pre + j1, pre + j2)
        for op, i1, i2, j1, j2 in inner.get_opcodes()
        if op != "equal"
    ]


@SETTINGS
@given(texts, texts)
def test_similarity_is_a_ratio_and_exact_when_small(a: str, b: str) -> None:
    r = similarity(a, b)
    assert 0.0 <= r <= 1.0 + 1e-9
    if a == b:
        assert r == 1.0
    true = difflib.SequenceMatcher(None, a, b, autojunk=False).ratio()
    # the common ends count as matched: at least difflib's own ratio, never above 1
    assert r >= true - 1e-9


def test_common_ends_on_long_texts() -> None:
    a = "x" * 5000 + "A" + "y" * 3000
    b = "x" * 5000 + "BB" + "y" * 3000
    assert common_ends(a, b) == (5000, 3000)
    assert common_ends("aaa", "aaaa") == (3, 0)
    assert common_ends("", "abc") == (0, 0)


def test_a_budget_runs_out() -> None:
    now = [0.0]
    budget = Budget(1.0, clock=lambda: now[0])
    budget.check()
    now[0] = 1.5
    assert budget.expired()
    with pytest.raises(OutOfTime):
        budget.check()
    assert not Budget(None).expired()


# -- Unicode normalization ------------------------------------------------------------


def test_composing_starters_match_the_unicode_data() -> None:
    """Every character of combining class 0 that is the second half of a canonical pair
    (NFC may join it to what precedes it) is in the table."""
    second: set[int] = set()
    for cp in range(0x30000):
        d = unicodedata.decomposition(chr(cp))
        if d and not d.startswith("<"):
            parts = d.split()
            if len(parts) == 2:
                second.add(int(parts[1], 16))
    starters = [cp for cp in second if not unicodedata.combining(chr(cp))]
    assert all(slips._joins_back(chr(cp)) for cp in starters)


@SETTINGS
@given(
    st.text(
        alphabet="aeouncAEO \u0301\u0300\u0303\u0308\u0327\u00e9\u00f1\u1100\u1161\u11a8\uac00",
        max_size=30,
    )
)
def test_nfc_pieces_normalize_one_by_one(text: str) -> None:
    units = list(slips.nfc_units(text))
    # the stretches do not overlap, and outside them nothing changes under NFC
    assert all(a[1] <= b[0] for a, b in itertools.pairwise(units))
    out: list[str] = []
    pos = 0
    for start, end in units:
        out.append(text[pos:start])
        pieces = slips.nfc_pieces(text[start:end])
        assert "".join(pieces) == text[start:end]
        out.extend(unicodedata.normalize("NFC", p) for p in pieces)
        pos = end
    out.append(text[pos:])
    assert "".join(out) == unicodedata.normalize("NFC", text)


# -- entities -------------------------------------------------------------------------


@SETTINGS
@given(st.text(alphabet="ab <>&\"'é\u2019", max_size=40))
def test_references_decode_to_what_was_escaped(text: str) -> None:
    assert slips.decode_entities(html.escape(text, quote=True)) == text
    assert slips.decode_entities(text.replace("&", "&#38;")) == text


def test_entity_directions() -> None:
    assert slips.entities_one_way("a && b", "a &amp;&amp; b") == "model"
    assert slips.entities_one_way("Tom &amp; Jerry", "Tom & Jerry") == "file"
    assert slips.entities_one_way("&lt;a&gt;", "&lt;a&gt;") == ""
    assert slips.entities_one_way("&lt;a & b", "<a &amp; b") is None  # two ways: refused
    assert slips.decode_entity("&#10;") == "&#10;"  # never a line break
    assert slips.decode_entity("&nosuch;") == "&nosuch;"
    assert slips.decode_entity("&#x1F600;") == "\U0001f600"


# -- tabs inside lines ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("file", "model", "reading"),
    [
        ("x\t= 1", "x   = 1", (4, False)),  # to the next stop at width 4
        ("x\t= 1", "x    = 1", (4, True)),  # four spaces for the tab
        ("x\t= 1", "x       = 1", (8, False)),
        ("x\t= 1", "x        = 1", (8, True)),
        ("ab\tc", "ab  c", (4, False)),
        ("x    = 1", "x\t= 1", (4, True)),  # the model wrote a tab for the file's spaces
        ("a\tb\tc", "a   b   c", (4, False)),
    ],
)
def test_tab_readings(file: str, model: str, reading: tuple[int, bool]) -> None:
    assert slips.tab_reading(file, 0, model) == reading


@pytest.mark.parametrize(
    ("file", "model"),
    [
        ("x\t= 1", "x = 1"),  # a single space is never a tab
        ("x  = 1", "x    = 1"),  # spaces for spaces: no tab to read
        ("a\tb\tc", "a   b       c"),  # two widths in one match
        ("x\t= 1", "x     = 1"),  # five spaces: no width gives five
    ],
)
def test_tab_readings_refused(file: str, model: str) -> None:
    assert slips.tab_reading(file, 0, model) is None


def test_tab_columns_count_from_the_line_start() -> None:
    # "abcx" fills columns 0-3: the tab after it reaches column 8 at width 4 (4 spaces),
    # whether the match starts at the line start or after "abc"
    assert slips.tab_reading("abcx\ty", 0, "abcx    y") == (4, False)
    assert slips.tab_reading("abcx\ty", 3, "x    y") == (4, False)
    # a run before the match start is not the model's
    assert slips.tab_reading("a\tbcx y", 3, "cx y") == (4, False)
    # three spaces fit no tab stop of the file's line there: refused
    assert slips.tab_reading("abcx\ty", 3, "x   y") is None


# -- line-number prefixes -------------------------------------------------------------


@SETTINGS
@given(
    st.lists(st.text(alphabet="ab \t=()", max_size=12), min_size=1, max_size=8),
    st.integers(1, 2_000_000),
)
def test_read_output_prefixes_come_off(lines: list[str], first: int) -> None:
    shown, _ = number_lines(lines, first, 2000)
    stripped = slips.strip_line_numbers(shown)
    assert stripped is not None
    last = first + len(lines) - 1
    assert stripped == ("\n".join(lines), True, first, last)
    assert slips.strip_new_line_numbers(shown, True, (first, last)) == "\n".join(lines)


def test_prefixes_need_consecutive_numbers_and_every_line() -> None:
    assert slips.strip_line_numbers("     3\ta\n     5\tb") is None
    assert slips.strip_line_numbers("     3\ta\nb") is None
    assert slips.strip_line_numbers("3\ta") is None  # one line needs the read's padding
    assert slips.strip_line_numbers("3\ta\n4\tb") == ("a\nb", False, 3, 4)
    assert slips.strip_line_numbers("     7\ta\n     8\n") == ("a\n\n", True, 7, 8)
    # a new line the model wrote without a prefix stays as written
    assert slips.strip_new_line_numbers("     7\ta\nnew\n     8\tb", True, (7, 8)) == "a\nnew\nb"


# -- escaped once too often -----------------------------------------------------------


@SETTINGS
@given(st.text(alphabet="ab \n\t\"'\\`/x", max_size=40))
def test_json_escaping_is_undone(text: str) -> None:
    escaped = json.dumps(text, ensure_ascii=False)[1:-1]
    if escaped == text:
        return
    assert slips.unescape(escaped) == text


def test_unescape_refuses_what_is_no_escape() -> None:
    assert slips.unescape(r"a\d") is None
    assert slips.unescape("a\\") is None
    assert slips.unescape("plain") is None
    assert slips.unescape(r"\"a\"\n\\") == '"a"\n\\'

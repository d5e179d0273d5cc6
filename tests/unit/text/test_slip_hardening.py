"""Wrong text a tier must never write, as pure functions and properties.

- No match starts or ends inside a character (a letter and its combining accent, an
  emoji ZWJ sequence, a flag, a Hangul syllable in jamo), in any tier, with
  ``replace_all`` too; when the only match would, the edit is refused.
- Line-number prefixes come off ``new_string`` only where they continue the numbering
  of the lines matched: a line of data ``2024<tab>17`` stays.
- Where the file writes ``&amp;`` and the model wrote ``&``, what the model newly
  writes is escaped the file's way.
- Only what the model changed differs in the result: an untouched NFD word stays NFD,
  even when the string around it grew into an expression; trailing blanks the model
  left as they were stay.
"""

from __future__ import annotations

import html
import os
import unicodedata

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from steadyhand.protocol.errors import ErrorCode, ToolError
from steadyhand.text import graphemes, slips
from steadyhand.text.chars import normalize_quotes
from steadyhand.text.matching import carry_over, locate, plan_edit
from steadyhand.text.splices import apply_splices

SETTINGS = settings(
    max_examples=int(os.environ.get("STEADYHAND_EXAMPLES", "300")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)


def nfd(s: str) -> str:
    return unicodedata.normalize("NFD", s)


def nfc(s: str) -> str:
    return unicodedata.normalize("NFC", s)


def edited(view: str, old: str, new: str, **kw: object) -> str:
    plan = plan_edit(view, old, new, **kw)  # type: ignore[arg-type]
    return apply_splices(view, plan.splices)


def refusal(view: str, old: str, new: str, **kw: object) -> ToolError:
    with pytest.raises(ToolError) as exc:
        plan_edit(view, old, new, **kw)  # type: ignore[arg-type]
    return exc.value


# -- clusters ---------------------------------------------------------------------------

FAMILY = "\U0001f468\u200d\U0001f469\u200d\U0001f467"  # man ZWJ woman ZWJ girl
FLAGS = "\U0001f1eb\U0001f1f7\U0001f1e9\U0001f1ea"  # FR DE
THUMB = "\U0001f44d\U0001f3fd"  # thumbs up, medium skin tone
HEART = "\u2764\ufe0f"  # with the emoji variation selector
HAN = nfd("한국")  # two syllables as six jamo


def test_what_a_cluster_holds() -> None:
    e = nfd("é")
    assert graphemes.inside(e, 1) and not graphemes.inside(e, 0)
    assert all(graphemes.inside(FAMILY, k) for k in range(1, len(FAMILY)))
    assert graphemes.inside(THUMB, 1) and graphemes.inside(HEART, 1)
    # regional indicators pair up: a break between the two flags, none inside each
    assert [k for k in range(1, 4) if not graphemes.inside(FLAGS, k)] == [2]
    # jamo: L V T | L V T
    assert [k for k in range(1, 6) if not graphemes.inside(HAN, k)] == [3]
    # nothing extends a line break; a mark after one starts a cluster of its own
    assert not graphemes.inside("a\n\u0301", 2)
    assert not graphemes.inside("ab", 1) and not graphemes.inside("a b", 1)
    assert graphemes.cluster_around(nfd("José"), 4) == (3, 5)
    assert graphemes.describe(nfd("é")) == "'" + nfd("é") + "' (U+0065 U+0301)"


def test_a_match_ending_inside_an_accented_letter_is_refused() -> None:
    view = nfd('user = "José"\n')
    err = refusal(view, 'user = "Jose', 'user = "Joseph')
    assert err.code == ErrorCode.NO_MATCH
    assert "inside a character" in err.message and "Include the whole character" in err.message
    assert err.fields["lines"] == [1]
    # the whole character: found, and the accent stays on its letter
    assert edited(view, nfd('user = "José'), nfd('user = "Josée')) == nfd('user = "Josée"\n')


def test_a_match_starting_inside_a_character_is_refused() -> None:
    view = nfd("x = 'é'\n")
    err = refusal(view, "\u0301'", "'")
    assert err.code == ErrorCode.NO_MATCH and "starts inside a character" in err.message


@pytest.mark.parametrize(
    ("view", "old"),
    [
        (FAMILY + " family\n", "\U0001f468\u200d\U0001f469"),  # part of a ZWJ sequence
        (THUMB + " ok\n", "\U0001f44d"),  # the emoji without its skin tone
        (HEART + " love\n", "\u2764"),  # without its variation selector
        ("flags " + FLAGS + "\n", "\U0001f1f7\U0001f1e9"),  # across two flags
        (HAN + "어\n", HAN[:2]),  # two jamo of a three-jamo syllable
    ],
)
def test_no_tier_splits_other_clusters(view: str, old: str) -> None:
    err = refusal(view, old, "X")
    assert err.code == ErrorCode.NO_MATCH and "inside a character" in err.message


def test_every_tier_keeps_to_whole_characters() -> None:
    # Accents NFC composes are whole in the tiers after it; an emoji and its skin tone
    # (or a letter with a mark that has no composed form) are not composed.
    # quotes: “👍 is found only inside “👍🏽”
    view = f"name = \u201c{THUMB}\u201d\n"
    assert "inside a character" in refusal(view, f'name = "{THUMB[0]}', "name = ").message
    view = "name = \u201cx\u0301\u201d\n"
    assert "inside a character" in refusal(view, 'name = "x', 'name = "y').message
    # indentation: the block is re-indented, but its last line ends inside the emoji
    view = f"if a:\n    x = '{THUMB}'\n"
    err = refusal(view, f"if a:\n  x = '{THUMB[0]}", "if a:\n  x = 'no")
    assert "inside a character" in err.message
    # the read output's line numbers, then the exact tier
    err = refusal(
        view, f"     1\tif a:\n     2\t    x = '{THUMB[0]}", "     1\tif a:\n     2\t    y"
    )
    assert "inside a character" in err.message
    # a final line break the file lacks, with the match starting inside a character
    err = refusal("a" + THUMB, THUMB[1] + "\n", "b\n")
    assert "starts inside a character" in err.message


def test_a_split_place_is_no_place_beside_a_whole_one() -> None:
    view = nfd('a = "Jose"\nb = "José"\n')
    # the one whole place is the match; the split one is not a second place
    assert edited(view, '"Jose', '"Joseph') == nfd('a = "Joseph"\nb = "José"\n')
    assert edited(view, '"Jose', '"Joseph', replace_all=True) == nfd('a = "Joseph"\nb = "José"\n')


MARKED = "ab e\u0301\u0323 \u200d\U0001f600\ufe0f\U0001f3fb\U0001f1eb\U0001f1f7x\n"
QUOTED = {"'": "\u2019", '"': "\u201d"}


@SETTINGS
@given(st.text(alphabet=MARKED + "'\"", min_size=1, max_size=40), st.data())
def test_no_match_boundary_falls_inside_a_cluster(text: str, data: st.DataObject) -> None:
    """Any stretch of a text of marks, joiners, selectors, modifiers and flags, as
    written or with its quotes curly in the file: an edit either keeps to whole
    characters or is refused, in every tier and with ``replace_all``."""
    curly = data.draw(st.booleans())
    view = "".join(QUOTED.get(c, c) for c in text) if curly else text
    i = data.draw(st.integers(0, len(view) - 1))
    j = data.draw(st.integers(i + 1, len(view)))
    old = normalize_quotes(view[i:j])
    assume(old.strip())
    for replace_all in (False, True):
        try:
            plan = plan_edit(view, old, old + "Z", replace_all=replace_all)
        except ToolError:
            continue
        for sp in plan.splices:
            assert not graphemes.splits(view, sp.start, sp.end), (view, old, sp)


# -- line numbers -----------------------------------------------------------------------


def test_a_line_of_data_in_new_string_keeps_its_digits() -> None:
    view = "a\nb\nc\n"
    got = edited(view, "1\ta\n2\tb\n", "1\ta\n2\tb\n2024\t17\n")
    assert got == "a\nb\n2024\t17\nc\n"
    # a line the model numbered on from the last one is its prefix
    assert edited(view, "1\ta\n2\tb\n", "1\ta\n2\tb\n3\tx\n") == "a\nb\nx\nc\n"
    # the read's padded form: the same rule
    got = edited(view, "     1\ta\n     2\tb\n", "     1\ta\n     2\tb\n  2024\t17\n")
    assert got == "a\nb\n  2024\t17\nc\n"


def test_prefixes_come_off_only_where_they_continue_the_numbering() -> None:
    cuts = slips.new_prefixes("7\ta\n8\tb\n9\tc\n2024\td\n8\te\n99", False, (7, 8))
    assert cuts == [2, 2, 2, 0, 2, 0]
    assert slips.strip_new_line_numbers("1\tx\n2024\t17", False, (1, 2)) == "x\n2024\t17"
    assert not slips.every_line_prefixed("1\tx\n2024\t17", False, (1, 2))
    assert slips.every_line_prefixed("1\tx\n2\ty\n3\tz\n", False, (1, 2))


@SETTINGS
@given(
    st.lists(st.text(alphabet="ab =", min_size=1, max_size=6), min_size=2, max_size=6),
    st.integers(1, 500),
    st.integers(0, 3000),
    st.booleans(),
)
def test_data_rows_that_break_the_numbering_are_written_as_given(
    rows: list[str], first: int, number: int, padded: bool
) -> None:
    last = first + len(rows) - 1
    assume(not first <= number <= last + 1)

    def prefix(n: int) -> str:
        return f"{n:>6}\t" if padded else f"{n}\t"

    view = "top\n" * (first - 1) + "\n".join(rows) + "\n"
    old = "".join(prefix(first + k) + r + "\n" for k, r in enumerate(rows))
    data = f"{number:>6}\t17" if padded else f"{number}\t17"
    new = old + data + "\n"
    assert edited(view, old, new) == view + data + "\n"


# -- character references ---------------------------------------------------------------


def test_a_new_ampersand_is_escaped_where_the_file_escapes_them() -> None:
    view = "<item>Fish &amp; Chips</item>\n"
    got = edited(view, "<item>Fish & Chips</item>", "<item>Fish & Chips & Peas</item>")
    assert got == "<item>Fish &amp; Chips &amp; Peas</item>\n"
    # markup the model writes stays markup: the file has raw '<' there
    got = edited(view, "<item>Fish & Chips</item>", "<item><b>Fish</b> & Chips</item>")
    assert got == "<item><b>Fish</b> &amp; Chips</item>\n"
    # a reference the model writes itself stays one
    got = edited(view, "Fish & Chips", "Fish & Chips &amp; Peas")
    assert got == "<item>Fish &amp; Chips &amp; Peas</item>\n"


def test_what_the_file_escapes() -> None:
    assert slips.file_escapes("Fish &amp; Chips") == {"&": "&amp;"}
    assert slips.file_escapes("<a>x &lt; y</a>") == {"&": "&amp;"}  # '<' raw there too
    assert slips.file_escapes("x &lt; y &#38; z") == {"<": "&lt;", "&": "&#38;"}
    assert slips.file_escapes("a && b") == {}
    assert slips.file_escapes("a &lt; b && c") == {"<": "&lt;"}  # bare '&' in the file
    assert slips.escape_like("a & b &lt; c", {"&": "&amp;"}) == "a &amp; b &lt; c"


@SETTINGS
@given(st.text(alphabet="ab &<>", min_size=1, max_size=30), st.data())
def test_new_text_in_an_escaped_file_is_escaped_the_same_way(
    plain: str, data: st.DataObject
) -> None:
    """A file of escaped text (no markup); the model sends a stretch of it unescaped
    and adds ``" & x"``: the result is the file with the addition escaped."""
    view = html.escape(plain, quote=False) + "\n"
    i = data.draw(st.integers(0, len(plain) - 1))
    j = data.draw(st.integers(i + 1, len(plain)))
    old = plain[i:j]
    assume(html.escape(old, quote=False) != old)  # the stretch holds a reference
    assume(not old.endswith(" "))  # (blanks ending old_string may be trailing ones)
    found = locate(view, old)
    assume(found is not None and len(found.candidates) == 1 and found.overlap is None)
    assume(found.tier.name == "entities")
    a = len(html.escape(plain[:i], quote=False))
    b = a + len(html.escape(old, quote=False))
    assert edited(view, old, old + " & x") == view[:b] + " &amp; x" + view[b:]
    assert view[:a] + view[a:b] == view[:b]


# -- only what the model changed --------------------------------------------------------

WORDS = ["naïve", "café", "très", "été", "a", "bon", "über", "noël"]
NEW_WORDS = ["ÉTÉ", "X", "ÜBER", "Y"]


@SETTINGS
@given(
    st.lists(st.sampled_from(WORDS), min_size=1, max_size=8),
    st.lists(st.sampled_from(NEW_WORDS), max_size=3),
    st.sampled_from(["", " + x", ", y"]),
    st.data(),
)
def test_untouched_nfd_words_keep_their_bytes(
    words: list[str], added: list[str], tail: str, data: st.DataObject
) -> None:
    """A string of an NFD file; the model sends it in NFC and changes one run of its
    words (and may add to the expression after it): every other word keeps its NFD
    bytes, and the words the model wrote are as it wrote them."""
    p = data.draw(st.integers(0, len(words)))
    q = data.draw(st.integers(p, len(words)))
    assume(added or p < q or tail)
    kept = words[:p] + added + words[q:]
    assume(kept)
    view = nfd(f's = "{" ".join(words)}"\n')
    old = f's = "{" ".join(words)}"'
    new = f's = "{" ".join(kept)}"{tail}'
    body = " ".join([*(nfd(w) for w in words[:p]), *added, *(nfd(w) for w in words[q:])])
    want = f's = "{body}"{tail}\n'
    assert edited(view, old, new) == want


def test_an_untouched_word_stays_nfd_when_its_string_grows_into_an_expression() -> None:
    view = nfd('s = "naïve café"\n')
    got = edited(view, 's = "naïve café"', 's = "naïve cafés" + x')
    assert got == nfd('s = "naïve café') + 's" + x\n'


def test_carry_over_pairs_quotes_by_their_role() -> None:
    # the file's curly quotes stay where the model kept them; the quotes it added are
    # its own, and no closing quote of the file becomes an opening one
    got = carry_over("x = \u201ca b\u201d", 'x = "a b"', 'x = "a" + "b"')
    assert got == 'x = \u201ca" + "b\u201d'


def test_trailing_blanks_the_model_kept_on_a_changed_line_stay() -> None:
    view = "x = 1  \ny = 2\n"
    assert edited(view, "x = 1  \n", "x = 12  \n") == "x = 12  \ny = 2\n"
    # blanks the model added are still dropped
    assert edited(view, "y = 2", "y = 3   ") == "x = 1  \ny = 3\n"


QUOTE_FILE = {"'": "\u2019", '"': "\u201d", "-": "\u2013"}


@SETTINGS
@given(st.text(alphabet="ab '\"-.é", min_size=2, max_size=30), st.data())
def test_an_insertion_changes_nothing_but_itself(plain: str, data: st.DataObject) -> None:
    """The file with curly quotes, en dashes and NFD accents; the model's old_string is
    a stretch of it with straight quotes, hyphens and NFC accents, and its new_string
    inserts ``Z`` somewhere inside: the result is the file with ``Z`` at that place
    and every other byte as it was."""
    file_of = {c: nfd(QUOTE_FILE.get(c, c)) for c in set(plain)}
    view = "".join(file_of[c] for c in plain) + "\n"
    i = data.draw(st.integers(0, len(plain) - 1))
    j = data.draw(st.integers(i + 1, len(plain)))
    k = data.draw(st.integers(i, j))
    old = plain[i:j]
    found = locate(view, old)
    assume(found is not None and len(found.candidates) == 1 and found.overlap is None)

    def at(n: int) -> int:
        return sum(len(file_of[c]) for c in plain[:n])

    c = found.candidates[0]
    assume((c.start, c.end) == (at(i), at(j)))
    new = plain[i:k] + "Z" + plain[k:j]
    assert edited(view, old, new) == view[: at(k)] + "Z" + view[at(k) :]

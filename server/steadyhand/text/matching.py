"""Finding what the model meant by ``old_string``, and building the replacement.

Everything here is pure: text in, decisions out. Offsets are into the *view* text
(LF line endings, see :mod:`steadyhand.text.lines`); the edit tool maps them to the raw
file text afterwards.

Matching goes in tiers, each tolerating everything the tiers before it tolerate plus one
more kind of near-miss (see docs/matching.md):

1. ``exact``;
2. ``line_endings``: CRLF or CR in ``old_string`` read as line breaks;
3. ``unicode_normalization``: NFC and NFD forms of the same text are equal;
4. ``quotes``: curly and straight quotes are equal;
5. ``punctuation``: Unicode dashes/minus, ``…`` and odd spaces equal their ASCII forms;
6. ``trailing_whitespace``: spaces and tabs at line ends are ignored;
7. ``entities``: HTML/XML character references equal their characters (one way);
8. ``tabs``: tabs inside lines written as spaces, at one tab width;
9. ``indentation``: a block whose indentation differs by one uniform change.

Then three re-readings of the model's strings, each tried with every tier above:
``final_newline`` (``old_string`` ends with a line break the file's last line lacks),
``line_numbers`` (lines copied with the read output's number prefixes) and ``escapes``
(a string escaped once too often, ``\\n`` for a line break).

The first tier that finds anything decides, and it must find exactly one place (or
``replace_all``): a near-miss is tolerated only when it has one sensible reading. A tier
changes only *how the place is found*; the file's own text outside the matched region is
never touched, and inside it the stretches the model did not change keep the file's
characters.

Tiers that do not map characters one to one (``…`` → ``...``, stripping trailing or
leading whitespace) keep an :class:`OffsetMap` from the normalized text back to its
source, so every match is mapped to exact offsets in the view, and a match that would
start or end inside a normalized unit (in the middle of an ``…``) is not a match.
"""

from __future__ import annotations

import bisect
import dataclasses
import functools
import re
import unicodedata
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Literal

from steadyhand.protocol.errors import ErrorCode, ToolError
from steadyhand.protocol.lists import list_fields
from steadyhand.text import graphemes, slips
from steadyhand.text.budget import (
    CHAR_CELLS,
    LINE_CELLS,
    Budget,
    OutOfTime,
    common_ends,
    opcodes,
)
from steadyhand.text.chars import (
    DASHES,
    ELLIPSIS,
    INVISIBLES,
    ODD_SPACES,
    chars_re,
    normalize_quotes,
    replace_chars,
)
from steadyhand.text.lines import to_view
from steadyhand.text.splices import Splice

Side = Literal["start", "end"]

MARKDOWN_SUFFIXES = frozenset({".md", ".markdown", ".mdx", ".mdown", ".mkd"})

_PUNCT_TABLE = str.maketrans({**dict.fromkeys(DASHES, "-"), **dict.fromkeys(ODD_SPACES, " ")})
_PUNCT_CHARS_RE = chars_re(DASHES + ODD_SPACES)
_PUNCT_RE = re.compile(f"[{ELLIPSIS}{INVISIBLES}]")
_TRAILING_RE = re.compile(r"[ \t]+(?=\n|\Z)")
_LEADING_RE = re.compile(r"^[ \t]+", re.MULTILINE)
#: Leading whitespace of a raw line, odd spaces included.
_INDENT_RE = re.compile(f"[ \t{ODD_SPACES}]*")


# -- offset maps ---------------------------------------------------------------------


def _map_offset(
    pos: int,
    side: Side,
    a0s: tuple[int, ...],
    a1s: tuple[int, ...],
    b0s: tuple[int, ...],
    b1s: tuple[int, ...],
) -> int | None:
    if not a0s:
        return pos
    j = bisect.bisect_right(a0s, pos) - 1
    if j < 0:
        return pos
    a0, a1 = a0s[j], a1s[j]
    if pos <= a1:
        if a0 == a1:  # nothing on this side: the other side's stretch sits at ``pos``
            return b1s[j] if side == "start" else b0s[j]
        if pos == a0:
            return b0s[j]
        if pos == a1:
            return b1s[j]
        return None  # inside a replaced unit
    return b1s[j] + (pos - a1)


@dataclass(frozen=True, slots=True)
class OffsetMap:
    """How offsets in a normalized text relate to offsets in its source.

    Records are the stretches the normalization replaced, ``src[s0:s1]`` became
    ``norm[n0:n1]``; they are sorted and never touch, and between them both texts agree
    character for character. A one-to-one character map needs no records.

    Mapping a boundary offset takes a ``side``: a span's ``start`` skips characters that
    exist only on the other side at that offset, its ``end`` stops before them, so what
    a normalization dropped at a span's edge stays outside the span.
    """

    src_starts: tuple[int, ...] = ()
    src_ends: tuple[int, ...] = ()
    norm_starts: tuple[int, ...] = ()
    norm_ends: tuple[int, ...] = ()

    def to_source(self, pos: int, side: Side) -> int | None:
        """The source offset of normalized offset ``pos`` (None: inside a unit)."""
        return _map_offset(
            pos, side, self.norm_starts, self.norm_ends, self.src_starts, self.src_ends
        )

    def to_normal(self, pos: int, side: Side) -> int | None:
        """The normalized offset of source offset ``pos`` (None: inside a unit)."""
        return _map_offset(
            pos, side, self.src_starts, self.src_ends, self.norm_starts, self.norm_ends
        )


IDENTITY = OffsetMap()

Stage = Callable[[str], tuple[str, OffsetMap]]


def substitute(
    text: str, pattern: re.Pattern[str], repl: Callable[[str], str]
) -> tuple[str, OffsetMap]:
    """``pattern.sub`` that also returns the :class:`OffsetMap` of what it replaced."""
    return replace_spans(
        text, ((m.start(), m.end(), repl(m.group())) for m in pattern.finditer(text))
    )


def replace_spans(text: str, spans: Iterable[tuple[int, int, str]]) -> tuple[str, OffsetMap]:
    """``text`` with each ``text[a:b]`` replaced by ``r`` (``spans``: ``(a, b, r)`` in
    order, not overlapping), and the :class:`OffsetMap` of what was replaced."""
    parts: list[str] = []
    s0s: list[int] = []
    s1s: list[int] = []
    n0s: list[int] = []
    n1s: list[int] = []
    last = 0
    npos = 0
    for a, b, r in spans:
        if r == text[a:b]:
            continue
        parts.append(text[last:a])
        npos += a - last
        # Touching records merge when one of them is empty on a side (a dropped character),
        # since an offset there would map two ways; two real units (``……``) stay apart, so
        # a match may end between them.
        touching = bool(s1s) and s1s[-1] == a
        empty = touching and (n1s[-1] == n0s[-1] or not r or s1s[-1] == s0s[-1] or a == b)
        if touching and empty:
            s1s[-1] = b
            n1s[-1] = npos + len(r)
        else:
            s0s.append(a)
            s1s.append(b)
            n0s.append(npos)
            n1s.append(npos + len(r))
        parts.append(r)
        npos += len(r)
        last = b
    if not s0s:
        return text, IDENTITY
    parts.append(text[last:])
    return "".join(parts), OffsetMap(tuple(s0s), tuple(s1s), tuple(n0s), tuple(n1s))


@dataclass(frozen=True, slots=True)
class Normalized:
    """A text after some normalization stages, with the maps back to its source."""

    text: str
    maps: tuple[OffsetMap, ...] = ()

    def then(self, stage: Stage) -> Normalized:
        text, m = stage(self.text)
        return Normalized(text, self.maps if m is IDENTITY else (*self.maps, m))

    def to_source(self, pos: int, side: Side) -> int | None:
        p: int | None = pos
        for m in reversed(self.maps):
            if p is None:
                return None
            p = m.to_source(p, side)
        return p

    def to_normal(self, pos: int, side: Side) -> int | None:
        p: int | None = pos
        for m in self.maps:
            if p is None:
                return None
            p = m.to_normal(p, side)
        return p


def normalize(text: str, stages: Sequence[Stage]) -> Normalized:
    n = Normalized(text)
    for st in stages:
        n = n.then(st)
    return n


def _quotes_stage(text: str) -> tuple[str, OffsetMap]:
    return normalize_quotes(text), IDENTITY


def _punctuation_stage(text: str) -> tuple[str, OffsetMap]:
    if text.isascii():  # dashes, odd spaces, the ellipsis and invisibles are not ASCII
        return text, IDENTITY
    text = replace_chars(text, _PUNCT_TABLE, _PUNCT_CHARS_RE)
    return substitute(text, _PUNCT_RE, lambda s: "..." if s == ELLIPSIS else "")


def _trailing_stage(text: str) -> tuple[str, OffsetMap]:
    return substitute(text, _TRAILING_RE, lambda s: "")


def _nfc_spans(text: str) -> Iterator[tuple[int, int, str]]:
    for start, end in slips.nfc_units(text):
        unit = text[start:end]
        if unicodedata.is_normalized("NFC", unit):
            continue
        at = start
        for piece in slips.nfc_pieces(unit):
            yield at, at + len(piece), unicodedata.normalize("NFC", piece)
            at += len(piece)


def _nfc_stage(text: str) -> tuple[str, OffsetMap]:
    if slips.is_nfc(text):
        return text, IDENTITY
    return replace_spans(text, _nfc_spans(text))


def _fold(text: str) -> str:
    """``text`` as the stages before the entities tier leave it."""
    text = replace_chars(
        normalize_quotes(unicodedata.normalize("NFC", text)), _PUNCT_TABLE, _PUNCT_CHARS_RE
    )
    return _PUNCT_RE.sub(lambda m: "..." if m.group() == ELLIPSIS else "", text)


def _entities_stage(text: str) -> tuple[str, OffsetMap]:
    if "&" not in text:
        return text, IDENTITY
    return substitute(text, slips.ENTITY_RE, lambda s: _fold(slips.decode_entity(s)))


def _tabs_stage(text: str) -> tuple[str, OffsetMap]:
    if text.isascii() and "\t" not in text and "  " not in text:
        return text, IDENTITY  # no run of blanks to read (the usual minified line)
    return substitute(text, slips.INNER_RUN_RE, lambda s: "\t")


def _dedent_stage(text: str) -> tuple[str, OffsetMap]:
    return substitute(text, _LEADING_RE, lambda s: "")


# -- tiers ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Tier:
    """One way of finding ``old_string``: a name, what it tolerates, and the
    normalization it adds to those of the tiers before it (None: none)."""

    name: str
    tolerated: str
    stage: Stage | None = field(default=None, compare=False)


EXACT = Tier("exact", "")
LINE_ENDINGS = Tier(
    "line_endings", "CRLF or CR line endings in old_string were read as line breaks"
)
QUOTES = Tier("quotes", "curly and straight quotes were treated as equal", _quotes_stage)
PUNCTUATION = Tier(
    "punctuation",
    "Unicode dashes and minus signs, the ellipsis character and non-breaking or other odd "
    "spaces were treated as their plain ASCII forms",
    _punctuation_stage,
)
TRAILING_WHITESPACE = Tier(
    "trailing_whitespace", "spaces and tabs at the ends of lines were ignored", _trailing_stage
)
UNICODE_NORMALIZATION = Tier(
    "unicode_normalization",
    "characters written in another Unicode normalization form (NFC or NFD, such as an "
    "accented letter as one character or as a letter and a combining accent) were treated "
    "as equal",
    _nfc_stage,
)
ENTITIES = Tier(
    "entities",
    "HTML/XML character references (such as &amp;) were treated as the characters they stand for",
    _entities_stage,
)
TABS = Tier(
    "tabs",
    "tabs inside lines were matched with the spaces they were written as",
    _tabs_stage,
)
INDENTATION = Tier(
    "indentation",
    "the block's indentation differed from the file's by one uniform change, so new_string "
    "was re-indented the same way",
)
FINAL_NEWLINE = Tier(
    "final_newline",
    "old_string ended with a line break that the file's last line does not have, so none "
    "was added or removed there",
)
LINE_NUMBERS = Tier(
    "line_numbers",
    "old_string carried the line-number prefixes of the read output; they were taken off "
    "old_string and new_string",
)
ESCAPES = Tier(
    "escapes",
    'old_string was escaped once too often (\\n for a line break, \\" for a quote), so it '
    "and new_string were read unescaped",
)

#: The tiers, tried in order.
TIERS: tuple[Tier, ...] = (
    EXACT,
    LINE_ENDINGS,
    UNICODE_NORMALIZATION,
    QUOTES,
    PUNCTUATION,
    TRAILING_WHITESPACE,
    ENTITIES,
    TABS,
    INDENTATION,
    FINAL_NEWLINE,
    LINE_NUMBERS,
    ESCAPES,
)
_CHAR_TIERS: tuple[Tier, ...] = (
    UNICODE_NORMALIZATION,
    QUOTES,
    PUNCTUATION,
    TRAILING_WHITESPACE,
    ENTITIES,
    TABS,
)
#: How long the search for a near-miss may take (seconds); past it, the edit is refused.
SEARCH_SECONDS = 2.0


def _stages_upto(tier: Tier) -> tuple[Stage, ...]:
    out: list[Stage] = []
    for t in _CHAR_TIERS:
        if t.stage is not None and TIERS.index(t) <= TIERS.index(tier):
            out.append(t.stage)
    return tuple(out)


# -- indentation ---------------------------------------------------------------------


def columns(indent: str, tab_width: int) -> int:
    """The display width of leading whitespace, tabs to the next multiple of ``tab_width``."""
    return slips.width(indent, 0, tab_width)


def _common_suffix(a: str, b: str) -> int:
    n = 0
    while n < len(a) and n < len(b) and a[-1 - n] == b[-1 - n]:
        n += 1
    return n


@dataclass(frozen=True, slots=True)
class Reindent:
    """How the model's indentation maps to the file's: one uniform change."""

    known: tuple[tuple[str, str], ...]  # (model indent, file indent) seen in the match
    prefix: tuple[str, str] | None  # (model prefix, file prefix) swapped on every line
    tab_width: int
    delta: int  # columns added to the model's indentation
    tabs: bool  # the file indents with tabs
    #: Other tab widths under which the change is just as uniform: new_string is
    #: re-indented only if all of them agree on it (else it has no single reading).
    alternatives: tuple[Reindent, ...] = ()

    def apply(self, indent: str) -> str:
        for m, f in self.known:
            if m == indent:
                return f
        if self.prefix is not None and indent.startswith(self.prefix[0]):
            return self.prefix[1] + indent[len(self.prefix[0]) :]
        target = max(0, columns(indent, self.tab_width) + self.delta)
        if self.tabs:
            return "\t" * (target // self.tab_width) + " " * (target % self.tab_width)
        return " " * target


def uniform_change(pairs: Sequence[tuple[str, str]]) -> Reindent | None:
    """The single change that turns each model indentation into the file's, if any.

    ``pairs`` are (model indent, file indent) of the non-blank lines. Either one prefix
    is swapped for another on every line (the model re-based the block), or, with some
    tab width, every line's width moves by the same number of columns (spaces for tabs).
    """
    known: dict[str, str] = {}
    for m, f in pairs:
        known.setdefault(m, f)
    kn = tuple(known.items())
    file_tabs = any("\t" in f for _, f in pairs)
    model_tabs = any("\t" in m for m, _ in pairs)
    prefix: tuple[str, str] | None = None
    consistent = True
    for m, f in pairs:
        n = _common_suffix(m, f)
        p = (m[: len(m) - n], f[: len(f) - n])
        if prefix is None:
            prefix = p
        elif p != prefix:
            consistent = False
            break
    if not pairs:
        return Reindent(kn, ("", ""), 4, 0, False)
    if consistent and prefix is not None and file_tabs == model_tabs:
        delta = columns(prefix[1], 4) - columns(prefix[0], 4)
        return Reindent(kn, prefix, 4, delta, file_tabs)
    options: list[tuple[int, int]] = []
    for w in slips.TAB_WIDTHS:
        deltas = {columns(f, w) - columns(m, w) for m, f in pairs}
        if len(deltas) == 1:
            options.append((w, deltas.pop()))
    if options:
        # One tab width with no shift is the natural reading (the model drew tabs as that
        # many spaces); otherwise every width that fits is kept, and the re-indentation
        # stands only where they all agree (see reindent_text).
        unshifted = [o for o in options if o[1] == 0]
        if len(unshifted) == 1:
            options = unshifted
        readings = [Reindent(kn, None, w, delta, file_tabs) for w, delta in options]
        first = readings[0]
        return Reindent(kn, None, first.tab_width, first.delta, file_tabs, tuple(readings[1:]))
    if consistent and prefix is not None:
        return Reindent(kn, prefix, 4, columns(prefix[1], 4) - columns(prefix[0], 4), file_tabs)
    return None


def _lead_of(line: str) -> str:
    m = _INDENT_RE.match(line)
    return line[: m.end()] if m else ""


def reindent_text(
    text: str,
    old: str,
    file_indents: Sequence[str | None],
    how: Reindent,
    *,
    first_line: bool,
) -> str:
    """``text`` (the model's new_string) in the file's indentation.

    A line that stands where a line of ``old`` stood, with the same indentation, takes
    that file line's own indentation (``file_indents``, None for a line matched
    mid-line); so does a blank line the model left exactly as it was (the file keeps its
    own whitespace there). Any other non-blank line is re-indented by ``how``.
    ``first_line`` False leaves the first line alone (the match starts mid-line there).

    Raises :class:`ToolError` when ``how`` has alternatives (tab widths) that would
    indent the new lines differently: the near-miss then has no single reading.
    """
    old_lines = old.split("\n")
    lines = text.split("\n")
    strip = " \t" + ODD_SPACES
    pairs: dict[int, int] = {}
    stripped_old = [x.strip(strip) for x in old_lines]
    for op, i1, i2, j1, j2 in opcodes(stripped_old, [x.strip(strip) for x in lines], LINE_CELLS):
        if op in ("equal", "replace"):
            for k in range(min(i2 - i1, j2 - j1)):
                pairs[j1 + k] = i1 + k
    for j, line in enumerate(lines):
        if j == 0 and not first_line:
            continue
        lead = _lead_of(line)
        i = pairs.get(j)
        fi = file_indents[i] if i is not None and i < len(file_indents) else None
        if len(lead) == len(line):
            # blank: nothing to indent; unchanged from old_string, it keeps the file's
            if i is not None and fi is not None and old_lines[i] == line:
                lines[j] = fi
            continue
        if i is not None and fi is not None and _lead_of(old_lines[i]) == lead:
            lines[j] = fi + line[len(lead) :]
        else:
            ours = how.apply(lead)
            if any(alt.apply(lead) != ours for alt in how.alternatives):
                raise ToolError(
                    ErrorCode.NO_MATCH,
                    "old_string matches only with its indentation changed, and the change "
                    "has more than one reading (the file's tab width is unclear), so the "
                    "indentation new_string should get is not certain; nothing was changed. "
                    "Copy old_string and new_string with the file's own indentation (tabs "
                    "as tabs).",
                )
            lines[j] = ours + line[len(lead) :]
    return "\n".join(lines)


# -- finding -------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Candidate:
    """One place ``old_string`` matched: ``view[start:end]``."""

    start: int
    end: int
    #: For the indentation tier: ``old_string`` as it reads in the file's indentation,
    #: and how to re-indent ``new_string``.
    old_in_file: str | None = None
    file_indents: tuple[str | None, ...] = ()
    reindent: Reindent | None = None
    first_line: bool = True


@dataclass(frozen=True, slots=True)
class Found:
    tier: Tier
    #: Non-overlapping places, left to right.
    candidates: tuple[Candidate, ...]
    #: A further place overlapping the first one, if any (makes a single match ambiguous).
    overlap: Candidate | None = None
    #: ``old_string`` (CR/CRLF read as LF) and ``new_string`` the way this tier sees them.
    old: str = ""
    new_trimmed: bool = False
    #: The re-readings of the model's strings that made the match (``line_numbers``,
    #: ``escapes``, ``final_newline``, outermost first); ``tier`` then matched the
    #: re-read ``old``. With ``final_newline`` the places are in the text with a line
    #: break added at its end.
    readings: tuple[Tier, ...] = ()
    #: For ``line_numbers``: the prefixes were padded as the read output pads them,
    #: and the first and last numbers they carried.
    padded: bool = True
    numbers: tuple[int, int] = (0, 0)
    #: When the tier found only places that start or end inside a character (``e`` of
    #: an ``e`` and its combining accent): those places, and ``candidates`` is empty.
    split: tuple[Candidate, ...] = ()

    @property
    def spans(self) -> tuple[tuple[int, int], ...]:
        return tuple((c.start, c.end) for c in self.candidates)

    @property
    def matched(self) -> Tier:
        """The tier the result names: the outermost re-reading, else the tier."""
        return self.readings[0] if self.readings else self.tier

    @property
    def phantom(self) -> bool:
        return FINAL_NEWLINE in self.readings


@dataclass(slots=True)
class Places:
    """What one search found: valid places (non-overlapping, left to right), one
    overlapping the first, and the places that would start or end inside a character
    (:mod:`steadyhand.text.graphemes`), which are no match."""

    found: list[Candidate]
    overlap: Candidate | None = None
    split: list[Candidate] = field(default_factory=list)


def _search(
    haystack: str,
    needle: str,
    check: Callable[[int, int], Candidate | None],
    budget: Budget | None = None,
    *,
    source: str,
) -> Places:
    """Valid places of ``needle`` (non-overlapping), and one overlapping the first.

    ``check`` maps a place in ``haystack`` to a candidate in ``source`` (the view), or
    None; a candidate that starts or ends inside a character of ``source`` is set
    aside as split."""
    found: list[Candidate] = []
    split: list[Candidate] = []
    if not needle:
        return Places(found)

    def whole(s: int, e: int) -> Candidate | None:
        c = check(s, e)
        if c is not None and graphemes.splits(source, c.start, c.end):
            if all((x.start, x.end) != (c.start, c.end) for x in split):
                split.append(c)
            return None
        return c

    n = len(needle)
    first = -1
    i = haystack.find(needle)
    while i >= 0:
        if budget is not None:
            budget.check()
        c = whole(i, i + n)
        if c is not None:
            if first < 0:
                first = i
            found.append(c)
            i = haystack.find(needle, i + n)
        else:
            i = haystack.find(needle, i + 1)
    overlap: Candidate | None = None
    if len(found) == 1:
        # an overlapping place starts before first + n, so it ends before this:
        stop = first + 2 * n - 1
        j = haystack.find(needle, first + 1, stop)
        while 0 <= j < first + n:
            overlap = whole(j, j + n)
            if overlap is not None:
                break
            j = haystack.find(needle, j + 1, stop)
    return Places(found, overlap, split)


def _exact(view: str, needle: str) -> Places:
    return _search(view, needle, lambda s, e: Candidate(s, e), source=view)


Verify = Callable[[int, int], bool]


def _char_tier(
    hay: Normalized,
    needle: Normalized,
    strict_end: bool,
    verify: Verify | None = None,
    budget: Budget | None = None,
    *,
    source: str,
) -> Places:
    h = hay.text

    def check(s: int, e: int) -> Candidate | None:
        if strict_end and e < len(h) and h[e] != "\n":
            return None  # the model's line ended with whitespace: it meant a line end
        s0 = hay.to_source(s, "start")
        # a line end meant: the line's own trailing blanks are part of what is replaced
        e0 = hay.to_source(e, "start" if strict_end else "end")
        if s0 is None or e0 is None or e0 < s0:
            return None
        if verify is not None and not verify(s0, e0):
            return None
        return Candidate(s0, e0)

    return _search(h, needle.text, check, budget, source=source)


def _verifier(view: str, old: str, tier: Tier) -> Verify | None:
    """What a place found at ``tier`` must also satisfy: references differ in one
    direction only (``entities`` and after), and blanks inside lines differ as tabs of
    one width would (``tabs`` and after)."""
    at = TIERS.index(tier)
    if at < TIERS.index(ENTITIES):
        return None
    tabs = at >= TIERS.index(TABS)

    def verify(s0: int, e0: int) -> bool:
        if slips.entities_one_way(view[s0:e0], old) is None:
            return False
        if tabs:
            ls = view.rfind("\n", 0, s0) + 1
            if slips.tab_reading(view[ls:e0], s0 - ls, old) is None:
                return False
        return True

    return verify


def _indent_tier(
    view: str, hay: Normalized, needle: Normalized, old: str, budget: Budget | None = None
) -> Places:
    n_lines = needle.text.split("\n")
    first_indented = bool(_LEADING_RE.match(n_lines[0]))
    if len(n_lines) == 1 and not first_indented:
        return Places([])
    dh = hay.then(_dedent_stage)
    dn = needle.then(_dedent_stage)
    if not dn.text.strip():
        return Places([])
    if dn.text == needle.text and dh.text == hay.text:
        return Places([])
    d = dh.text
    model_lines = old.split("\n")
    checks = _verifier(view, old, INDENTATION)
    assert checks is not None
    verify: Verify = checks

    def check(s: int, e: int) -> Candidate | None:
        if first_indented and s > 0 and d[s - 1] != "\n":
            return None
        if len(n_lines) == 1 and e < len(d) and d[e] != "\n":
            return None  # a lone line must be a whole line
        s0 = dh.to_source(s, "start")
        e0 = dh.to_source(e, "end")
        if s0 is None or e0 is None or e0 < s0:
            return None
        line_start = view.rfind("\n", 0, s0) + 1
        if first_indented:
            s0 = line_start
        line_end = view.find("\n", e0)
        file_lines = view[line_start : len(view) if line_end < 0 else line_end].split("\n")
        pairs: list[tuple[str, str]] = []
        if not first_indented and model_lines[0].strip(" \t" + ODD_SPACES):
            # The model's first line starts where the match does; when only indentation
            # stands before it in the file, the model left it out as it copied, and that
            # is the indentation of its unindented line: it counts like any other line's
            # (else the other lines alone may fit some other tab width with no shift).
            before = view[line_start:s0]
            if before and len(_lead_of(before)) == len(before):
                pairs.append(("", before))
        old_in_file: list[str] = []
        indents: list[str | None] = []
        for i, model_line in enumerate(model_lines):
            file_line = file_lines[i] if i < len(file_lines) else ""
            m = _INDENT_RE.match(model_line)
            f = _INDENT_RE.match(file_line)
            mi = model_line[: m.end() if m else 0]
            fi = file_line[: f.end() if f else 0]
            content = model_line[len(mi) :]
            if i == 0 and not first_indented:
                old_in_file.append(model_line)
                indents.append(None)
                continue
            if i == len(model_lines) - 1 and not content and e0 > 0 and view[e0 - 1] == "\n":
                old_in_file.append("")  # the match ends at a line start
                indents.append(None)
                continue
            if content.strip(" \t" + ODD_SPACES):
                pairs.append((mi, fi))
            old_in_file.append(fi + content)
            indents.append(fi)
        how = uniform_change(pairs)
        if how is None or not verify(s0, e0):
            return None
        return Candidate(
            s0, e0, "\n".join(old_in_file), tuple(indents), how, first_line=first_indented
        )

    return _search(d, dn.text, check, budget, source=view)


_TRAILING_INNER_RE = re.compile(r"[ \t]+(?=\n)")


def _merge(a: Places, b: Places) -> Places:
    """The union of two searches' places: non-overlapping ones, and one that overlaps."""
    seen = {(c.start, c.end) for c in a.found}
    every = sorted(
        [*a.found, *(c for c in b.found if (c.start, c.end) not in seen)], key=lambda c: c.start
    )
    out: list[Candidate] = []
    overlap = a.overlap
    for c in every:
        if out and c.start < out[-1].end:
            overlap = overlap or c
            continue
        out.append(c)
    split_seen = {(c.start, c.end) for c in a.split}
    split = [*a.split, *(c for c in b.split if (c.start, c.end) not in split_seen)]
    return Places(out, overlap, split)


def _decided(tier: Tier, places: Places, old: str, new_trimmed: bool = False) -> Found | None:
    """What ``tier`` decides: the places it found, or, when it found only places that
    split a character, those (the edit is then refused); None when it found nothing."""
    if not places.found and not places.split:
        return None
    split = tuple(places.split) if not places.found else ()
    return Found(tier, tuple(places.found), places.overlap, old, new_trimmed, split=split)


def exact_places(view: str, old: str) -> Found | None:
    """Where ``old`` occurs in ``view`` exactly, as :func:`locate`'s first tier finds it."""
    return _decided(EXACT, _exact(view, old), old)


def locate(view: str, old: str, budget: Budget | None = None) -> Found | None:
    """The first tier that finds ``old`` in ``view``, with every place it found.

    Raises :class:`~steadyhand.text.budget.OutOfTime` when the search for a near-miss
    runs past ``budget`` (by default :data:`SEARCH_SECONDS`); the exact search always
    completes."""
    exact = exact_places(view, old)
    if exact is not None:
        return exact
    if budget is None:
        budget = Budget(SEARCH_SECONDS)
    old_lf = to_view(old)
    return _tiers(view, old_lf, old_lf != old, budget) or _reread(view, old_lf, budget)


def _tiers(view: str, old_lf: str, had_cr: bool, budget: Budget) -> Found | None:
    """The tiers after ``exact`` (``old_lf``: ``old_string`` with LF line breaks)."""
    if had_cr:
        got = _decided(LINE_ENDINGS, _exact(view, old_lf), old_lf)
        if got is not None:
            return got
    hay = Normalized(view)
    needle = Normalized(old_lf)
    # From the trailing-whitespace tier on, blanks ending the needle are trailing only if
    # the match ends a line; else they are the file's own spaces mid-line, matched as
    # they are (``kept``: the needle with them).
    ends_blank = False
    kept: Normalized | None = None
    for tier in _CHAR_TIERS:
        assert tier.stage is not None
        budget.check()
        h2, n2 = hay.then(tier.stage), needle.then(tier.stage)
        changed = h2.text != hay.text or n2.text != needle.text
        if tier is TRAILING_WHITESPACE and needle.text.endswith((" ", "\t")):
            ends_blank = True
            kept = Normalized(_TRAILING_INNER_RE.sub("", needle.text))
        elif kept is not None:
            kept = kept.then(tier.stage)
        hay, needle = h2, n2
        if not changed:
            continue
        verify = _verifier(view, old_lf, tier)
        places = _char_tier(hay, needle, ends_blank, verify, budget, source=view)
        if kept is not None:
            more = _char_tier(hay, kept, False, verify, budget, source=view)
            places = _merge(places, Places(more.found, None, more.split))
        got = _decided(tier, places, old_lf)
        if got is not None:
            return got
    budget.check()
    # Indentation: a whitespace-only last line is the next line's indentation, not text.
    trimmed = False
    lines = old_lf.split("\n")
    if len(lines) > 1 and lines[-1] and not lines[-1].strip(" \t" + ODD_SPACES):
        old_lf = "\n".join(lines[:-1]) + "\n"
        needle = normalize(old_lf, _stages_upto(_CHAR_TIERS[-1]))
        trimmed = True
    return _decided(INDENTATION, _indent_tier(view, hay, needle, old_lf, budget), old_lf, trimmed)


def _all_tiers(view: str, old_lf: str, budget: Budget) -> Found | None:
    got = _decided(EXACT, _exact(view, old_lf), old_lf)
    if got is not None:
        return got
    return _tiers(view, old_lf, False, budget) or _final_newline(view, old_lf, budget)


def _final_newline(view: str, old_lf: str, budget: Budget) -> Found | None:
    """``old_lf`` ends with a line break where the file's last line has none: every tier
    again on the text with that line break added, taking only places that end there."""
    if not old_lf.endswith("\n") or not view or view.endswith("\n"):
        return None
    padded = view + "\n"
    got = _decided(EXACT, _exact(padded, old_lf), old_lf)
    if got is None:
        got = _tiers(padded, old_lf, False, budget)
    if got is None:
        return None
    end = len(padded)
    if any(c.end != end for c in got.candidates) or (got.overlap and got.overlap.end != end):
        return None
    if got.split:
        split = tuple(c for c in got.split if c.end == end)
        if not split:
            return None
        got = dataclasses.replace(got, split=split)
    return dataclasses.replace(got, readings=(FINAL_NEWLINE, *got.readings))


def _reread(view: str, old_lf: str, budget: Budget) -> Found | None:
    """The re-readings of ``old_lf``, each tried with every tier: a line break at the end
    of the file, the read output's line-number prefixes, one level of escaping."""
    found = _final_newline(view, old_lf, budget)
    if found is not None:
        return found
    stripped = slips.strip_line_numbers(old_lf)
    if stripped is not None:
        found = _all_tiers(view, stripped.text, budget)
        if found is not None:
            return dataclasses.replace(
                found,
                readings=(LINE_NUMBERS, *found.readings),
                padded=stripped.padded,
                numbers=(stripped.first, stripped.last),
            )
    if "\n" not in old_lf:
        decoded = slips.unescape(old_lf)
        if decoded is not None and decoded != old_lf:
            found = _all_tiers(view, to_view(decoded), budget)
            if found is not None:
                return dataclasses.replace(found, readings=(ESCAPES, *found.readings))
    return None


# -- replacing -----------------------------------------------------------------------


#: What :func:`carry_over` aligns as a whole: a quoted string (its quotes pair up), a
#: word (with the combining accents on its letters), a run of whitespace, or one other
#: character. A single quote opens a string only where it is no apostrophe (no letter
#: before the opening one or after the closing one).
_MARKS = "\u0300-\u036f\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f\u3099\u309a"
_TOKEN_RE = re.compile(f"""\"[^"\n]*"|(?<!\\w)'[^'\n]*'(?!\\w)|[\\w{_MARKS}]+|\\s+|.""", re.DOTALL)


def _token_cut(norm: str, pos: int, side: Side) -> int:
    """``pos`` moved to where a token of ``norm`` (a text with straight quotes) starts,
    back for a ``start``, on for an ``end``; a position in a run of whitespace stays.
    Only the line of ``pos`` is read: no token but whitespace holds a line break, so
    every line starts a token or lies in whitespace."""
    if pos <= 0 or pos >= len(norm):
        return pos
    line_start = norm.rfind("\n", 0, pos) + 1
    line_end = norm.find("\n", pos)
    for m in _TOKEN_RE.finditer(norm, line_start, len(norm) if line_end < 0 else line_end + 1):
        a, b = m.span()
        if a <= pos < b:
            if a == pos or m.group().isspace():
                return pos
            return a if side == "start" else b
    return pos


def _tokens(text: str, lo: int = 0, hi: int | None = None) -> list[tuple[int, int]]:
    """The spans of the tokens of ``text[lo:hi]`` (quotes read straight, so curly ones
    pair too; what stands before ``lo`` still tells an apostrophe from a quote)."""
    norm = normalize_quotes(text)
    return [m.span() for m in _TOKEN_RE.finditer(norm, lo, len(text) if hi is None else hi)]


def _token_opcodes(ow: list[str], nw: list[str]) -> list[tuple[str, int, int, int, int]]:
    """Opcodes turning the tokens ``ow`` into ``nw``, bounded in cost: what lies
    between the common head and tail goes to difflib's matcher when small enough, else
    is aligned line by line first (tokens holding a line break split the lines) and
    then token by token within each run of replaced lines that is small enough."""
    coarse = opcodes(ow, nw, LINE_CELLS)
    if all(op == "equal" or (i2 - i1) * (j2 - j1) <= LINE_CELLS for op, i1, i2, j1, j2 in coarse):
        return coarse
    out: list[tuple[str, int, int, int, int]] = []
    for op, i1, i2, j1, j2 in coarse:
        if op != "replace":
            out.append((op, i1, i2, j1, j2))
            continue
        a_cuts = _line_cuts(ow, i1, i2)
        b_cuts = _line_cuts(nw, j1, j2)
        a_lines = ["".join(ow[x:y]) for x, y in a_cuts]
        b_lines = ["".join(nw[x:y]) for x, y in b_cuts]
        for op2, x1, x2, y1, y2 in opcodes(a_lines, b_lines, LINE_CELLS):
            ta1 = a_cuts[x1][0] if x1 < len(a_cuts) else i2
            ta2 = a_cuts[x2 - 1][1] if x2 > x1 else ta1
            tb1 = b_cuts[y1][0] if y1 < len(b_cuts) else j2
            tb2 = b_cuts[y2 - 1][1] if y2 > y1 else tb1
            if op2 == "replace" and (ta2 - ta1) * (tb2 - tb1) <= LINE_CELLS:
                for op3, p1, p2, q1, q2 in opcodes(ow[ta1:ta2], nw[tb1:tb2], LINE_CELLS):
                    out.append((op3, ta1 + p1, ta1 + p2, tb1 + q1, tb1 + q2))
            else:
                out.append((op2, ta1, ta2, tb1, tb2))
    return out


def _line_cuts(tokens: list[str], lo: int, hi: int) -> list[tuple[int, int]]:
    """``tokens[lo:hi]`` cut into lines: each piece ends after a token with a line break."""
    cuts: list[tuple[int, int]] = []
    start = lo
    for k in range(lo, hi):
        if "\n" in tokens[k]:
            cuts.append((start, k + 1))
            start = k + 1
    if start < hi or not cuts:
        cuts.append((start, hi))
    return cuts


#: The finer tokens a replaced stretch is aligned on again: a word, a run of whitespace,
#: or one other character (a quote on its own).
_FINE_RE = re.compile(f"[\\w{_MARKS}]+|\\s+|.", re.DOTALL)
_QUOTE_CHARS = frozenset("\"'")
#: What may stand right before an opening quote (besides the start and whitespace).
_BEFORE_OPENING = frozenset("([{<=,:;")

Opcodes = list[tuple[str, int, int, int, int]]


def _fine_tokens(text: str, lo: int, hi: int) -> list[tuple[int, int]]:
    return [m.span() for m in _FINE_RE.finditer(normalize_quotes(text), lo, hi)]


def _with_roles(text: str, spans: list[tuple[int, int]], keys: list[str], lo: int, hi: int) -> None:
    """``keys[lo:hi]`` (of the tokens ``spans`` of ``text``) with each quote compared
    with its role: closing where a word or a closing mark stands right before it,
    opening elsewhere, so the closing quote of one string is never paired with the
    opening quote of another."""
    for k in range(lo, hi):
        a = spans[k][0]
        q = normalize_quotes(keys[k])
        if q in _QUOTE_CHARS:
            before = text[a - 1] if a else " "
            opening = before.isspace() or before in _BEFORE_OPENING
            keys[k] = q + ("(" if opening else ")")


def _align_tokens(
    raw: Opcodes,
    old: str,
    new: str,
    ot: list[tuple[int, int]],
    nt: list[tuple[int, int]],
    ends: tuple[int, int],
    *,
    fine: bool,
) -> None:
    """Append to ``raw`` the opcodes turning the tokens ``ot`` of ``old`` into the
    tokens ``nt`` of ``new`` (``ends``: where each stretch ends, for empty ones)."""
    ow = [old[a:b] for a, b in ot]
    nw = [new[a:b] for a, b in nt]
    if fine:
        # What both share at the start and at the end pairs up by place; only the
        # quotes between are compared by role.
        pre, suf = common_ends(ow, nw)
        _with_roles(old, ot, ow, pre, len(ow) - suf)
        _with_roles(new, nt, nw, pre, len(nw) - suf)

    def span(ts: list[tuple[int, int]], k1: int, k2: int, size: int) -> tuple[int, int]:
        start = ts[k1][0] if k1 < len(ts) else size
        return start, (ts[k2 - 1][1] if k2 > k1 else start)

    for op, i1, i2, j1, j2 in _token_opcodes(ow, nw):
        o1, o2 = span(ot, i1, i2, ends[0])
        n1, n2 = span(nt, j1, j2, ends[1])
        if op == "replace" and i2 - i1 == j2 - j1:
            for k in range(i2 - i1):
                (a1, a2), (b1, b2) = ot[i1 + k], nt[j1 + k]
                before, after = old[a1:a2], new[b1:b2]
                if fine and normalize_quotes(before) in _QUOTE_CHARS:
                    raw.append(("replace", a1, a2, b1, b2))  # a quote in another role
                elif not fine and normalize_quotes(before[:1]) in _QUOTE_CHARS:
                    # a quoted string changed inside: its words are aligned one by one
                    _align_tokens(
                        raw,
                        old,
                        new,
                        _fine_tokens(old, a1, a2),
                        _fine_tokens(new, b1, b2),
                        (a2, b2),
                        fine=True,
                    )
                else:
                    for op2, x1, x2, y1, y2 in opcodes(before, after, CHAR_CELLS):
                        raw.append((op2, a1 + x1, a1 + x2, b1 + y1, b1 + y2))
        elif op == "replace" and not fine:
            # Tokens not replaced one for one (a string grew into an expression): the
            # words the model kept among them are aligned again, so they stay the file's.
            _align_tokens(
                raw,
                old,
                new,
                _fine_tokens(old, o1, o2),
                _fine_tokens(new, n1, n2),
                (o2, n2),
                fine=True,
            )
        else:
            raw.append((op, o1, o2, n1, n2))


def _aligned(old: str, new: str) -> Opcodes:
    """Opcodes (as :meth:`difflib.SequenceMatcher.get_opcodes`, in characters) that turn
    ``old`` into ``new``, aligned on whole tokens: an unchanged quoted string is matched
    with itself, never its closing quote with the opening one of a string inserted next
    to it. Tokens replaced one for one are aligned character by character inside; a
    quoted string changed inside, and a stretch of tokens not replaced one for one, are
    aligned again on words, whitespace and single characters (quotes by their role,
    opening or closing), so that what the model kept in them is found too. Neighbouring
    opcodes of one kind are merged."""
    # What the two share at the start and at the end, cut back to token boundaries of
    # ``old`` (never inside one of its words or quoted strings; a run of whitespace may
    # be cut), is equal as it stands: the model changed only what lies between,
    # however the quotes it wrote there pair up with those around them.
    head, tail = common_ends(old, new)
    norm = normalize_quotes(old)
    head = _token_cut(norm, head, "start")
    o_end = _token_cut(norm, len(old) - tail, "end")
    n_end = len(new) - (len(old) - o_end)
    raw: Opcodes = [("equal", 0, head, 0, head)]
    _align_tokens(
        raw,
        old,
        new,
        _tokens(old, head, o_end),
        _tokens(new, head, n_end),
        (o_end, n_end),
        fine=False,
    )
    raw.append(("equal", o_end, len(old), n_end, len(new)))
    out: Opcodes = []
    for tag, i1, i2, j1, j2 in raw:
        if i1 == i2 and j1 == j2:
            continue
        kind = "equal" if tag == "equal" else "replace"
        if out and (out[-1][0] == "equal") == (kind == "equal"):
            prev = out[-1]
            out[-1] = (prev[0] if kind == "equal" else "replace", prev[1], i2, prev[3], j2)
        else:
            out.append((tag, i1, i2, j1, j2))
    return out


def _as_given(text: str) -> str:
    return text


def carry_over(
    actual: str,
    old: str,
    new: str,
    stages: Sequence[Stage] = (_quotes_stage,),
    write: Callable[[str], str] = _as_given,
) -> str:
    """The replacement for ``actual`` (the file's text that ``old`` matched loosely).

    Stretches of ``new`` that are unchanged from ``old`` take the file's own characters
    (so curly quotes in untouched prose stay curly, trailing spaces stay, an NFD word
    stays NFD); text the model newly wrote is kept as given, passed through ``write``
    (which carries a convention of the file the model's text does not follow, such as
    its character references). ``old`` and ``actual`` must be equal after ``stages``;
    if they are not, ``new`` is used as given.
    """
    if actual == old:
        return new
    na = normalize(actual, stages)
    no = normalize(old, stages)
    if na.text != no.text:
        return write(new)
    out: list[str] = []
    for op, i1, i2, j1, j2 in _aligned(old, new):
        if op == "equal":
            n1 = no.to_normal(i1, "start")
            n2 = no.to_normal(i2, "end")
            a1 = na.to_source(n1, "start") if n1 is not None else None
            a2 = na.to_source(n2, "end") if n2 is not None else None
            if a1 is None or a2 is None or a2 < a1:
                out.append(write(new[j1:j2]))
                continue
            out.append(actual[a1:a2])
            # What the normalization dropped at the stretch's end (trailing blanks) is
            # not trailing in ``new`` when the model's line goes on after it: it is the
            # model's own text there ("a" + " " + "+ b"), kept as written.
            i_kept = no.to_source(n2, "end") if n2 is not None else None
            if i_kept is not None and i_kept < i2 and j2 < len(new) and new[j2] != "\n":
                out.append(new[j2 - (i2 - i_kept) : j2])
        elif op in ("replace", "insert"):
            out.append(write(new[j1:j2]))
    return "".join(out)


def strip_trailing_whitespace(old: str, new: str, *, at_line_end: bool) -> str:
    """Drop trailing spaces/tabs the model added on lines of ``new``.

    A line that stands unchanged in ``old`` keeps its whitespace (it is the file's own),
    and so do trailing blanks the model left as they were on a line it changed (they
    align with the same blanks of ``old``); the last line is touched only when the
    replaced text ends at a line end.
    """
    if " " not in new and "\t" not in new:
        return new
    kept = set(old.split("\n"))
    parts = new.split("\n")
    last = len(parts) - 1
    unchanged: list[tuple[int, int]] | None = None
    pos = 0
    for i, part in enumerate(parts):
        start = pos
        pos += len(part) + 1
        if part in kept or (i == last and not at_line_end):
            continue
        body = part.rstrip(" \t")
        if len(body) == len(part):
            continue
        if unchanged is None:
            unchanged = [(j1, j2) for op, _, _, j1, j2 in _aligned(old, new) if op == "equal"]
        a, b = start + len(body), start + len(part)
        if not any(j1 <= a and b <= j2 for j1, j2 in unchanged):
            parts[i] = body
    return "\n".join(parts)


def tolerances_used(tier: Tier, actual: str, old: str, *, had_cr: bool) -> tuple[str, ...]:
    """What a match actually tolerated, as sentences for the model (most tiers below
    ``tier`` are tried cumulatively, so a match may need several)."""
    notes: list[str] = []
    if had_cr:
        notes.append(LINE_ENDINGS.tolerated)
    if tier in (EXACT, LINE_ENDINGS):
        return tuple(notes)
    tiers = [t for t in _CHAR_TIERS if TIERS.index(t) <= TIERS.index(tier)]
    for t in tiers:
        others = [x.stage for x in tiers if x is not t and x.stage is not None]
        if normalize(actual, others).text != normalize(old, others).text:
            notes.append(t.tolerated)
    if tier is INDENTATION:
        notes.append(INDENTATION.tolerated)
    if not notes:
        notes.append(tier.tolerated)
    return tuple(notes)


@dataclass(frozen=True, slots=True)
class EditPlan:
    tier: Tier
    splices: tuple[Splice, ...]
    #: What the match tolerated, one sentence each (empty for exact matches).
    tolerated: tuple[str, ...] = ()

    @property
    def replacements(self) -> int:
        return len(self.splices)

    @property
    def note(self) -> str:
        """The sentence telling the model what was tolerated ("" when nothing was)."""
        if not self.tolerated:
            return ""
        return f"Matched with {self.tier.name} tolerance: {'; '.join(self.tolerated)}."


def line_numbers(view: str, spans: Sequence[tuple[int, int]]) -> list[int]:
    out: list[int] = []
    line = 1
    pos = 0
    for start, _ in spans:
        line += view.count("\n", pos, start)
        pos = start
        out.append(line)
    return out


def _numbers(lines: list[int], most: int = 12) -> str:
    shown = ", ".join(str(n) for n in lines[:most])
    return shown + (f" and {len(lines) - most} more" if len(lines) > most else "")


def _no_match(view: str, old: str, path: str) -> ToolError:
    from steadyhand.text.nearmiss import (
        Unsearched,
        closest_region,
        no_match_message,
        unsearched_message,
    )

    # Compared as the model most likely meant it: without the read output's line
    # numbers, or unescaped, when it reads that way (and saying so).
    old_lf = to_view(old)
    first: list[str] = []
    stripped = slips.strip_line_numbers(old_lf)
    decoded = slips.unescape(old_lf) if "\n" not in old_lf else None
    if stripped is not None:
        old = stripped.text
        first.append(
            "old_string carries the line-number prefixes of the read output "
            "(number and tab), which are not in the file; leave them out"
        )
    elif decoded is not None and decoded != old_lf:
        old = decoded
        first.append(
            "old_string is escaped once too often (\\n where the file has a line break, "
            '\\" where it has a quote); send the text itself'
        )
    near = closest_region(view, old)
    if isinstance(near, Unsearched):
        return ToolError(ErrorCode.NO_MATCH, unsearched_message(path, near))
    if near is None:
        return ToolError(
            ErrorCode.NO_MATCH,
            f"old_string was not found in {path}. Read the lines you want to change again "
            "and copy them exactly (whitespace and indentation included) into old_string.",
        )
    if first:
        near = dataclasses.replace(near, differences=(*first, *near.differences))
    return ToolError(
        ErrorCode.NO_MATCH,
        no_match_message(path, near),
        closest_lines=[near.start_line, near.end_line],
        differences=list(near.differences),
    )


def _take_final_blanks(view: str, c: Candidate, old: str, path: str) -> Candidate:
    """``c`` taking in the blanks ``old`` ends with, where the match stopped before the
    file's own blanks in the middle of a line (a tier that dropped them): the model's
    last blanks are those of the file, which the replacement then covers, rather than
    written again before them. Blanks the file has otherwise there (a tab for the
    model's space) have no single reading: refused."""
    tail = len(old) - len(old.rstrip(" \t"))
    end = c.end
    if (
        not tail
        or end >= len(view)
        or view[end] not in " \t"
        or view[c.start : end].endswith((" ", "\t"))
    ):
        return c
    line_end = view.find("\n", end)
    rest = view[end : len(view) if line_end < 0 else line_end]
    if not rest.strip(" \t"):
        return c  # the file's blanks there end the line: trailing, as the tiers read them
    if view[end : end + tail] == old[-tail:]:
        return dataclasses.replace(c, end=end + tail)
    raise ToolError(
        ErrorCode.NO_MATCH,
        f"old_string ends with blanks that stand mid-line in {path} (line "
        f"{line_numbers(view, [(end, end)])[0]}), where the file has other blanks, so where "
        "the replacement ends is not certain; nothing was changed. End old_string with the "
        "next visible character, or without the blanks.",
    )


def _splits_a_character(view: str, places: Sequence[Candidate], path: str) -> ToolError:
    """The refusal of an edit whose only places start or end inside a character."""
    c = places[0]
    at = c.end if graphemes.inside(view, c.end) else c.start
    a, b = graphemes.cluster_around(view, at)
    side = "ends" if at == c.end else "starts"
    lines = sorted(set(line_numbers(view, [(p.start, p.end) for p in places])))
    return ToolError(
        ErrorCode.NO_MATCH,
        f"old_string was not found in {path} as whole characters: it matches only where "
        f"it {side} inside a character (line{'s' if len(lines) != 1 else ''} "
        f"{_numbers(lines)}: {graphemes.describe(view[a:b])}, a letter with the accent, "
        "mark or joined character that belongs to it), so the edit would split that "
        "character, and nothing was changed. Include the whole character in old_string "
        "(and write it whole in new_string), or end old_string before it.",
        **list_fields("lines", lines),
    )


def _out_of_time(path: str) -> ToolError:
    return ToolError(
        ErrorCode.NO_MATCH,
        f"old_string was not found in {path} as written, and the file is too large to "
        "search for a near-miss in the time a search may take. Read the lines you want to "
        "change and copy them into old_string exactly (whitespace and indentation "
        "included), and retry.",
    )


def _reread_new(found: Found, new_lf: str, view: str, path: str) -> str:
    """``new_string`` read the way the match read ``old_string`` (line numbers taken
    off, one level of escaping undone); raises :class:`ToolError` when it cannot be."""
    lines = line_numbers(view, found.spans)
    where = f"line{'s' if len(lines) != 1 else ''} {_numbers(lines)}"
    for reading in found.readings:
        if reading is LINE_NUMBERS:
            for c in found.candidates:
                if slips.starts_like_a_prefix(
                    view[c.start : c.end].split("\n")
                ) and not slips.every_line_prefixed(new_lf, found.padded, found.numbers):
                    raise ToolError(
                        ErrorCode.NO_MATCH,
                        f"old_string was not found in {path} as written; without the read "
                        f"output's line-number prefixes it matches {where}, but the file's "
                        "own lines there start with numbers too, so which numbers in "
                        "new_string (whose lines do not all carry a prefix) are prefixes is "
                        "not certain, and nothing was changed. Send old_string and "
                        "new_string without the line-number prefixes.",
                        **list_fields("lines", lines),
                    )
            new_lf = slips.strip_new_line_numbers(new_lf, found.padded, found.numbers)
        elif reading is ESCAPES and "\\" in new_lf:
            decoded = slips.unescape(new_lf)
            if decoded is None or "\n" in new_lf:
                raise ToolError(
                    ErrorCode.NO_MATCH,
                    f"old_string was not found in {path} as written; read unescaped (\\n as "
                    f'a line break, \\" as a quote) it matches {where}, but new_string does '
                    "not read the same way, so what to write is not certain, and nothing "
                    "was changed. Send old_string and new_string with real line breaks and "
                    "quotes instead of escapes.",
                    **list_fields("lines", lines),
                )
            new_lf = to_view(decoded)
    return new_lf


def plan_edit(
    view: str,
    old: str,
    new: str,
    *,
    replace_all: bool = False,
    markdown: bool = False,
    path: str = "the file",
    expected_replacements: int | None = None,
    found: Found | None = None,
) -> EditPlan:
    """Decide what an edit changes, or raise :class:`ToolError` saying why not.

    ``expected_replacements`` N: exactly N places must match; all of them are replaced.
    ``found``: what :func:`locate` (or :func:`exact_places`) found, when already known.
    """
    if old == new:
        raise ToolError(
            ErrorCode.NO_CHANGE,
            "old_string and new_string are identical, so there is nothing to change. "
            "Send the text you want in new_string.",
        )
    if found is None:
        try:
            found = locate(view, old)
        except OutOfTime:
            raise _out_of_time(path) from None
    if found is None:
        raise _no_match(view, old, path)
    if not found.candidates:
        raise _splits_a_character(view + "\n" if found.phantom else view, found.split, path)
    want_all = replace_all or (expected_replacements is not None and expected_replacements > 1)
    cands = found.candidates
    # Places that overlap cannot all be replaced, and neither one can be meant alone: with
    # or without replace_all, only more context can say which.
    count = len(cands) + (1 if found.overlap is not None else 0)
    how = "" if found.matched is EXACT else f" (with {found.matched.name} tolerance)"
    if count > 1 and (not want_all or found.overlap is not None):
        places = sorted(
            [*cands, *([found.overlap] if found.overlap else [])], key=lambda c: c.start
        )
        lines = sorted(set(line_numbers(view, [(c.start, c.end) for c in places])))
        where = f"line{'s' if len(lines) != 1 else ''} {_numbers(lines)}"
        if found.overlap is not None:
            what = (
                f"old_string matches {count} overlapping places in {path}{how} ({where}), "
                "so replacing one, or all of them, cannot be told apart. Add a few "
                "surrounding characters or lines to old_string so it matches exactly one place."
            )
        else:
            what = (
                f"old_string matches {count} places in {path}{how} ({where}). Add a few "
                "surrounding lines to old_string so it matches exactly one place, or set "
                "replace_all to true to change all of them."
            )
        raise ToolError(ErrorCode.AMBIGUOUS, what, matches=count, **list_fields("lines", lines))
    if expected_replacements is not None and len(cands) != expected_replacements:
        lines = line_numbers(view, found.spans)
        n = len(cands)
        raise ToolError(
            ErrorCode.COUNT_MISMATCH,
            f"old_string matches {n} place{'s' if n != 1 else ''} in {path}{how} "
            f"(line{'s' if n != 1 else ''} {_numbers(lines)}), but expected_replacements is "
            f"{expected_replacements}, so nothing was changed. Adjust old_string or "
            "expected_replacements.",
            matches=n,
            **list_fields("lines", lines),
            expected=expected_replacements,
        )
    new_lf = _reread_new(found, to_view(new), view, path)
    if found.new_trimmed:
        parts = new_lf.split("\n")
        if len(parts) > 1 and not parts[-1].strip(" \t" + ODD_SPACES):
            new_lf = "\n".join(parts[:-1]) + "\n"
    # final_newline: the places are in the text with the missing line break added
    work = view + "\n" if found.phantom else view
    exact = found.tier is EXACT or found.tier is LINE_ENDINGS
    char_stages = () if exact else _stages_upto(found.tier)
    entities = TIERS.index(found.tier) >= TIERS.index(ENTITIES)
    splices: list[Splice] = []
    tolerated: tuple[str, ...] = ()
    for c in cands:
        if not exact:
            c = _take_final_blanks(work, c, found.old, path)
            if graphemes.splits(work, c.start, c.end):
                raise _splits_a_character(work, (c,), path)
        at_line_end = c.end == len(work) or work[c.end] == "\n"
        text = (
            new_lf
            if markdown
            else strip_trailing_whitespace(found.old, new_lf, at_line_end=at_line_end)
        )
        actual = work[c.start : c.end]
        model_old = found.old
        if c.reindent is not None and c.old_in_file is not None:
            text = reindent_text(
                text, found.old, c.file_indents, c.reindent, first_line=c.first_line
            )
            model_old = c.old_in_file
        write = _as_given
        way = slips.entities_one_way(actual, model_old) if entities else ""
        if way == "model":
            # The model wrote references for the file's characters: it wrote its new
            # text the same way.
            text = slips.decode_entities(text)
            model_old = slips.decode_entities(model_old)
        elif way == "file":
            # The model wrote characters for the file's references: what it newly
            # writes is escaped the way the file escapes them there.
            write = functools.partial(slips.escape_like, table=slips.file_escapes(actual))
        if not exact:
            text = carry_over(actual, model_old, text, char_stages, write)
        if not tolerated:
            tolerated = tuple(r.tolerated for r in found.readings) + tolerances_used(
                found.tier, actual, model_old, had_cr=old != to_view(old)
            )
        end = c.end
        if end > len(view):  # the added line break: none is written there
            end = len(view)
            text = text[:-1] if text.endswith("\n") else text
        splices.append(Splice(c.start, end, text))
    matched = found.matched
    return EditPlan(matched, tuple(splices), tolerated if matched is not EXACT else ())

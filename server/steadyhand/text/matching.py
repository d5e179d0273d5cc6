"""Finding what the model meant by ``old_string``, and building the replacement.

Everything here is pure: text in, decisions out. Offsets are into the *view* text
(LF line endings, see :mod:`steadyhand.text.lines`); the edit tool maps them to the raw
file text afterwards.

Matching goes in tiers, each tolerating everything the tiers before it tolerate plus one
more kind of near-miss (see docs/matching.md):

1. ``exact``;
2. ``line_endings``: CRLF or CR in ``old_string`` read as line breaks;
3. ``quotes``: curly and straight quotes are equal;
4. ``punctuation``: Unicode dashes/minus, ``…`` and odd spaces equal their ASCII forms;
5. ``trailing_whitespace``: spaces and tabs at line ends are ignored;
6. ``indentation``: a block whose indentation differs by one uniform change.

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
import difflib
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal

from steadyhand.protocol.errors import ErrorCode, ToolError
from steadyhand.protocol.lists import list_fields
from steadyhand.text.chars import DASHES, ELLIPSIS, INVISIBLES, ODD_SPACES, normalize_quotes
from steadyhand.text.lines import to_view
from steadyhand.text.splices import Splice

Side = Literal["start", "end"]

MARKDOWN_SUFFIXES = frozenset({".md", ".markdown", ".mdx", ".mdown", ".mkd"})

_PUNCT_TABLE = str.maketrans({**dict.fromkeys(DASHES, "-"), **dict.fromkeys(ODD_SPACES, " ")})
_PUNCT_RE = re.compile(f"[{ELLIPSIS}{INVISIBLES}]")
_TRAILING_RE = re.compile(r"[ \t]+(?=\n)|[ \t]+\Z")
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
    parts: list[str] = []
    s0s: list[int] = []
    s1s: list[int] = []
    n0s: list[int] = []
    n1s: list[int] = []
    last = 0
    npos = 0
    for m in pattern.finditer(text):
        found = m.group()
        r = repl(found)
        if r == found:
            continue
        a, b = m.span()
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
    text = text.translate(_PUNCT_TABLE)
    return substitute(text, _PUNCT_RE, lambda s: "..." if s == ELLIPSIS else "")


def _trailing_stage(text: str) -> tuple[str, OffsetMap]:
    return substitute(text, _TRAILING_RE, lambda s: "")


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
INDENTATION = Tier(
    "indentation",
    "the block's indentation differed from the file's by one uniform change, so new_string "
    "was re-indented the same way",
)

#: The tiers, tried in order.
TIERS: tuple[Tier, ...] = (
    EXACT,
    LINE_ENDINGS,
    QUOTES,
    PUNCTUATION,
    TRAILING_WHITESPACE,
    INDENTATION,
)
_CHAR_TIERS: tuple[Tier, ...] = (QUOTES, PUNCTUATION, TRAILING_WHITESPACE)


def _stages_upto(tier: Tier) -> tuple[Stage, ...]:
    out: list[Stage] = []
    for t in _CHAR_TIERS:
        if t.stage is not None and TIERS.index(t) <= TIERS.index(tier):
            out.append(t.stage)
    return tuple(out)


# -- indentation ---------------------------------------------------------------------


def columns(indent: str, tab_width: int) -> int:
    """The display width of leading whitespace, tabs to the next multiple of ``tab_width``."""
    col = 0
    for ch in indent:
        col = col + tab_width - col % tab_width if ch == "\t" else col + 1
    return col


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
    for w in (4, 8, 2):
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
    sm = difflib.SequenceMatcher(
        None, [x.strip(strip) for x in old_lines], [x.strip(strip) for x in lines], autojunk=False
    )
    for op, i1, i2, j1, j2 in sm.get_opcodes():
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

    @property
    def spans(self) -> tuple[tuple[int, int], ...]:
        return tuple((c.start, c.end) for c in self.candidates)


def _search(
    haystack: str, needle: str, check: Callable[[int, int], Candidate | None]
) -> tuple[list[Candidate], Candidate | None]:
    """Valid places of ``needle`` (non-overlapping), and one overlapping the first."""
    found: list[Candidate] = []
    if not needle:
        return found, None
    n = len(needle)
    first = -1
    i = haystack.find(needle)
    while i >= 0:
        c = check(i, i + n)
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
            overlap = check(j, j + n)
            if overlap is not None:
                break
            j = haystack.find(needle, j + 1, stop)
    return found, overlap


def _exact(view: str, needle: str) -> tuple[list[Candidate], Candidate | None]:
    return _search(view, needle, lambda s, e: Candidate(s, e))


def _char_tier(
    hay: Normalized, needle: Normalized, strict_end: bool
) -> tuple[list[Candidate], Candidate | None]:
    h = hay.text

    def check(s: int, e: int) -> Candidate | None:
        if strict_end and e < len(h) and h[e] != "\n":
            return None  # the model's line ended with whitespace: it meant a line end
        s0 = hay.to_source(s, "start")
        # a line end meant: the line's own trailing blanks are part of what is replaced
        e0 = hay.to_source(e, "start" if strict_end else "end")
        if s0 is None or e0 is None or e0 < s0:
            return None
        return Candidate(s0, e0)

    return _search(h, needle.text, check)


def _indent_tier(
    view: str, hay: Normalized, needle: Normalized, old: str
) -> tuple[list[Candidate], Candidate | None]:
    n_lines = needle.text.split("\n")
    first_indented = bool(_LEADING_RE.match(n_lines[0]))
    if len(n_lines) == 1 and not first_indented:
        return [], None
    dh = hay.then(_dedent_stage)
    dn = needle.then(_dedent_stage)
    if not dn.text.strip():
        return [], None
    if dn.text == needle.text and dh.text == hay.text:
        return [], None
    d = dh.text
    model_lines = old.split("\n")

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
        if how is None:
            return None
        return Candidate(
            s0, e0, "\n".join(old_in_file), tuple(indents), how, first_line=first_indented
        )

    return _search(d, dn.text, check)


_END_BLANK_RE = re.compile(r"[ \t]\Z")
_TRAILING_INNER_RE = re.compile(r"[ \t]+(?=\n)")


def _merge(
    a: list[Candidate], overlap: Candidate | None, b: list[Candidate]
) -> tuple[list[Candidate], Candidate | None]:
    """The union of two searches' places: non-overlapping ones, and one that overlaps."""
    seen = {(c.start, c.end) for c in a}
    every = sorted([*a, *(c for c in b if (c.start, c.end) not in seen)], key=lambda c: c.start)
    out: list[Candidate] = []
    for c in every:
        if out and c.start < out[-1].end:
            overlap = overlap or c
            continue
        out.append(c)
    return out, overlap


def exact_places(view: str, old: str) -> Found | None:
    """Where ``old`` occurs in ``view`` exactly, as :func:`locate`'s first tier finds it."""
    found, overlap = _exact(view, old)
    return Found(EXACT, tuple(found), overlap, old) if found else None


def locate(view: str, old: str) -> Found | None:
    """The first tier that finds ``old`` in ``view``, with every place it found."""
    exact = exact_places(view, old)
    if exact is not None:
        return exact
    old_lf = to_view(old)
    if old_lf != old:
        found, overlap = _exact(view, old_lf)
        if found:
            return Found(LINE_ENDINGS, tuple(found), overlap, old_lf)
    hay = Normalized(view)
    needle = Normalized(old_lf)
    for tier in _CHAR_TIERS:
        assert tier.stage is not None
        h2, n2 = hay.then(tier.stage), needle.then(tier.stage)
        changed = h2.text != hay.text or n2.text != needle.text
        ends_blank = tier is TRAILING_WHITESPACE and bool(_END_BLANK_RE.search(needle.text))
        pre = needle.text
        hay, needle = h2, n2
        if not changed:
            continue
        found, overlap = _char_tier(hay, needle, ends_blank)
        if ends_blank:
            # The needle's final blanks are trailing only if the match ends a line; else
            # they are the file's own spaces mid-line, matched as they are.
            kept = _TRAILING_INNER_RE.sub("", pre)
            more, _ = _char_tier(hay, Normalized(kept), False)
            found, overlap = _merge(found, overlap, more)
        if found:
            return Found(tier, tuple(found), overlap, old_lf)
    # Indentation: a whitespace-only last line is the next line's indentation, not text.
    trimmed = False
    lines = old_lf.split("\n")
    if len(lines) > 1 and lines[-1] and not lines[-1].strip(" \t" + ODD_SPACES):
        old_lf = "\n".join(lines[:-1]) + "\n"
        needle = normalize(old_lf, _stages_upto(TRAILING_WHITESPACE))
        trimmed = True
    found, overlap = _indent_tier(view, hay, needle, old_lf)
    if found:
        return Found(INDENTATION, tuple(found), overlap, old_lf, trimmed)
    return None


# -- replacing -----------------------------------------------------------------------


#: What :func:`carry_over` aligns as a whole: a quoted string (its quotes pair up), a
#: word, a run of whitespace, or one other character. A single quote opens a string only
#: where it is no apostrophe (no letter before the opening one or after the closing one).
_TOKEN_RE = re.compile(r"""\"[^"\n]*"|(?<!\w)'[^'\n]*'(?!\w)|\w+|\s+|.""", re.DOTALL)


def _tokens(text: str) -> list[tuple[int, int]]:
    """The spans of ``text``'s tokens (quotes read straight, so curly ones pair too)."""
    return [m.span() for m in _TOKEN_RE.finditer(normalize_quotes(text))]


def _aligned(old: str, new: str) -> list[tuple[str, int, int, int, int]]:
    """Opcodes (as :meth:`difflib.SequenceMatcher.get_opcodes`, in characters) that turn
    ``old`` into ``new``, aligned on whole tokens: an unchanged quoted string is matched
    with itself, never its closing quote with the opening one of a string inserted next
    to it. Tokens replaced one for one are aligned character by character inside; other
    replaced stretches are new text. Neighbouring opcodes of one kind are merged."""
    ot, nt = _tokens(old), _tokens(new)
    ow = [old[a:b] for a, b in ot]
    nw = [new[a:b] for a, b in nt]
    raw: list[tuple[str, int, int, int, int]] = []

    def span(ts: list[tuple[int, int]], k1: int, k2: int, size: int) -> tuple[int, int]:
        start = ts[k1][0] if k1 < len(ts) else size
        return start, (ts[k2 - 1][1] if k2 > k1 else start)

    sm = difflib.SequenceMatcher(None, ow, nw, autojunk=False)
    for op, i1, i2, j1, j2 in sm.get_opcodes():
        if op == "replace" and i2 - i1 == j2 - j1:
            for k in range(i2 - i1):
                a1, b1 = ot[i1 + k][0], nt[j1 + k][0]
                inner = difflib.SequenceMatcher(None, ow[i1 + k], nw[j1 + k], autojunk=False)
                for op2, x1, x2, y1, y2 in inner.get_opcodes():
                    raw.append((op2, a1 + x1, a1 + x2, b1 + y1, b1 + y2))
            continue
        o1, o2 = span(ot, i1, i2, len(old))
        n1, n2 = span(nt, j1, j2, len(new))
        raw.append((op, o1, o2, n1, n2))
    out: list[tuple[str, int, int, int, int]] = []
    for tag, i1, i2, j1, j2 in raw:
        kind = "equal" if tag == "equal" else "replace"
        if out and (out[-1][0] == "equal") == (kind == "equal"):
            prev = out[-1]
            out[-1] = (prev[0] if kind == "equal" else "replace", prev[1], i2, prev[3], j2)
        else:
            out.append((tag, i1, i2, j1, j2))
    return out


def carry_over(actual: str, old: str, new: str, stages: Sequence[Stage] = (_quotes_stage,)) -> str:
    """The replacement for ``actual`` (the file's text that ``old`` matched loosely).

    Stretches of ``new`` that are unchanged from ``old`` take the file's own characters
    (so curly quotes in untouched prose stay curly, trailing spaces stay); text the model
    newly wrote is kept exactly as given. ``old`` and ``actual`` must be equal after
    ``stages``; if they are not, ``new`` is used as given.
    """
    if actual == old:
        return new
    na = normalize(actual, stages)
    no = normalize(old, stages)
    if na.text != no.text:
        return new
    out: list[str] = []
    for op, i1, i2, j1, j2 in _aligned(old, new):
        if op == "equal":
            n1 = no.to_normal(i1, "start")
            n2 = no.to_normal(i2, "end")
            a1 = na.to_source(n1, "start") if n1 is not None else None
            a2 = na.to_source(n2, "end") if n2 is not None else None
            if a1 is None or a2 is None or a2 < a1:
                out.append(new[j1:j2])
                continue
            out.append(actual[a1:a2])
            # What the normalization dropped at the stretch's end (trailing blanks) is
            # not trailing in ``new`` when the model's line goes on after it: it is the
            # model's own text there ("a" + " " + "+ b"), kept as written.
            i_kept = no.to_source(n2, "end") if n2 is not None else None
            if i_kept is not None and i_kept < i2 and j2 < len(new) and new[j2] != "\n":
                out.append(new[j2 - (i2 - i_kept) : j2])
        elif op in ("replace", "insert"):
            out.append(new[j1:j2])
    return "".join(out)


def strip_trailing_whitespace(old: str, new: str, *, at_line_end: bool) -> str:
    """Drop trailing spaces/tabs the model left on lines of ``new``.

    A line that stands unchanged in ``old`` keeps its whitespace (it is the file's own),
    and the last line is touched only when the replaced text ends at a line end.
    """
    if " " not in new and "\t" not in new:
        return new
    kept = set(old.split("\n"))
    parts = new.split("\n")
    last = len(parts) - 1
    for i, part in enumerate(parts):
        if part in kept or (i == last and not at_line_end):
            continue
        parts[i] = part.rstrip(" \t")
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
    from steadyhand.text.nearmiss import closest_region, no_match_message

    near = closest_region(view, old)
    if near is None:
        return ToolError(
            ErrorCode.NO_MATCH,
            f"old_string was not found in {path}. Read the lines you want to change again "
            "and copy them exactly (whitespace and indentation included) into old_string.",
        )
    return ToolError(
        ErrorCode.NO_MATCH,
        no_match_message(path, near),
        closest_lines=[near.start_line, near.end_line],
        differences=list(near.differences),
    )


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
        found = locate(view, old)
    if found is None:
        raise _no_match(view, old, path)
    want_all = replace_all or (expected_replacements is not None and expected_replacements > 1)
    cands = found.candidates
    # Places that overlap cannot all be replaced, and neither one can be meant alone: with
    # or without replace_all, only more context can say which.
    count = len(cands) + (1 if found.overlap is not None else 0)
    how = "" if found.tier is EXACT else f" (with {found.tier.name} tolerance)"
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
    new_lf = to_view(new)
    if found.new_trimmed:
        parts = new_lf.split("\n")
        if len(parts) > 1 and not parts[-1].strip(" \t" + ODD_SPACES):
            new_lf = "\n".join(parts[:-1]) + "\n"
    exact = found.tier is EXACT or found.tier is LINE_ENDINGS
    char_stages = () if exact else _stages_upto(found.tier)
    splices: list[Splice] = []
    tolerated: tuple[str, ...] = ()
    for c in cands:
        at_line_end = c.end == len(view) or view[c.end] == "\n"
        text = (
            new_lf
            if markdown
            else strip_trailing_whitespace(found.old, new_lf, at_line_end=at_line_end)
        )
        actual = view[c.start : c.end]
        model_old = found.old
        if c.reindent is not None and c.old_in_file is not None:
            text = reindent_text(
                text, found.old, c.file_indents, c.reindent, first_line=c.first_line
            )
            model_old = c.old_in_file
        if not exact:
            text = carry_over(actual, model_old, text, char_stages)
        if not tolerated:
            tolerated = tolerances_used(found.tier, actual, model_old, had_cr=old != to_view(old))
        splices.append(Splice(c.start, c.end, text))
    return EditPlan(found.tier, tuple(splices), tolerated if found.tier is not EXACT else ())

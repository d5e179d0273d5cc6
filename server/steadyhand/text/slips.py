"""The second round of slips models make in ``old_string``, as pure text functions.

:mod:`steadyhand.text.matching` turns each into a tier (see docs/matching.md):

- ``unicode_normalization``: the same text in another Unicode normalization form
  (``é`` as one character, or as ``e`` and a combining accent). Both sides are compared
  in NFC; :func:`nfc_units` finds the stretches that may change.
- ``entities``: HTML and XML character references (``&amp;``, ``&#39;``) against the
  characters they stand for, in one direction only within a match
  (:func:`entity_counts`).
- ``tabs``: tabs inside a line written as spaces (or the reverse), at a tab width of
  2, 4 or 8, counted to the next tab stop or as a fixed number of spaces
  (:data:`INNER_RUN_RE`, :func:`tab_reading`).
- ``line_numbers``: lines copied from the read output with their number prefixes
  (:func:`strip_line_numbers`, :func:`strip_new_line_numbers`).
- ``escapes``: a string escaped once too often, as in JSON (``\\n`` for a line break,
  ``\\"`` for a quote) (:func:`unescape`).

Nothing here knows of offsets maps or tiers: each function takes and gives text.
"""

from __future__ import annotations

import html.entities
import itertools
import re
import unicodedata
from collections.abc import Iterable, Iterator
from typing import NamedTuple

from steadyhand.text.chars import ODD_SPACES

# -- Unicode normalization -------------------------------------------------------------

#: Characters of combining class 0 that NFC may still join to the character before them
#: (the second half of a canonical pair; computed from the Unicode data and checked
#: against it by a test), and the Hangul vowel and final jamo.
COMPOSING_STARTERS = (
    "\u09be\u09d7\u0b3e\u0b56\u0b57\u0bbe\u0bd7\u0cc2\u0cd5\u0cd6\u0d3e\u0d57\u0dcf\u0ddf"
    "\u0fb5\u0fb7\u102e\u1b35\U00011127\U0001133e\U00011357\U000114b0\U000114ba\U000114bd"
    "\U000115af\U00011930\u1161-\u1175\u11a8-\u11c2"
)
_NON_ASCII_RE = re.compile(r"[^\x00-\x7f]+")


def nfc_units(text: str) -> Iterator[tuple[int, int]]:
    """The stretches of ``text`` NFC may change: each run of characters outside ASCII,
    with the one ASCII character before it (a base an accent may join). ASCII never
    changes under NFC and never joins what stands before it, so these stretches
    normalize one by one."""
    for m in _NON_ASCII_RE.finditer(text):
        start = m.start()
        yield (start - 1 if start else start), m.end()


_COMPOSING_RE = re.compile(f"[{COMPOSING_STARTERS}]")


def _joins_back(ch: str) -> bool:
    return bool(unicodedata.combining(ch)) or _COMPOSING_RE.match(ch) is not None


def nfc_pieces(unit: str) -> list[str]:
    """``unit`` cut before each character that NFC never joins to what precedes it, so
    that each piece normalizes on its own (a match may then start or end between them).
    Falls back to the whole unit if the pieces do not normalize to what it does."""
    pieces: list[str] = []
    start = 0
    for i in range(1, len(unit)):
        if not _joins_back(unit[i]):
            pieces.append(unit[start:i])
            start = i
    pieces.append(unit[start:])
    if "".join(unicodedata.normalize("NFC", p) for p in pieces) != unicodedata.normalize(
        "NFC", unit
    ):
        return [unit]
    return pieces


def is_nfc(text: str) -> bool:
    return unicodedata.is_normalized("NFC", text)


# -- entities ----------------------------------------------------------------------------

#: A character reference: named (``&amp;``), decimal (``&#39;``) or hexadecimal
#: (``&#x27;``), always with its semicolon (a bare ``&amp`` is not read as one).
ENTITY_RE = re.compile(r"&(?:#[0-9]{1,7}|#[xX][0-9a-fA-F]{1,6}|[A-Za-z][A-Za-z0-9]{1,31});")


def decode_entity(ref: str) -> str:
    """The text ``ref`` (one :data:`ENTITY_RE` match) stands for; ``ref`` itself when it
    names nothing, or a line break or other control character (never read as one)."""
    body = ref[1:-1]
    if body.startswith("#"):
        try:
            code = int(body[2:], 16) if body[1:2] in "xX" else int(body[1:])
        except ValueError:
            return ref
        if code > 0x10FFFF or 0xD800 <= code <= 0xDFFF:
            return ref
        out = chr(code)
    else:
        out = html.entities.html5.get(body + ";", ref)
    if any(unicodedata.category(c) == "Cc" and c != "\t" for c in out):
        return ref
    return out


def decode_entities(text: str) -> str:
    """``text`` with every character reference replaced by what it stands for."""
    if "&" not in text:
        return text
    return ENTITY_RE.sub(lambda m: decode_entity(m.group()), text)


def entity_counts(text: str) -> list[str]:
    """The character references in ``text`` that stand for something else, in order."""
    if "&" not in text:
        return []
    return [m.group() for m in ENTITY_RE.finditer(text) if decode_entity(m.group()) != m.group()]


def file_escapes(file_text: str) -> dict[str, str]:
    """How a stretch of a file that writes characters as references would write each:
    every character a reference there stands for and that never stands there as itself,
    with the first reference used for it; and ``&`` as ``&amp;`` when the stretch has
    a reference but no bare ``&`` (escaped text escapes every ``&``)."""
    refs: dict[str, str] = {}
    for m in ENTITY_RE.finditer(file_text):
        ch = decode_entity(m.group())
        if ch != m.group() and len(ch) == 1:
            refs.setdefault(ch, m.group())
    if not refs:
        return {}
    bare = ENTITY_RE.sub(
        lambda m: "" if decode_entity(m.group()) != m.group() else m.group(), file_text
    )
    table = {ch: ref for ch, ref in refs.items() if ch not in bare}
    if "&" not in bare:
        table.setdefault("&", "&amp;")
    return table


def escape_like(text: str, table: dict[str, str]) -> str:
    """``text`` with each character of ``table`` written as its reference there
    (:func:`file_escapes`); a reference ``text`` already holds stays as it is."""
    if not table or not any(ch in text for ch in table):
        return text
    out: list[str] = []
    i = 0
    while i < len(text):
        ch = text[i]
        if ch == "&":
            m = ENTITY_RE.match(text, i)
            if m is not None and decode_entity(m.group()) != m.group():
                out.append(m.group())
                i = m.end()
                continue
        out.append(table.get(ch, ch))
        i += 1
    return "".join(out)


def entities_one_way(file_text: str, model_text: str) -> str | None:
    """How references differ between a matched stretch of the file and the model's
    text: ``"model"`` (the model wrote references where the file has the characters),
    ``"file"`` (the reverse), ``""`` (the same references on both sides), or None when
    both sides have references and they differ (two readings)."""
    f, m = entity_counts(file_text), entity_counts(model_text)
    if f == m:
        return ""
    if m and not f:
        return "model"
    if f and not m:
        return "file"
    return None


# -- tabs inside lines ---------------------------------------------------------------------

_SPACE = " \t" + ODD_SPACES
#: A run of blanks inside a line (after its first visible character and before its
#: last) that holds a tab or is two or more wide: where a tab may have been written as
#: spaces. A single space is never read as a tab. (Each branch starts with the run's
#: first blank, and only then looks behind it: the regex engine can then skip ahead to
#: the next blank at C speed instead of trying every position.)
_VISIBLE = f"[^\\s{ODD_SPACES}]"
INNER_RUN_RE = re.compile(
    f"(?:\t(?<={_VISIBLE}\t)[{_SPACE}]*"
    f"|[ {ODD_SPACES}](?<={_VISIBLE}[ {ODD_SPACES}])(?:[{_SPACE}]*\t[{_SPACE}]*|[{_SPACE}]+))"
    f"(?={_VISIBLE})"
)
#: The tab widths a model may have expanded tabs to, in order of preference (inside
#: lines here, and in leading indentation by the indentation tier).
TAB_WIDTHS = (4, 8, 2)


def width(run: str, col: int, tab: int, fixed: bool = False) -> int:
    """How many columns ``run`` takes from column ``col``: a tab reaches the next
    multiple of ``tab`` (or, ``fixed``, takes ``tab`` columns); the indentation tier
    counts leading tabs the same way."""
    c = col
    for ch in run:
        if ch == "\t":
            c += tab if fixed else tab - c % tab
        else:
            c += 1
    return c - col


def _inner_runs(text: str) -> list[tuple[int, str]]:
    """The inner runs of ``text`` (:data:`INNER_RUN_RE`) and where each starts."""
    return [(m.start(), m.group()) for m in INNER_RUN_RE.finditer(text)]


def tab_reading(file_text: str, start: int, model_text: str) -> tuple[int, bool] | None:
    """The tab width and counting (True: a fixed number of spaces per tab; False: to the
    next tab stop) under which the blanks inside the lines of the model's text equal
    the file's, run for run; None when there is none.

    ``file_text`` starts at the start of the line the match starts on and ends where
    the match ends; ``start`` is where the match starts in it. Only runs after
    ``start`` count. Columns are those of the file (the model's own indentation may
    differ by whole tab stops, which moves no tab stop inside the line).
    """
    file_runs = [(p, r) for p, r in _inner_runs(file_text) if p > start]
    model_runs = [r for _, r in _inner_runs(model_text)]
    if len(file_runs) != len(model_runs):
        return None
    pairs = [(p, f, m) for (p, f), m in zip(file_runs, model_runs, strict=True) if f != m]
    if not pairs:
        return TAB_WIDTHS[0], False
    for fixed in (False, True):
        for tab in TAB_WIDTHS:
            if _fits(file_text, pairs, tab, fixed):
                return tab, fixed
    return None


def _fits(text: str, pairs: list[tuple[int, str, str]], tab: int, fixed: bool) -> bool:
    """Whether every (position, file run, model run) in ``pairs`` (in order) is as wide
    on both sides at tab width ``tab``; columns are counted once, left to right."""
    pos, col = 0, 0
    for p, f, m in pairs:
        nl = text.rfind("\n", pos, p)
        if nl >= 0:
            pos, col = nl + 1, 0
        col += width(text[pos:p], col, tab, fixed=False)
        pos = p
        if width(f, col, tab, fixed) != width(m, col, tab, fixed):
            return False
    return True


# -- line-number prefixes ---------------------------------------------------------------------

#: The prefix the read output puts before each line: the number right-aligned in six
#: columns, then a tab (``"    12\t"``); models sometimes drop the padding.
_PREFIX_RE = re.compile(r"( *)(\d+)\t")
#: A line of the read output for an empty line, its tab dropped as trailing whitespace.
_BARE_RE = re.compile(r"( *)(\d+)")


def _padded(spaces: str, digits: str) -> bool:
    return len(spaces) + len(digits) == 6 or (len(digits) > 6 and not spaces)


class Numbered(NamedTuple):
    """A text with the read output's line-number prefixes taken off."""

    text: str
    #: The prefixes were padded as the read output pads them.
    padded: bool
    #: The numbers of the first and the last line.
    first: int
    last: int


def strip_line_numbers(old: str) -> Numbered | None:
    """``old`` without the read output's line-number prefixes, whether they were padded
    as the read output pads them, and the numbers they carried; None unless every line
    has one and the numbers count up one by one (a single line must have the padded
    form)."""
    lines = old.split("\n")
    ends = len(lines) > 1 and lines[-1] == ""
    body = lines[:-1] if ends else lines
    out: list[str] = []
    numbers: list[int] = []
    padded = True
    for line in body:
        m = _PREFIX_RE.match(line)
        if m is None:
            m = _BARE_RE.fullmatch(line)
            if m is None:
                return None
        numbers.append(int(m.group(2)))
        padded = padded and _padded(m.group(1), m.group(2))
        out.append(line[m.end() :])
    if not numbers or any(b != a + 1 for a, b in itertools.pairwise(numbers)):
        return None
    if len(numbers) == 1 and not padded:
        return None
    return Numbered("\n".join(out) + ("\n" if ends else ""), padded, numbers[0], numbers[-1])


def new_prefixes(new: str, padded: bool, numbers: tuple[int, int]) -> list[int]:
    """How long the line-number prefix is on each line of ``new`` (0: none).

    A line carries a prefix when it starts with one of the form ``old_string`` had
    (padded as the read output pads them, or not) whose number continues the numbering
    of the lines matched: a number among theirs (``numbers``: the first and the last),
    or one more than the last prefix before it in ``new`` (the model numbering the
    lines it adds). Anything else is the model's text: ``2024<tab>17`` added below
    lines 1-2 is a line of data, not line 2024.
    """
    first, last = numbers
    out: list[int] = []
    prev: int | None = None
    for line in new.split("\n"):
        m = _PREFIX_RE.match(line) or _BARE_RE.fullmatch(line)
        if m is not None and (_padded(m.group(1), m.group(2)) or not padded):
            n = int(m.group(2))
            if first <= n <= last or (prev is not None and n == prev + 1):
                out.append(m.end())
                prev = n
                continue
        out.append(0)
    return out


def strip_new_line_numbers(new: str, padded: bool, numbers: tuple[int, int]) -> str:
    """``new`` with the prefix taken off each line that carries one (:func:`new_prefixes`;
    lines the model wrote without one stay as they are)."""
    lines = new.split("\n")
    cuts = new_prefixes(new, padded, numbers)
    return "\n".join(line[cut:] for line, cut in zip(lines, cuts, strict=True))


def every_line_prefixed(new: str, padded: bool, numbers: tuple[int, int]) -> bool:
    """Whether every line of ``new`` carries a prefix (:func:`new_prefixes`), so exactly
    one comes off each, whatever the lines hold after it; an empty last line needs none."""
    cuts = new_prefixes(new, padded, numbers)
    if len(cuts) > 1 and new.endswith("\n"):
        cuts.pop()
    return all(cuts)


def starts_like_a_prefix(lines: Iterable[str]) -> bool:
    """Whether any of ``lines`` starts with what could be a line-number prefix."""
    return any(_PREFIX_RE.match(line) for line in lines)


# -- escaped once too often ----------------------------------------------------------------

_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", '"': '"', "'": "'", "`": "`", "\\": "\\", "/": "/"}


def unescape(text: str) -> str | None:
    """``text`` read as a string escaped once more than meant (as in JSON): every
    backslash starts one of ``\\n \\t \\r \\" \\' \\` \\\\ \\/``; None when one does
    not, or when there is no backslash."""
    if "\\" not in text:
        return None
    out: list[str] = []
    i = 0
    while True:
        j = text.find("\\", i)
        if j < 0:
            out.append(text[i:])
            return "".join(out)
        out.append(text[i:j])
        rep = _ESCAPES.get(text[j + 1 : j + 2])
        if rep is None:
            return None
        out.append(rep)
        i = j + 2

"""Finding what the model meant by ``old_string``, and building the replacement.

Everything here is pure: text in, decisions out. Offsets are into the *view* text
(LF line endings, see :mod:`steadyhand.text.lines`); the edit tool maps them to the raw
file text afterwards.

Matching goes in tiers. The first tier that finds anything decides, and it must find
exactly one place (or ``replace_all``): a near-miss is tolerated only when it has one
sensible reading. Each tier changes only *how the place is found*; the file's own text
outside the replaced region is never touched.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable
from dataclasses import dataclass

from steadyhand.protocol.errors import ErrorCode, ToolError

# Curly and other typographic quotes models flatten to straight ones. Each maps one
# character to one character, so offsets in the normalized text are offsets in the file.
_QUOTE_TABLE = str.maketrans(
    {
        "\u2018": "'",
        "\u2019": "'",
        "\u201a": "'",
        "\u201b": "'",
        "\u2032": "'",
        "\u201c": '"',
        "\u201d": '"',
        "\u201e": '"',
        "\u201f": '"',
        "\u2033": '"',
    }
)

MARKDOWN_SUFFIXES = frozenset({".md", ".markdown", ".mdx", ".mdown", ".mkd"})


def normalize_quotes(text: str) -> str:
    """``text`` with typographic quotes replaced by straight ones (length-preserving)."""
    return text.translate(_QUOTE_TABLE)


@dataclass(frozen=True, slots=True)
class Tier:
    """One way of finding ``old_string``: a name, what it tolerates, how it normalizes.

    ``normalize`` must map each character to exactly one character, so that offsets
    found in normalized text are offsets in the real text.
    """

    name: str
    tolerated: str
    normalize: Callable[[str], str] | None


EXACT = Tier("exact", "", None)
QUOTES = Tier("quotes", "curly and straight quotes were treated as equal", normalize_quotes)

#: The tiers, tried in order.
TIERS: tuple[Tier, ...] = (EXACT, QUOTES)


@dataclass(frozen=True, slots=True)
class Found:
    tier: Tier
    spans: tuple[tuple[int, int], ...]


def find_all(haystack: str, needle: str) -> list[tuple[int, int]]:
    """Non-overlapping occurrences of ``needle``, left to right."""
    spans: list[tuple[int, int]] = []
    if not needle:
        return spans
    n = len(needle)
    i = haystack.find(needle)
    while i >= 0:
        spans.append((i, i + n))
        i = haystack.find(needle, i + n)
    return spans


def locate(view: str, old: str) -> Found | None:
    """The first tier that finds ``old`` in ``view``, with every place it found."""
    for tier in TIERS:
        if tier.normalize is None:
            spans = find_all(view, old)
        else:
            norm_old = tier.normalize(old)
            if norm_old == old and tier.normalize(view) == view:
                continue
            spans = find_all(tier.normalize(view), norm_old)
        if spans:
            return Found(tier, tuple(spans))
    return None


def keep_file_characters(actual: str, old: str, new: str) -> str:
    """The replacement for ``actual`` (the file's text that ``old`` matched loosely).

    Stretches of ``new`` that are unchanged from ``old`` take the file's own characters
    (so curly quotes in untouched prose stay curly); text the model newly wrote is kept
    exactly as given. Requires ``len(actual) == len(old)``.
    """
    if actual == old:
        return new
    out: list[str] = []
    matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op == "equal":
            out.append(actual[i1:i2])
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


@dataclass(frozen=True, slots=True)
class Splice:
    """Replace ``view[start:end]`` with ``text``."""

    start: int
    end: int
    text: str


@dataclass(frozen=True, slots=True)
class EditPlan:
    tier: Tier
    splices: tuple[Splice, ...]

    @property
    def replacements(self) -> int:
        return len(self.splices)


def line_numbers(view: str, spans: tuple[tuple[int, int], ...]) -> list[int]:
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


def plan_edit(
    view: str,
    old: str,
    new: str,
    *,
    replace_all: bool = False,
    markdown: bool = False,
    path: str = "the file",
) -> EditPlan:
    """Decide what an edit changes, or raise :class:`ToolError` saying why not."""
    if old == new:
        raise ToolError(
            ErrorCode.NO_CHANGE,
            "old_string and new_string are identical, so there is nothing to change. "
            "Send the text you want in new_string.",
        )
    found = locate(view, old)
    if found is None:
        raise ToolError(
            ErrorCode.NO_MATCH,
            f"old_string was not found in {path}. Read the lines you want to change again "
            "and copy them exactly (whitespace and indentation included) into old_string.",
        )
    spans = found.spans
    if len(spans) > 1 and not replace_all:
        lines = line_numbers(view, spans)
        raise ToolError(
            ErrorCode.AMBIGUOUS,
            f"old_string matches {len(spans)} places in {path} (lines {_numbers(lines)}). "
            "Add a few surrounding lines to old_string so it matches exactly one place, "
            "or set replace_all to true to change all of them.",
            matches=len(spans),
            lines=lines,
        )
    splices: list[Splice] = []
    for start, end in spans:
        at_line_end = end == len(view) or view[end] == "\n"
        text = new if markdown else strip_trailing_whitespace(old, new, at_line_end=at_line_end)
        actual = view[start:end]
        if found.tier is not EXACT:
            text = keep_file_characters(actual, old, text)
        splices.append(Splice(start, end, text))
    return EditPlan(found.tier, tuple(splices))


def apply_splices(text: str, splices: tuple[Splice, ...] | list[Splice]) -> str:
    """``text`` with non-overlapping, ordered splices applied."""
    out: list[str] = []
    pos = 0
    for sp in splices:
        out.append(text[pos : sp.start])
        out.append(sp.text)
        pos = sp.end
    out.append(text[pos:])
    return "".join(out)

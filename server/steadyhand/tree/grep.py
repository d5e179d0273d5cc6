"""Searching one text for a pattern, line by line as ripgrep does (pure).

A pattern is a regular expression in Python's syntax, or a literal string. Lines end at
``\\n``; a ``\\r`` before it belongs to the line, so ``foo$`` does not match ``foo\\r\\n``
(ripgrep without ``--crlf`` reads it the same way). Without ``multiline`` a match never
spans a line break; with it the pattern runs over the whole text and a match covers
every line it touches. Context lines (``before``/``after``) are those around matching
lines that do not match themselves.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass

#: Features of Python's syntax that ripgrep's default engine lacks: a pattern that uses
#: one is searched by the Python engine only.
_PYTHON_ONLY = re.compile(r"\(\?(?:[=!]|<[=!]|P=|\()|\\[1-9]|\\[ZAGz]|\(\?[aiLmsux]*-|\[\[:")


class PatternError(ValueError):
    """A pattern that does not compile."""


@dataclass(frozen=True, slots=True)
class Query:
    pattern: str
    literal: bool = False
    case_insensitive: bool = False
    multiline: bool = False
    before: int = 0
    after: int = 0
    #: The most matching lines taken from one file (None: all), as ripgrep's
    #: ``--max-count``: enough to know which files match.
    max_count: int | None = None


@dataclass(frozen=True, slots=True)
class Line:
    """A line of the answer: a match (``match``) or context around one."""

    number: int  # 1-based
    text: str
    match: bool


def compile_query(query: Query) -> re.Pattern[str]:
    """The compiled pattern, or :class:`PatternError` with what is wrong."""
    source = re.escape(query.pattern) if query.literal else query.pattern
    flags = re.MULTILINE
    if query.case_insensitive:
        flags |= re.IGNORECASE
    try:
        return re.compile(source, flags)
    except re.error as exc:
        raise PatternError(f"{exc.msg} at position {exc.pos}") from exc
    except (RecursionError, OverflowError) as exc:
        raise PatternError("the pattern is nested too deeply") from exc


def portable(query: Query) -> bool:
    """Whether ripgrep reads the pattern as Python does (then either engine may run)."""
    return query.literal or _PYTHON_ONLY.search(query.pattern) is None


def line_starts(text: str) -> list[int]:
    starts = [0]
    find = text.find
    at = find("\n")
    while at != -1:
        starts.append(at + 1)
        at = find("\n", at + 1)
    if starts[-1] == len(text) and len(starts) > 1:
        starts.pop()  # a final line break starts no line
    return starts


#: What can match in a line alone and fail at the same place in the whole text, where
#: the line breaks around the line are seen: look-arounds, ``\A`` and ``\Z``.
_LINE_BOUND = re.compile(r"\(\?<?[=!]|\\[AZ]")


def matching_lines(pattern: re.Pattern[str], text: str, query: Query) -> list[int]:
    """0-based numbers of the lines that hold (or, multiline, are touched by) a match,
    the first ``query.max_count`` of them."""
    hits = _matching_lines(pattern, text, query)
    return hits if query.max_count is None else hits[: query.max_count]


def _matching_lines(pattern: re.Pattern[str], text: str, query: Query) -> list[int]:
    if not query.multiline:
        if _LINE_BOUND.search(pattern.pattern) is None and pattern.search(text) is None:
            return []  # no match anywhere, so none in any line (one pass, no split)
        hits = []
        for i, line in enumerate(text.split("\n")):
            if pattern.search(line) is not None:
                hits.append(i)
        if hits and text.endswith("\n") and hits[-1] == text.count("\n"):
            hits.pop()  # the empty "line" after a final line break is no line
        return hits
    starts = line_starts(text)
    lines: list[int] = []
    seen = -1
    for m in pattern.finditer(text):
        if m.start() == m.end() and m.start() == len(text) and text.endswith("\n"):
            continue
        first = bisect.bisect_right(starts, m.start()) - 1
        end = m.end() - 1 if m.end() > m.start() else m.start()
        last = bisect.bisect_right(starts, max(end, m.start())) - 1
        for n in range(max(first, seen + 1), last + 1):
            lines.append(n)
        seen = max(seen, last)
    return lines


def with_context(text: str, hits: list[int], query: Query) -> list[Line]:
    """The matching lines with their context, in order, each line once."""
    if not hits:
        return []
    rows = text.split("\n")
    if text.endswith("\n"):
        rows.pop()
    wanted: dict[int, bool] = {}
    for n in hits:
        for c in range(max(0, n - query.before), min(len(rows), n + query.after + 1)):
            wanted.setdefault(c, False)
        wanted[n] = True
    return [Line(n + 1, rows[n], wanted[n]) for n in sorted(wanted)]


def count(pattern: re.Pattern[str], text: str, query: Query) -> int:
    """How many lines match."""
    return len(matching_lines(pattern, text, query))

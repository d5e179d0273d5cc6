"""How file text is shown to a model: ``cat -n`` style numbered lines."""

from __future__ import annotations

from collections.abc import Iterable

TRUNCATION_MARKER = " … [line cut: {n} more characters]"


def _cut(line: str, max_line_chars: int) -> str:
    if len(line) <= max_line_chars:
        return line
    return line[:max_line_chars] + TRUNCATION_MARKER.format(n=len(line) - max_line_chars)


_NUMBERED = "{:>6}\t{}".format


def number_lines(lines: Iterable[str], first_line: int, max_line_chars: int) -> tuple[str, bool]:
    """Lines numbered from ``first_line``: number right-aligned in 6 columns, a tab, the line.

    Returns the text and whether any line was cut.
    """
    items = lines if isinstance(lines, list) else list(lines)
    cut = bool(items) and max(map(len, items)) > max_line_chars
    if cut:
        items = [_cut(line, max_line_chars) for line in items]
    numbers = range(first_line, first_line + len(items))
    return "\n".join(map(_NUMBERED, numbers, items)), cut


def estimate_tokens(text: str) -> int:
    """A cheap, deliberately generous token estimate (about 4 characters a token)."""
    return (len(text) + 3) // 4


def snippet(view_lines: list[str], first: int, last: int, context: int = 2) -> str:
    """Numbered lines ``first..last`` (1-based, inclusive) with some context around them."""
    lo = max(1, first - context)
    hi = min(len(view_lines), last + context)
    text, _ = number_lines(view_lines[lo - 1 : hi], lo, 2000)
    return text


def snippet_at(view: str, offset: int, first: int, last: int, context: int = 2) -> str:
    """``snippet(split_lines(view), first, last, context)`` without splitting the whole
    text: ``offset`` is a position in line ``first`` of ``view``."""
    start = view.rfind("\n", 0, offset) + 1
    lo = first
    while lo > max(1, first - context) and start > 0:
        start = view.rfind("\n", 0, start - 1) + 1
        lo -= 1
    want = last + context - lo + 1
    lines: list[str] = []
    pos = start
    while len(lines) < want and pos < len(view):
        end = view.find("\n", pos)
        if end < 0:
            lines.append(view[pos:])
            break
        lines.append(view[pos:end])
        pos = end + 1
    text, _ = number_lines(lines, lo, 2000)
    return text

"""How file text is shown to a model: ``cat -n`` style numbered lines."""

from __future__ import annotations

import functools
import itertools
import re
from collections.abc import Iterable, Sequence

TRUNCATION_MARKER = " … [line cut: {n} more characters]"
#: Finds that marker in text copied from read output.
CUT_MARKER_RE = re.compile(r" … \[line cut: \d+ more characters\]")


def _cut(line: str, max_line_chars: int) -> str:
    if len(line) <= max_line_chars:
        return line
    return line[:max_line_chars] + TRUNCATION_MARKER.format(n=len(line) - max_line_chars)


#: Bytes the cut marker adds (with a number of up to 12 digits).
_MARKER_BYTES = len(TRUNCATION_MARKER.format(n=10**11).encode("utf-8"))

_BLOCK = 4096


@functools.lru_cache(maxsize=8)
def _prefix_block(block: int) -> list[str]:
    """``"\\n     N\\t"`` for the numbers of one block (formatted once, joined many times)."""
    return [f"\n{n:>6}\t" for n in range(block * _BLOCK, (block + 1) * _BLOCK)]


def _prefixes(first: int, count: int) -> list[str]:
    out: list[str] = []
    n, end = first, first + count
    while n < end:
        block, i = divmod(n, _BLOCK)
        take = min(end - n, _BLOCK - i)
        out += _prefix_block(block)[i : i + take]
        n += take
    return out


def number_lines(lines: Iterable[str], first_line: int, max_line_chars: int) -> tuple[str, bool]:
    """Lines numbered from ``first_line``: number right-aligned in 6 columns, a tab, the line.

    Returns the text and whether any line was cut.
    """
    items = lines if isinstance(lines, list) else list(lines)
    if not items:
        return "", False
    cut = max(map(len, items)) > max_line_chars
    if cut:
        items = [_cut(line, max_line_chars) for line in items]
    # Prefixes and lines interleaved by slice assignment, then one join: no per-line format.
    parts = [""] * (2 * len(items))
    parts[0::2] = _prefixes(first_line, len(items))
    parts[1::2] = items
    parts[0] = parts[0][1:]  # the first line has no newline before it
    return "".join(parts), cut


def fitting_lines(
    lines: Sequence[str], first_line: int, max_line_chars: int, max_bytes: int
) -> int:
    """How many of ``lines``, numbered from ``first_line`` as :func:`number_lines` does,
    fit in ``max_bytes`` of UTF-8 output (always at least one, when there is one). Exact
    for lines of ASCII; a line with other characters counts its UTF-8 bytes, and a cut
    one at most four bytes a character it keeps, so what fits never passes the budget."""
    n = len(lines)
    if n == 0:
        return 0
    width = max(6, len(str(first_line + n - 1))) + 2  # the number, a tab, a newline
    sizes = list(map(len, lines))
    if not all(map(str.isascii, lines)):
        sizes = [
            size if line.isascii() else len(line.encode("utf-8", "surrogatepass"))
            for size, line in zip(sizes, lines, strict=True)
        ]
    if max(map(len, lines)) > max_line_chars:
        sizes = [
            (1 if line.isascii() else 4) * max_line_chars + _MARKER_BYTES
            if len(line) > max_line_chars
            else size
            for size, line in zip(sizes, lines, strict=True)
        ]
    if sum(sizes) + width * n <= max_bytes:
        return n  # the usual case, counted at C speed
    totals = list(itertools.accumulate(sizes))
    # the most k with totals[k - 1] + width * k <= max_bytes (totals grow faster than k)
    lo, hi = 0, n
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if totals[mid - 1] + width * mid <= max_bytes:
            lo = mid
        else:
            hi = mid - 1
    return max(1, lo)


def number_lines_within(
    lines: list[str], first_line: int, max_line_chars: int, max_bytes: int
) -> tuple[str, bool, int]:
    """:func:`number_lines` of as many of ``lines`` as fit in ``max_bytes`` of UTF-8
    (:func:`fitting_lines`): the text, whether a line was cut, and how many lines it holds.
    When all fit (the usual case) this costs nothing more than numbering them."""
    text, cut = number_lines(lines, first_line, max_line_chars)
    if _utf8_size_at_most(text, max_bytes):
        return text, cut, len(lines)
    count = fitting_lines(lines, first_line, max_line_chars, max_bytes)
    text, cut = number_lines(lines[:count], first_line, max_line_chars)
    return text, cut, count


def _utf8_size_at_most(text: str, max_bytes: int) -> bool:
    if len(text) > max_bytes:
        return False
    if text.isascii() or 4 * len(text) <= max_bytes:  # both O(1)
        return True
    return len(text.encode("utf-8", "surrogatepass")) <= max_bytes


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

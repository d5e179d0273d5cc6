"""Line endings and line splitting, the LSP way: lines break only at LF, CRLF and CR.

The agent always sees text with ``\\n`` line endings (the *view*); the file keeps its own
(the *raw* text). :class:`NewlineMap` converts offsets between the two, so an edit found
in the view is spliced into the raw text and every untouched line keeps its ending.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, Protocol

LineEnding = Literal["lf", "crlf", "cr", "mixed", "none"]

_NEWLINE_TEXT = {"lf": "\n", "crlf": "\r\n", "cr": "\r"}


def to_view(raw: str) -> str:
    """``raw`` with every CRLF and lone CR turned into LF."""
    if "\r" not in raw:
        return raw
    return raw.replace("\r\n", "\n").replace("\r", "\n")


def split_lines(view: str) -> list[str]:
    """Lines of a view text (LF only), without their endings; a final LF adds no line."""
    if not view:
        return []
    lines = view.split("\n")
    if lines[-1] == "":
        lines.pop()
    return lines


def count_lines(view: str) -> int:
    if not view:
        return 0
    n = view.count("\n")
    return n if view.endswith("\n") else n + 1


@dataclass(frozen=True, slots=True)
class EndingStats:
    lf: int
    crlf: int
    cr: int

    @property
    def style(self) -> LineEnding:
        kinds = [k for k, n in (("lf", self.lf), ("crlf", self.crlf), ("cr", self.cr)) if n]
        if not kinds:
            return "none"
        if len(kinds) > 1:
            return "mixed"
        return kinds[0]  # type: ignore[return-value]

    @property
    def dominant(self) -> str:
        """The newline text new lines should use (LF when the file has none)."""
        best = max((self.lf, "lf"), (self.crlf, "crlf"), (self.cr, "cr"))
        return _NEWLINE_TEXT[best[1]] if best[0] else "\n"


def ending_stats(raw: str) -> EndingStats:
    if "\r" not in raw:  # the common case: one pass instead of three
        return EndingStats(lf=raw.count("\n"), crlf=0, cr=0)
    crlf = raw.count("\r\n")
    cr = raw.count("\r") - crlf
    lf = raw.count("\n") - crlf
    return EndingStats(lf=lf, crlf=crlf, cr=cr)


class _Span(Protocol):
    """A splice: ``text`` replaces ``[start, end)``."""

    @property
    def start(self) -> int: ...

    @property
    def end(self) -> int: ...

    @property
    def text(self) -> str: ...


def ending_stats_spliced(
    old: EndingStats, old_raw: str, new_raw: str, splices: Sequence[_Span]
) -> EndingStats:
    """The counts of ``new_raw``, which is ``old_raw`` (whose counts are ``old``) with the
    ordered, non-overlapping raw ``splices`` applied. Only the regions the splices touch
    are counted, each widened by one character each side, so that a CRLF pair formed or
    broken at an edge is counted the same way in both texts."""
    lf, crlf, cr = old.lf, old.crlf, old.cr
    delta = 0  # how far earlier splices moved the new text
    i = 0
    while i < len(splices):
        start, end = splices[i].start, splices[i].end
        grow = len(splices[i].text) - (end - start)
        i += 1
        while i < len(splices) and splices[i].start - 1 <= end + 1:  # windows touch
            end = splices[i].end
            grow += len(splices[i].text) - (splices[i].end - splices[i].start)
            i += 1
        lo = max(0, start - 1)
        gone = ending_stats(old_raw[lo : end + 1])
        came = ending_stats(new_raw[lo + delta : end + 1 + delta + grow])
        lf += came.lf - gone.lf
        crlf += came.crlf - gone.crlf
        cr += came.cr - gone.cr
        delta += grow
    return EndingStats(lf=lf, crlf=crlf, cr=cr)


class NewlineMap:
    """Maps offsets in the view (LF-only) text to offsets in the raw text."""

    __slots__ = ("_crlf_view_positions",)

    def __init__(self, raw: str) -> None:
        positions: list[int] = []
        if "\r" in raw and "\r\n" in raw:  # a one-character search first: faster
            shift = 0
            start = 0
            while True:
                i = raw.find("\r\n", start)
                if i < 0:
                    break
                positions.append(i - shift)  # the view offset of the LF this CRLF became
                shift += 1
                start = i + 2
        self._crlf_view_positions = positions

    def to_raw(self, view_offset: int) -> int:
        """Raw offset of a view offset (a boundary between characters)."""
        if not self._crlf_view_positions:
            return view_offset
        return view_offset + bisect.bisect_left(self._crlf_view_positions, view_offset)


def with_endings(view_text: str, newline: str) -> str:
    """``view_text`` (LF only) with ``newline`` as its line ending."""
    return view_text if newline == "\n" else view_text.replace("\n", newline)


def line_ending_name(style: LineEnding) -> str:
    return {"lf": "LF", "crlf": "CRLF", "cr": "CR", "mixed": "mixed", "none": "none"}[style]


def common_prefix(a: list[str], b: list[str]) -> int:
    """How many leading items ``a`` and ``b`` share (compared in C-level chunks first)."""
    n = min(len(a), len(b))
    i = 0
    step = 1024
    while i + step <= n and a[i : i + step] == b[i : i + step]:
        i += step
    while i < n and a[i] == b[i]:
        i += 1
    return i


def common_suffix(a: list[str], b: list[str], limit: int) -> int:
    """How many trailing items ``a`` and ``b`` share, at most ``limit``."""
    la, lb = len(a), len(b)
    i = 0
    step = 1024
    while i + step <= limit and a[la - i - step : la - i] == b[lb - i - step : lb - i]:
        i += step
    while i < limit and a[la - 1 - i] == b[lb - 1 - i]:
        i += 1
    return i


def changed_middle(old: list[str], new: list[str]) -> tuple[int, list[str], list[str]]:
    """``(prefix, old_middle, new_middle)``: the lines between the common head and tail.

    ``prefix`` is how many leading lines both share, so ``new_middle[k]`` is line
    ``prefix + k + 1`` of ``new``.
    """
    pre = common_prefix(old, new)
    suf = common_suffix(old, new, min(len(old), len(new)) - pre)
    return pre, old[pre : len(old) - suf], new[pre : len(new) - suf]


_CHUNK = 1 << 15


def common_prefix_chars(a: str, b: str) -> int:
    """Length of the longest common prefix of two strings (compared in C-level chunks)."""
    n = min(len(a), len(b))
    i = 0
    while i < n:
        j = min(i + _CHUNK, n)
        if b.startswith(a[i:j], i):
            i = j
            continue
        lo, hi = i, j  # a[:lo] == b[:lo]; the first difference is before hi
        while hi - lo > 32:
            mid = (lo + hi) // 2
            if b.startswith(a[lo:mid], lo):
                lo = mid
            else:
                hi = mid
        while lo < hi and a[lo] == b[lo]:
            lo += 1
        return lo
    return n


def common_suffix_chars(a: str, b: str, limit: int) -> int:
    """Length of the longest common suffix of two strings, at most ``limit``."""
    la, lb = len(a), len(b)
    i = 0
    while i < limit:
        j = min(i + _CHUNK, limit)
        if b.endswith(a[la - j : la - i], 0, lb - i):
            i = j
            continue
        lo, hi = i, j
        while hi - lo > 32:
            mid = (lo + hi) // 2
            if b.endswith(a[la - mid : la - lo], 0, lb - lo):
                lo = mid
            else:
                hi = mid
        while lo < hi and a[la - 1 - lo] == b[lb - 1 - lo]:
            lo += 1
        return lo
    return limit


def changed_lines(old: str, new: str) -> tuple[int, list[str], list[str]]:
    """:func:`changed_middle` of two view texts, without splitting their unchanged parts.

    The common head and tail are found character by character; only the lines between
    them are split. ``prefix`` is how many leading lines both share.
    """
    if old == new:
        return count_lines(old), [], []
    p = common_prefix_chars(old, new)
    s = common_suffix_chars(old, new, min(len(old), len(new)) - p)
    start = old.rfind("\n", 0, p) + 1  # every line before ``start`` is in both
    head = old.count("\n", 0, start)
    cut_old, cut_new = len(old), len(new)
    nl = old.find("\n", len(old) - s)
    if s and nl >= 0:  # every line after that newline is in both
        cut_old = nl + 1
        cut_new = cut_old + len(new) - len(old)
    pre, old_mid, new_mid = changed_middle(
        split_lines(old[start:cut_old]), split_lines(new[start:cut_new])
    )
    return head + pre, old_mid, new_mid

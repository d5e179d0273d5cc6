"""Taking back one earlier change of a text while keeping what came after it.

A change turned ``before`` into ``after``; the text is now ``current`` (later changes, the
user's typing). Taking the change back is a three-way merge with ``after`` as the base:
the change's hunks, reversed (``after`` → ``before``), are applied to ``current`` where
the later work (``after`` → ``current``) left their lines alone. Where a hunk and later
work touch the same lines, nothing is merged: the answer is the lines of ``current``
that are in the way. Lines are compared whole, with their ending (all texts are views:
LF line endings only).

Two hunks are in each other's way when they replace overlapping lines of ``after``, when
both insert at the same place (which goes first is not known), or when one inserts
inside the lines the other replaces. A hunk that ends where the other starts is not in
its way: both are kept, in the order of their places.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from steadyhand.text.diff import line_opcodes
from steadyhand.text.splices import Splice, apply_splices

_LINE = re.compile(r"[^\n]*\n|[^\n]+")


@dataclass(frozen=True, slots=True)
class Reverted:
    """``current`` with the change taken back."""

    text: str
    #: The same as ordered, non-overlapping splices of ``current`` (view offsets).
    splices: tuple[Splice, ...]


@dataclass(frozen=True, slots=True)
class Conflict:
    """Later work touched lines the change touched: nothing was merged."""

    #: The lines of ``current`` in the way, as 1-based inclusive ``(first, last)`` ranges,
    #: in order and apart. Lines a later change deleted are named by the line where they
    #: were (the line after them, or the last line).
    lines: tuple[tuple[int, int], ...]


@dataclass(frozen=True, slots=True)
class _Hunk:
    #: Lines ``[start, end)`` of the base text are replaced by ``lines``.
    start: int
    end: int
    lines: tuple[str, ...]


def split_keep_ends(view: str) -> list[str]:
    """The lines of a view text, each with its LF (the last one may have none)."""
    return _LINE.findall(view)


def _hunks(base: list[str], other: list[str]) -> list[_Hunk]:
    """What turns ``base`` into ``other``, as ordered hunks with untouched lines between."""
    out: list[_Hunk] = []
    for tag, i1, i2, j1, j2 in line_opcodes(base, other):
        if tag == "equal":
            continue
        if out and out[-1].end == i1:  # never two hunks back to back: one hunk
            last = out.pop()
            out.append(_Hunk(last.start, i2, last.lines + tuple(other[j1:j2])))
            continue
        out.append(_Hunk(i1, i2, tuple(other[j1:j2])))
    return out


def in_the_way(a: tuple[int, int], b: tuple[int, int]) -> bool:
    """Whether two hunks on lines ``[start, end)`` of the same base are in each other's
    way (see the module docstring)."""
    (s1, e1), (s2, e2) = a, b
    if s1 == e1 and s2 == e2:
        return s1 == s2
    if s1 == e1:
        return s2 < s1 < e2
    if s2 == e2:
        return s1 < s2 < e1
    return s1 < e2 and s2 < e1


def _run_together(a: _Hunk, b: _Hunk, n: int) -> bool:
    """Whether one hunk ends the text without a line break and the other adds lines after
    it: merged, its last line and their first would become one line."""
    first, second = (a, b) if a.start < b.start else (b, a)
    return (
        first.end == n
        and second.start == second.end == n
        and bool(first.lines)
        and not first.lines[-1].endswith("\n")
        and bool(second.lines)
    )


def revert(before: str, after: str, current: str) -> Reverted | Conflict:
    """Take back the change ``before`` → ``after`` from ``current`` (see the module
    docstring): the merged text, or the lines of ``current`` in the way."""
    base = split_keep_ends(after)
    ours = _hunks(base, split_keep_ends(before))
    cur = split_keep_ends(current)
    theirs = _hunks(base, cur)
    # Where each later hunk sits in ``current``: its first line there.
    at: list[int] = []
    shift = 0
    for t in theirs:
        at.append(t.start + shift)
        shift += len(t.lines) - (t.end - t.start)

    clashes: list[tuple[int, int]] = []
    j = 0
    for o in ours:
        # later hunks wholly before this one cannot be in its way, nor in the next ones'
        while j < len(theirs) and theirs[j].end < o.start:
            j += 1
        k = j
        while k < len(theirs) and theirs[k].start <= o.end:
            t = theirs[k]
            if in_the_way((o.start, o.end), (t.start, t.end)) or _run_together(o, t, len(base)):
                clashes.append(_named_lines(at[k], len(t.lines), len(cur)))
            k += 1
    if clashes:
        return Conflict(_joined(clashes))

    # Offsets of the lines of ``current``.
    offsets = [0]
    for line in cur:
        offsets.append(offsets[-1] + len(line))
    splices: list[Splice] = []
    j = 0
    shift = 0
    for o in ours:
        # later hunks that end where this one starts or earlier come first (one that
        # inserts where this one inserts too was in its way)
        while j < len(theirs) and theirs[j].end <= o.start:
            t = theirs[j]
            shift += len(t.lines) - (t.end - t.start)
            j += 1
        first, last = o.start + shift, o.end + shift
        splices.append(Splice(offsets[first], offsets[last], "".join(o.lines)))
    return Reverted(apply_splices(current, splices), tuple(splices))


def _named_lines(first: int, count: int, total: int) -> tuple[int, int]:
    """The 1-based lines of ``current`` a later hunk occupies (0-based ``first``)."""
    if count:
        return first + 1, first + count
    line = min(first + 1, total) or 1
    return line, line


def _joined(ranges: list[tuple[int, int]]) -> tuple[tuple[int, int], ...]:
    out: list[tuple[int, int]] = []
    for lo, hi in sorted(ranges):
        if out and lo <= out[-1][1] + 1:
            out[-1] = (out[-1][0], max(out[-1][1], hi))
        else:
            out.append((lo, hi))
    return tuple(out)


def describe_lines(ranges: tuple[tuple[int, int], ...]) -> str:
    """``"line 4"``, ``"lines 4-6 and 9"``: ranges as a reader names them."""
    parts = [str(lo) if lo == hi else f"{lo}-{hi}" for lo, hi in ranges]
    word = "line" if len(ranges) == 1 and ranges[0][0] == ranges[0][1] else "lines"
    if len(parts) > 1:
        return f"{word} {', '.join(parts[:-1])} and {parts[-1]}"
    return f"{word} {parts[0]}" if parts else "no line"

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
from collections import Counter
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
    #: How many of the change's hunks ``current`` had taken back already (the lines
    #: there were the lines from before the change): they are left as they are.
    already: int = 0


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
    #: Where ``lines`` start in the other text.
    at: int = 0


def split_keep_ends(view: str) -> list[str]:
    """The lines of a view text, each with its LF (the last one may have none)."""
    return _LINE.findall(view)


def _hunks(base: list[str], other: list[str]) -> list[_Hunk]:
    """What turns ``base`` into ``other``, as ordered hunks with untouched lines between."""
    return _hunks_of(line_opcodes(base, other), other)


def _hunks_of(codes: list[tuple[str, int, int, int, int]], other: list[str]) -> list[_Hunk]:
    out: list[_Hunk] = []
    for tag, i1, i2, j1, j2 in codes:
        if tag == "equal":
            continue
        if out and out[-1].end == i1:  # never two hunks back to back: one hunk
            last = out.pop()
            out.append(_Hunk(last.start, i2, last.lines + tuple(other[j1:j2]), last.at))
            continue
        out.append(_Hunk(i1, i2, tuple(other[j1:j2]), j1))
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


def _made(
    base: list[str], hunks: list[_Hunk], lo: int, hi: int
) -> tuple[list[str], list[tuple[int, int]]]:
    """Lines ``[lo, hi)`` of ``base`` with ``hunks`` (all inside them, in order) made,
    and where each hunk's lines are in the result."""
    out: list[str] = []
    spans: list[tuple[int, int]] = []
    pos = lo
    for h in hunks:
        out += base[pos : h.start]
        spans.append((len(out), len(out) + len(h.lines)))
        out += h.lines
        pos = h.end
    out += base[pos:hi]
    return out, spans


def _taken_away(base: list[str], hunks: list[_Hunk]) -> list[str]:
    """The lines these hunks take away (lines of the base they do not put back)."""
    out: list[str] = []
    for h in hunks:
        out += list((Counter(base[h.start : h.end]) - Counter(h.lines)).elements())
    return out


def _holds(ours: list[str], spans: list[tuple[int, int]], theirs: list[str]) -> bool:
    """Whether ``theirs`` (a stretch of the file as it is now) holds the lines of every
    hunk taken back, as ``ours`` (the same stretch with them taken back) places them:
    what changed between the two leaves those lines alone, and, for a hunk that only
    takes lines away, the lines on either side of where they were (their absence there
    is the only sign the file was taken back)."""
    for tag, i1, i2, _, _ in line_opcodes(ours, theirs):
        if tag == "equal":
            continue
        for a, b in spans:
            if a < b and i1 < b and a < i2:  # it replaced or removed lines of the hunk
                return False
            if a == b and i1 <= a <= i2:  # lines at or beside the place lines went from
                return False
    return True


@dataclass(frozen=True, slots=True)
class _Plan:
    #: The change's hunks to take back, each with the first line of ``current`` it
    #: replaces (the lines it replaces are as many as the base lines it covers).
    take: tuple[tuple[_Hunk, int], ...]
    already: int


def _merge(base: list[str], ours: list[_Hunk], theirs: list[_Hunk], n_cur: int) -> _Plan | Conflict:
    """Set the change's hunks taken back (``ours``: base → before) against the later
    work (``theirs``: base → current). Hunks in each other's way form groups; a group
    where the later work left exactly what taking the change back would leave is taken
    back already; any other group is a conflict."""
    # Where each later hunk sits in ``current``: its first line there.
    at: list[int] = []
    shift = 0
    for t in theirs:
        at.append(t.start + shift)
        shift += len(t.lines) - (t.end - t.start)

    # For each hunk of ours, the later hunks in its way (a run of them, in order).
    clashing: list[list[int]] = []
    j = 0
    for o in ours:
        # later hunks wholly before this one cannot be in its way, nor in the next ones'
        while j < len(theirs) and theirs[j].end < o.start:
            j += 1
        k = j
        mine: list[int] = []
        while k < len(theirs) and theirs[k].start <= o.end:
            t = theirs[k]
            if in_the_way((o.start, o.end), (t.start, t.end)) or _run_together(o, t, len(base)):
                mine.append(k)
            k += 1
        clashing.append(mine)

    # Groups: hunks of ours that share a later hunk go together, with all their later
    # hunks (both runs are in order, so a group is a run of each).
    groups: list[tuple[list[int], list[int]]] = []
    for i, mine in enumerate(clashing):
        if not mine:
            continue
        if groups and groups[-1][1][-1] >= mine[0]:
            g_ours, g_theirs = groups[-1]
            g_ours.append(i)
            g_theirs += [k for k in mine if k > g_theirs[-1]]
        else:
            groups.append(([i], list(mine)))

    # Where the later work wrote each line (not blank) it wrote.
    written: dict[str, list[int]] = {}
    for k, t in enumerate(theirs):
        for line in t.lines:
            if line.strip():
                written.setdefault(line, []).append(k)

    clashes: list[tuple[int, int]] = []
    done: set[int] = set()
    for g_ours, g_theirs in groups:
        os_ = [ours[i] for i in g_ours]
        ts = [theirs[k] for k in g_theirs]
        lo = min(os_[0].start, ts[0].start)
        hi = max(os_[-1].end, ts[-1].end)
        back, spans = _made(base, os_, lo, hi)
        if _holds(back, spans, _made(base, ts, lo, hi)[0]):
            # The later work took these back already, unless it wrote a line they would
            # take away somewhere else: it may have moved it, and it is still there.
            moved = {k for line in _taken_away(base, os_) for k in written.get(line, ())}
            if not moved:
                done.update(g_ours)
                continue
            g_theirs = sorted(set(g_theirs) | moved)
        clashes += [_named_lines(at[k], len(theirs[k].lines), n_cur) for k in g_theirs]
    if clashes:
        return Conflict(_joined(clashes))

    take: list[tuple[_Hunk, int]] = []
    j = 0
    shift = 0
    for i, o in enumerate(ours):
        # later hunks that end where this one starts or earlier come first (one that
        # inserts where this one inserts too was in its way)
        while j < len(theirs) and theirs[j].end <= o.start:
            t = theirs[j]
            shift += len(t.lines) - (t.end - t.start)
            j += 1
        if i not in done:
            take.append((o, o.start + shift))
    return _Plan(tuple(take), len(done))


def revert(before: str, after: str, current: str) -> Reverted | Conflict:
    """Take back the change ``before`` → ``after`` from ``current`` (see the module
    docstring): the merged text, or the lines of ``current`` in the way."""
    base = split_keep_ends(after)
    cur = split_keep_ends(current)
    plan = _merge(base, _hunks(base, split_keep_ends(before)), _hunks(base, cur), len(cur))
    if isinstance(plan, Conflict):
        return plan
    # Offsets of the lines of ``current``.
    offsets = [0]
    for line in cur:
        offsets.append(offsets[-1] + len(line))
    splices = tuple(
        Splice(offsets[first], offsets[first + o.end - o.start], "".join(o.lines))
        for o, first in plan.take
    )
    return Reverted(apply_splices(current, splices), splices, plan.already)


# -- line endings --------------------------------------------------------------------

_RAW_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+")


def _raw_lines(raw: str) -> tuple[list[str], list[str]]:
    """The lines of a raw text as view lines (LF endings) and, apart, their own endings
    (``"\r\n"``, ``"\r"``, ``"\n"``, or ``""`` for a last line without one)."""
    views: list[str] = []
    ends: list[str] = []
    for line in _RAW_LINE.findall(raw):
        if line.endswith("\r\n"):
            content, end = line[:-2], "\r\n"
        elif line.endswith(("\r", "\n")):
            content, end = line[:-1], line[-1]
        else:
            content, end = line, ""
        views.append(content + "\n" if end else content)
        ends.append(end)
    return views, ends


def _uniform(ends: list[str]) -> str | None:
    """The one line ending all these lines have (a last line without one aside)."""
    kinds = {e for e in ends if e}
    return kinds.pop() if len(kinds) == 1 else None


def _equal_map(codes: list[tuple[str, int, int, int, int]], n: int) -> list[int | None]:
    """For each of ``n`` lines of the first text, its line in the second where the
    opcodes leave it alone."""
    out: list[int | None] = [None] * n
    for tag, i1, i2, j1, _ in codes:
        if tag == "equal":
            for d in range(i2 - i1):
                out[i1 + d] = j1 + d
    return out


@dataclass(frozen=True, slots=True)
class RawReverted:
    """``current`` (a raw text) with a change taken back, line endings included."""

    #: The new raw text.
    raw: str
    #: The content part, on the view of ``current``: its text and splices.
    view: Reverted
    #: Lines whose ending the change switched and that got their ending back.
    endings_back: int
    #: Lines whose ending the change switched but that hold another one now (changed
    #: since): they keep it.
    endings_kept: int


def revert_raw(before: str, after: str, current: str) -> RawReverted | Conflict:
    """:func:`revert` on raw texts: lines are compared by their view (LF endings), and
    a line's ending, a change too, is taken back where nothing changed it since.

    For each line of the result: a line the merge brings back from ``before`` has its
    ending there (unless the later work switched the endings of lines it kept, when it
    takes the file's main one now); a line all three texts hold takes ``before``'s
    ending if ``current`` still has ``after``'s, else keeps its own; a line the later
    work wrote keeps its ending, except that when the change switched every line of the
    file from one ending to another, one written in the switched-to ending follows the
    file back.
    """
    b_lines, b_ends = _raw_lines(before)
    a_lines, a_ends = _raw_lines(after)
    c_lines, c_ends = _raw_lines(current)
    ours_codes = line_opcodes(a_lines, b_lines)
    theirs_codes = line_opcodes(a_lines, c_lines)
    plan = _merge(
        a_lines, _hunks_of(ours_codes, b_lines), _hunks_of(theirs_codes, c_lines), len(c_lines)
    )
    if isinstance(plan, Conflict):
        return plan
    a_to_b = _equal_map(ours_codes, len(a_lines))
    c_to_a: list[int | None] = [None] * len(c_lines)
    for a_line, c_line in enumerate(_equal_map(theirs_codes, len(a_lines))):
        if c_line is not None:
            c_to_a[c_line] = a_line
    switched_from, switched_to = _uniform(b_ends), _uniform(a_ends)
    whole_switch = switched_from is not None and switched_to not in (None, switched_from)
    later_switched = any(
        a_line is not None and c_ends[c_line] != a_ends[a_line]
        for c_line, a_line in enumerate(c_to_a)
    )
    main_now = _main(c_ends)

    out: list[str] = []
    views: list[str] = []
    back = kept = 0
    k = 0
    for o, first in [*plan.take, (None, len(c_lines))]:
        for kk in range(k, first):
            i = c_to_a[kk]
            j = a_to_b[i] if i is not None else None
            end = c_ends[kk]
            if i is not None and j is not None and b_ends[j] != a_ends[i]:
                if end == a_ends[i]:
                    end = b_ends[j]
                    back += 1
                elif end != b_ends[j]:
                    kept += 1
            elif i is None and whole_switch and end == switched_to:
                assert switched_from is not None
                end = switched_from
            out.append(c_lines[kk].removesuffix("\n") + end)
            views.append(c_lines[kk])
        if o is None:
            break
        for d, line in enumerate(o.lines):
            end = b_ends[o.at + d]
            if later_switched and end:
                end = main_now
            out.append(line.removesuffix("\n") + end)
            views.append(line)
        k = first + o.end - o.start
    view_text = "".join(views)
    offsets = [0]
    for line in c_lines:
        offsets.append(offsets[-1] + len(line))
    splices = tuple(
        Splice(offsets[first], offsets[first + o.end - o.start], "".join(o.lines))
        for o, first in plan.take
    )
    return RawReverted("".join(out), Reverted(view_text, splices, plan.already), back, kept)


def _main(ends: list[str]) -> str:
    """The line ending most lines have (LF when none has one)."""
    counts = {e: ends.count(e) for e in ("\n", "\r\n", "\r")}
    best = max(counts, key=lambda e: counts[e])
    return best if counts[best] else "\n"


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

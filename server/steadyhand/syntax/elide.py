"""What can be left out of a text when checking the syntax around a small change.

Parsing a file of 10,000 lines takes tens of milliseconds, and even reparsing it after a
one-line change walks every sibling of the changed statement. Most of that text has
nothing to do with the change: a list of 2,000 functions is still a list of functions
without the 1,994 that lie far from it. :func:`removals` picks, from the old text's tree,
runs of siblings far from every edit whose removal leaves text of the same shape (the
kept sibling after a run is of the same kind as the first one removed, so separators
such as commas stay paired), never a node's first or last child (its brackets, a
``class`` header, a start tag). What is left, with the edits applied, is the text the
change is checked on first: when it parses without an error, so does the file.

Only the shape of the tree is used (``child_count``, ``child(i)``, byte offsets, and
whether a node is named), so fakes stand in for tree-sitter nodes in tests.
"""

from __future__ import annotations

import bisect
import itertools
from collections.abc import Sequence
from typing import Protocol

#: Siblings are left out only under a node with at least this many children.
MIN_CHILDREN = 8
#: Siblings kept before and after the ones an edit touches (by default; the caller may
#: ask for more where siblings depend on each other, as in YAML). The one after is where
#: a bracket left open or a block left unclosed is found: kept, the error is placed
#: where the whole text would place it. The one before is what a clause an edit writes
#: may belong to: an `else:` put after an `if` block goes on the `if` statement before
#: it, and parses only with it.
MARGIN = (1, 1)
#: Siblings kept at each end of a node no edit touches.
ENDS = 2
#: Nodes smaller than this (bytes) are kept whole.
SMALL = 512
#: How far a run of siblings is shrunk to find ends of the same kind.
SHRINK = 4
#: What opens a file and decides how the rest reads: always kept.
HEADERS = frozenset({"package_clause", "package_declaration"})
#: A node with at least this many children, touched by at least :data:`MANY_SPANS`
#: edits (a write's), has its children read once into a list (:class:`Listed`).
MANY_CHILDREN = 64
MANY_SPANS = 8


class NodeLike(Protocol):
    @property
    def child_count(self) -> int: ...
    @property
    def start_byte(self) -> int: ...
    @property
    def end_byte(self) -> int: ...
    @property
    def is_named(self) -> bool: ...
    @property
    def type(self) -> str: ...
    def child(self, index: int, /) -> NodeLike | None: ...


class Listed:
    """A node whose children are read once into lists, so that each look at one is a
    list lookup rather than a call into the tree (a write's edits look at the children
    of a large node hundreds of times)."""

    __slots__ = ("child_count", "end_byte", "ends", "is_named", "kids", "start_byte", "type")

    def __init__(self, node: NodeLike) -> None:
        kids: list[NodeLike | None] | None = getattr(node, "children", None)
        if kids is None:
            kids = [node.child(i) for i in range(node.child_count)]
        self.kids = kids
        self.ends = [k.end_byte if k is not None else 0 for k in kids]
        self.child_count = len(kids)
        self.start_byte, self.end_byte = node.start_byte, node.end_byte
        self.is_named, self.type = node.is_named, node.type

    def child(self, index: int, /) -> NodeLike | None:
        return self.kids[index] if 0 <= index < self.child_count else None


def first_child_ending_after(node: NodeLike, pos: int, lo: int = 0) -> int:
    """The index of the first child of ``node`` that ends after ``pos`` (child_count if
    none), known to be ``lo`` or later: a binary search over the children, which are in
    order."""
    if isinstance(node, Listed):
        return bisect.bisect_right(node.ends, pos, lo)
    hi = node.child_count
    while lo < hi:
        mid = (lo + hi) // 2
        c = node.child(mid)
        if c is not None and c.end_byte > pos:
            hi = mid
        else:
            lo = mid + 1
    return lo


def _kind(node: NodeLike | None) -> str:
    if node is None:
        return ""
    return "*" if node.is_named else node.type


def _run_ok(node: NodeLike, a: int, b: int, touched: set[int]) -> bool:
    """Whether children ``a..b`` can go: what follows them is of the kind that came first
    in the run, or what precedes them of the kind that came last; that sibling being one
    no edit touches (an edit may take it away, or turn it into another kind)."""
    return (b + 1 not in touched and _kind(node.child(a)) == _kind(node.child(b + 1))) or (
        a - 1 not in touched and _kind(node.child(a - 1)) == _kind(node.child(b))
    )


def _fit(node: NodeLike, a: int, b: int, touched: set[int]) -> tuple[int, int] | None:
    """The largest run within ``a..b`` (shrunk by at most :data:`SHRINK` on each side)
    that can go, or None."""
    for da in range(SHRINK + 1):
        for db in range(SHRINK + 1):
            lo, hi = a + da, b - db
            if lo > hi:
                break
            if _run_ok(node, lo, hi, touched):
                return lo, hi
    return None


def _head(
    node: NodeLike,
    b: int,
    spans: list[tuple[int, int]],
    out: list[tuple[int, int]],
    touched: set[int],
) -> None:
    """Leave out children ``0..b`` (fewer, if need be): what then starts the text is of
    the kind that started it (and is no sibling an edit touches)."""
    for hi in range(b, max(-1, b - SHRINK - 1), -1):
        last, after = node.child(hi), node.child(hi + 1)
        if hi + 1 in touched:
            continue
        if last is not None and after is not None and _kind(node.child(0)) == _kind(after):
            start, end = node.start_byte, after.start_byte
            # (the spans are ordered: the first starts soonest)
            if spans and spans[0][0] < end:
                end = last.end_byte  # an edit in the space before ``after``: keep it
            if not (spans and spans[0][0] < end) and start < end:
                out.append((start, end))
            return


def _tail(
    node: NodeLike,
    a: int,
    spans: list[tuple[int, int]],
    out: list[tuple[int, int]],
    touched: set[int],
) -> None:
    """Leave out children ``a..`` to the last one (fewer, if need be): what then ends the
    text is of the kind that ended it (and is no sibling an edit touches)."""
    n = node.child_count
    for lo in range(a, min(n, a + SHRINK + 1)):
        before, first, last = node.child(lo - 1), node.child(lo), node.child(n - 1)
        if before is None or first is None or last is None:
            return
        if lo - 1 in touched:
            continue
        if _kind(before) == _kind(last):
            start, end = before.end_byte, last.end_byte
            # (the spans are ordered and apart: the last ends latest)
            if spans and spans[-1][1] > start:
                start = first.start_byte  # an edit in the space after ``before``: keep it
            if not (spans and spans[-1][1] > start) and start < end:
                out.append((start, end))
            return


def removals(
    root: NodeLike, spans: Sequence[tuple[int, int]], margin: tuple[int, int] = MARGIN
) -> list[tuple[int, int]]:
    """Byte ranges of the old text that can be left out when checking a change at
    ``spans`` (ordered, non-overlapping ``(start, end)`` of the old text each edit
    replaces), keeping ``margin`` (before, after) siblings around those an edit touches.
    The ranges are ordered and never touch a span."""
    out: list[tuple[int, int]] = []
    # A stack, not recursion: a tree is as deep as its text nests (a JSON file nested
    # thousands deep), far deeper than Python's call stack.
    todo: list[tuple[NodeLike, list[tuple[int, int]], bool]] = [(root, list(spans), True)]
    while todo:
        node, parts, top = todo.pop()
        todo.extend(_visit(node, parts, out, margin, top=top))
    out.sort()
    return out


def top_removals(
    root: NodeLike, spans: Sequence[tuple[int, int]], margin: tuple[int, int] = MARGIN
) -> list[tuple[int, int]]:
    """Like :func:`removals`, of the top of the text only (its statements, definitions,
    declarations), however small the text and however few they are: what can be left
    out to judge a change apart from what lies far from it, where :func:`removals`
    leaves nothing out because the text is too small for that to pay."""
    out: list[tuple[int, int]] = []
    _visit(root, list(spans), out, margin, 0, 2, top=True)
    out.sort()
    return out


def _visit(
    node: NodeLike,
    spans: list[tuple[int, int]],
    out: list[tuple[int, int]],
    margin: tuple[int, int],
    small: int = SMALL,
    min_children: int = MIN_CHILDREN,
    *,
    top: bool = False,
) -> list[tuple[NodeLike, list[tuple[int, int]], bool]]:
    """Add to ``out`` what can go among the children of ``node``; the kept children to
    look into next, each with the part of every edit that lies in it."""
    n = node.child_count
    if n == 0 or node.end_byte - node.start_byte < small:
        return []
    if n >= MANY_CHILDREN and len(spans) >= MANY_SPANS and not isinstance(node, Listed):
        node = Listed(node)
    # the children each span touches (an insertion between two touches both); the spans
    # are in order, so each search starts where the one before found its first child
    touched: list[tuple[int, int, tuple[int, int]]] = []
    i = 0
    for s, e in spans:
        i = first_child_ending_after(node, s - 1 if s > 0 else 0, i)
        reach = max(s, e - 1)
        kid = node.child(i) if i < n else None
        j = (
            i
            if kid is not None and kid.end_byte > reach
            else first_child_ending_after(node, reach, i)
        )
        touched.append((min(i, n - 1), min(j, n - 1), (s, e)))
    # A node's first and last children are kept (brackets, a header, a start tag); at the
    # top of the text, statements and declarations may go like any others, except a
    # package clause, which decides how what follows it reads.
    first_kid, last_kid = node.child(0), node.child(n - 1)
    keep: set[int] = set()
    if not (top and first_kid is not None and first_kid.is_named) or (
        first_kid is not None and first_kid.type in HEADERS
    ):
        keep.add(0)
    if not (top and last_kid is not None and last_kid.is_named):
        keep.add(n - 1)
    if touched:
        for i, j, _ in touched:
            keep.update(range(max(0, i - margin[0]), min(n, j + margin[1] + 1)))
    else:
        keep.update(range(min(n, ENDS)))
        keep.update(range(max(0, n - ENDS), n))
    if n >= min_children:
        starts = [s for s, _ in spans]
        ordered = sorted(keep)
        hit = {k for i, j, _ in touched for k in range(i, j + 1)}
        if ordered and ordered[0] > 0:
            _head(node, ordered[0] - 1, spans, out, hit)
        if ordered and ordered[-1] < n - 1:
            _tail(node, ordered[-1] + 1, spans, out, hit)
        for prev, nxt in itertools.pairwise(ordered):
            a, b = prev + 1, nxt - 1  # a run of children no edit needs
            if a > b:
                continue
            run = _fit(node, a, b, hit)
            if run is not None:
                lo, hi = run
                first, last, after = node.child(lo), node.child(hi), node.child(hi + 1)
                if first is None or last is None or after is None:
                    continue
                start, end = first.start_byte, after.start_byte
                at = bisect.bisect_left(starts, start)
                if at < len(starts) and starts[at] < end:
                    end = last.end_byte  # an edit in the space before ``after``: keep it
                if start < end:
                    out.append((start, end))
        kept = sorted(keep)
    else:
        kept = list(range(n))
    # go into the kept children, with the part of each edit that lies in them (every
    # child an edit touches is kept)
    touching: dict[int, list[tuple[int, int]]] = {}
    for i, j, span in touched:
        for k in range(i, j + 1):
            touching.setdefault(k, []).append(span)
    deeper: list[tuple[NodeLike, list[tuple[int, int]], bool]] = []
    for k in kept:
        child = node.child(k)
        if child is None or child.end_byte - child.start_byte < small or child.child_count == 0:
            continue  # (nothing in it would go)
        parts: list[tuple[int, int]] = []
        for s, e in touching.get(k, ()):
            lo = max(s, child.start_byte)
            parts.append((lo, max(lo, min(e, child.end_byte))))
        deeper.append((child, parts, False))
    return deeper

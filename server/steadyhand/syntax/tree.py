"""Reading tree-sitter trees: their errors as :class:`Issue`\\ s, and positions as points.

Every offset is a byte offset into ``data``, the UTF-8 form of the text the tree was
parsed from; lines and columns come out 1-based, columns counted in characters.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from tree_sitter import Node

from steadyhand.syntax.issues import (
    Issue,
    Leaf,
    context_of,
    error_message,
    excerpt,
    missing_message,
)

#: Errors read from one tree at most; past that the list is marked incomplete.
MAX_ISSUES = 500
#: Tokens of one error region looked at for its message.
MAX_LEAVES = 200
#: Offsets at most this many bytes after the one before: its line is counted on from
#: there (else it is found from the tree, near it).
NEAR = 1 << 14

Buffer = bytes | bytearray


def issues(
    root: Node, data: Buffer, ranges: Sequence[tuple[int, int]] | None = None
) -> tuple[list[Issue], bool]:
    """The errors of the tree under ``root`` (only those overlapping ``ranges`` when
    given), in text order, and whether that is all of them (at most :data:`MAX_ISSUES`)."""
    out: list[Issue] = []
    if not root.has_error:
        return out, True
    stack = [root] if _overlaps(root, ranges) else []
    while stack:
        node = stack.pop()
        if node.is_missing:
            out.append(_missing(node, data))
        elif node.is_error:
            out.append(_error(node, data))
        else:
            kids = [
                c for c in node.children if (c.has_error or c.is_missing) and _overlaps(c, ranges)
            ]
            stack.extend(reversed(kids))
            continue
        if len(out) >= MAX_ISSUES:
            return out, False
    return out, True


def _overlaps(node: Node, ranges: Sequence[tuple[int, int]] | None) -> bool:
    if ranges is None:
        return True
    s, e = node.start_byte, node.end_byte
    return any(a <= e and s <= b for a, b in ranges)


_OPENER = {")": "(", "]": "[", "}": "{"}


def _missing(node: Node, data: Buffer) -> Issue:
    pos = node.start_byte
    row, col = node.start_point
    issue = issue_at(pos, pos, row, col, missing_message(node.type, node.is_named), data)
    opener = _opener_of(node)
    if opener is None:
        return issue
    # found where the text ran out: say which bracket it would have closed
    return dataclasses.replace(
        issue,
        opener=opener.type,
        opener_at=opener.start_byte,
        opener_line=opener.start_point[0] + 1,
    )


def _opener_of(node: Node) -> Node | None:
    """The bracket a missing closing bracket would have closed: the last one of its
    kind before it among its siblings."""
    kind = _OPENER.get(node.type)
    parent = node.parent
    if kind is None or parent is None:
        return None
    found = None
    for child in parent.children:
        if child.start_byte >= node.start_byte and child != node:
            break
        if child.type == kind and not child.is_named:
            found = child
    return found


def _error(node: Node, data: Buffer) -> Issue:
    leaves: list[Leaf] = []
    stack = [node]
    while stack and len(leaves) < MAX_LEAVES:
        n = stack.pop()
        if n.child_count == 0:
            text = bytes(data[n.start_byte : n.end_byte]).decode("utf-8", "replace")
            leaves.append(Leaf(n.type, n.is_named, text, n.start_byte))
        else:
            stack.extend(reversed(n.children))
    first = bytes(data[node.start_byte : min(node.end_byte, node.start_byte + 400)])
    message, at = error_message(leaves, first.decode("utf-8", "replace"))
    if at is None:
        pos = node.start_byte
        row, col = node.start_point
    else:
        pos = at
        row = node.start_point[0] + data.count(b"\n", node.start_byte, pos)
        col = pos - (data.rfind(b"\n", 0, pos) + 1)
    return issue_at(pos, node.end_byte, row, col, message, data, span_start=node.start_byte)


def issue_at(
    start: int,
    end: int,
    row: int,
    col: int,
    message: str,
    data: Buffer,
    *,
    span_start: int = -1,
) -> Issue:
    """An error reported at ``start`` (on 0-based ``row``, byte column ``col``) of
    ``data``, in the text from ``span_start`` (default: ``start``) to ``end`` that does
    not parse."""
    line_start = start - col
    if start == len(data) and start > 0 and col == 0 and data[start - 1 : start] == b"\n":
        # at the very end, after the last line break: say so on the last line
        line_start = data.rfind(b"\n", 0, start - 1) + 1
        row -= 1
        start = start - 1
    line_end = data.find(b"\n", start)
    if line_end < 0:
        line_end = len(data)
    line = bytes(data[line_start:line_end]).decode("utf-8", "replace")
    column = len(bytes(data[line_start:start]).decode("utf-8", "replace")) + 1
    return Issue(
        start=start,
        end=max(start, end),
        line=row + 1,
        column=column,
        message=message,
        excerpt=excerpt(line, column),
        context=context_of(line, column),
        span_start=min(span_start, start) if span_start >= 0 else -1,
    )


def point_at(root: Node, data: Buffer, pos: int) -> tuple[int, int]:
    """The (row, byte column) of offset ``pos``: counted from the nearest node boundary
    before it, never from the top of a large text."""
    node = root.descendant_for_byte_range(pos, pos)
    if node is None:
        node = root
    row, ref = node.start_point[0], node.start_byte
    if pos - ref > 4096 and node.child_count:
        from steadyhand.syntax.elide import first_child_ending_after

        i = first_child_ending_after(node, pos)
        if i > 0:
            prev = node.child(i - 1)
            if prev is not None and prev.end_byte <= pos:
                row, ref = prev.end_point[0], prev.end_byte
    if ref > pos:
        row, ref = 0, 0
    row += data.count(b"\n", ref, pos)
    return row, pos - (data.rfind(b"\n", 0, pos) + 1)


def points_at(root: Node, data: Buffer, offsets: Sequence[int]) -> list[tuple[int, int]]:
    """:func:`point_at` of each of ``offsets`` (in order): the lines of one close after
    another counted on from it, so that a change of many lines (a write) counts the
    text between them once, and none far from another from the top."""
    out: list[tuple[int, int]] = []
    prev, row = -1, 0
    for pos in offsets:
        if 0 <= prev <= pos and pos - prev <= NEAR:
            row += data.count(b"\n", prev, pos)
            out.append((row, pos - (data.rfind(b"\n", 0, pos) + 1)))
        else:
            out.append(point_at(root, data, pos))
            row = out[-1][0]
        prev = pos
    return out

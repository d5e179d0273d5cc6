"""Unified diffs and change counts for result messages.

Diffs are built from the lines around the known edit location, never by diffing two
whole large files, so an edit in a 100,000-line file costs what the edit touches.
"""

from __future__ import annotations

import bisect
import difflib
from dataclasses import dataclass

from steadyhand.text.lines import split_lines

CONTEXT = 3


@dataclass(frozen=True, slots=True)
class DiffStat:
    added: int
    removed: int


def unified(old_lines: list[str], new_lines: list[str], *, name: str, first_line: int = 1) -> str:
    """A unified diff of two line lists that start at ``first_line`` of the file."""
    groups = _grouped(_opcodes(old_lines, new_lines), CONTEXT)
    if not groups:
        return ""
    out = [f"--- a/{name}", f"+++ b/{name}"]
    shift = first_line - 1
    for group in groups:
        first, last = group[0], group[-1]
        old_range, new_range = _range(first[1], last[2], shift), _range(first[3], last[4], shift)
        out.append(f"@@ -{old_range} +{new_range} @@")
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                out.extend(" " + line for line in old_lines[i1:i2])
                continue
            if tag != "insert":
                out.extend("-" + line for line in old_lines[i1:i2])
            if tag != "delete":
                out.extend("+" + line for line in new_lines[j1:j2])
    return "\n".join(out) + "\n"


Opcode = tuple[str, int, int, int, int]


def _range(start: int, stop: int, shift: int) -> str:
    # difflib's unified range format: "start,length" (1-based), "start" when length is 1
    begin, length = start + 1 + shift, stop - start
    if length == 1:
        return str(begin)
    return f"{begin - 1 if not length else begin},{length}"


def _blocks(a: list[str], b: list[str]) -> list[tuple[int, int, int]]:
    """Matching blocks ``(i, j, n)``: the common prefix and suffix, lines unique to both
    sides as anchors (in order), and difflib's matcher on the stretches between them."""
    la, lb = len(a), len(b)
    pre = 0
    while pre < la and pre < lb and a[pre] == b[pre]:
        pre += 1
    suf = 0
    while suf < la - pre and suf < lb - pre and a[la - 1 - suf] == b[lb - 1 - suf]:
        suf += 1
    ahi, bhi = la - suf, lb - suf
    blocks: list[tuple[int, int, int]] = [(0, 0, pre)] if pre else []
    if pre < ahi and pre < bhi:
        anchors = _unique_anchors(a, pre, ahi, b, pre, bhi)
        i, j = pre, pre
        for ai, bj in [*anchors, (ahi, bhi)]:
            if i < ai and j < bj:
                sm = difflib.SequenceMatcher(None, a[i:ai], b[j:bj])
                blocks.extend((i + x, j + y, n) for x, y, n in sm.get_matching_blocks() if n)
            if ai < ahi:
                blocks.append((ai, bj, 1))
            i, j = ai + 1, bj + 1
    if suf:
        blocks.append((ahi, bhi, suf))
    merged: list[tuple[int, int, int]] = []
    for i, j, n in blocks:
        if merged and merged[-1][0] + merged[-1][2] == i and merged[-1][1] + merged[-1][2] == j:
            pi, pj, pn = merged[-1]
            merged[-1] = (pi, pj, pn + n)
        else:
            merged.append((i, j, n))
    merged.append((la, lb, 0))
    return merged


def _unique_anchors(
    a: list[str], alo: int, ahi: int, b: list[str], blo: int, bhi: int
) -> list[tuple[int, int]]:
    """Pairs of lines that occur exactly once on each side, longest increasing chain."""
    count: dict[str, int] = {}
    for line in a[alo:ahi]:
        count[line] = count.get(line, 0) + 1
    where: dict[str, int] = {}
    for j in range(blo, bhi):
        line = b[j]
        if count.get(line) == 1:
            where[line] = -1 if line in where else j
    pairs = [(i, where[a[i]]) for i in range(alo, ahi) if where.get(a[i], -1) >= 0]
    # Longest chain increasing in both i and j (patience sorting).
    tails: list[int] = []
    tail_at: list[int] = []
    back: list[int] = []
    for k, (_, j) in enumerate(pairs):
        pos = bisect.bisect_left(tails, j)
        if pos == len(tails):
            tails.append(j)
            tail_at.append(k)
        else:
            tails[pos] = j
            tail_at[pos] = k
        back.append(tail_at[pos - 1] if pos else -1)
    chain: list[tuple[int, int]] = []
    k = tail_at[-1] if tail_at else -1
    while k >= 0:
        chain.append(pairs[k])
        k = back[k]
    chain.reverse()
    return chain


#: Below this many lines (both sides together) difflib's own matcher runs unchanged.
SMALL_DIFF = 400


def _opcodes(a: list[str], b: list[str]) -> list[Opcode]:
    if len(a) + len(b) < SMALL_DIFF:
        return list(difflib.SequenceMatcher(None, a, b).get_opcodes())
    codes: list[Opcode] = []
    i = j = 0
    for ai, bj, n in _blocks(a, b):
        tag = "replace" if i < ai and j < bj else "delete" if i < ai else "insert" if j < bj else ""
        if tag:
            codes.append((tag, i, ai, j, bj))
        i, j = ai + n, bj + n
        if n:
            codes.append(("equal", ai, i, bj, j))
    return codes


def _grouped(codes: list[Opcode], n: int) -> list[list[Opcode]]:
    """Hunks with ``n`` lines of context, as difflib groups them."""
    if not codes:
        codes = [("equal", 0, 1, 0, 1)]
    if codes[0][0] == "equal":
        tag, i1, i2, j1, j2 = codes[0]
        codes[0] = (tag, max(i1, i2 - n), i2, max(j1, j2 - n), j2)
    if codes[-1][0] == "equal":
        tag, i1, i2, j1, j2 = codes[-1]
        codes[-1] = (tag, i1, min(i2, i1 + n), j1, min(j2, j1 + n))
    groups: list[list[Opcode]] = []
    group: list[Opcode] = []
    for tag, i1, i2, j1, j2 in codes:
        if tag == "equal" and i2 - i1 > 2 * n:
            group.append((tag, i1, min(i2, i1 + n), j1, min(j2, j1 + n)))
            groups.append(group)
            group = []
            i1, j1 = max(i1, i2 - n), max(j1, j2 - n)
        group.append((tag, i1, i2, j1, j2))
    if group and not (len(group) == 1 and group[0][0] == "equal"):
        groups.append(group)
    return groups


def stat(diff: str) -> DiffStat:
    added = removed = 0
    for line in diff.split("\n"):
        if line.startswith("+") and not line.startswith("+++"):
            added += 1
        elif line.startswith("-") and not line.startswith("---"):
            removed += 1
    return DiffStat(added, removed)


def region_diff(
    old_view: str,
    new_view: str,
    change_start: int,
    change_end_old: int,
    change_end_new: int,
    *,
    name: str,
) -> str:
    """Diff of a change confined to ``old_view[change_start:change_end_old]``.

    ``new_view`` differs from ``old_view`` only between ``change_start`` and
    ``change_end_new``. Only the lines around that region (plus context) are diffed.
    """
    # Line-aligned window: from CONTEXT lines before the change to CONTEXT lines after.
    start = old_view.rfind("\n", 0, change_start) + 1
    for _ in range(CONTEXT):
        if start == 0:
            break
        start = old_view.rfind("\n", 0, start - 1) + 1
    first_line = old_view.count("\n", 0, start) + 1
    end_old = _forward_lines(old_view, change_end_old, CONTEXT + 1)
    end_new = _forward_lines(new_view, change_end_new, CONTEXT + 1)
    return unified(
        split_lines(old_view[start:end_old]),
        split_lines(new_view[start:end_new]),
        name=name,
        first_line=first_line,
    )


def _forward_lines(text: str, pos: int, n: int) -> int:
    # Position after the end of the line holding ``pos`` and n-1 more lines.
    if pos > 0 and pos <= len(text) and text[pos - 1] == "\n":
        pos -= 1
    for _ in range(n):
        i = text.find("\n", pos)
        if i < 0:
            return len(text)
        pos = i + 1
    return pos


def whole_diff(old_view: str, new_view: str, *, name: str) -> str:
    return unified(split_lines(old_view), split_lines(new_view), name=name)

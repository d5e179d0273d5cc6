"""Unified diffs and change counts for result messages.

Diffs are built from the lines around the known edit location, never by diffing two
whole large files, so an edit in a 100,000-line file costs what the edit touches.
"""

from __future__ import annotations

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
    out: list[str] = []
    for line in difflib.unified_diff(
        old_lines, new_lines, fromfile=f"a/{name}", tofile=f"b/{name}", lineterm="", n=CONTEXT
    ):
        if first_line != 1 and line.startswith("@@"):
            line = _shift_hunk_header(line, first_line - 1)
        out.append(line)
    return "\n".join(out) + ("\n" if out else "")


def _shift_hunk_header(header: str, by: int) -> str:
    # "@@ -a,b +c,d @@" -> add ``by`` to a and c
    parts = header.split(" ")
    for i in (1, 2):
        sign = parts[i][0]
        nums = parts[i][1:].split(",")
        nums[0] = str(int(nums[0]) + by)
        parts[i] = sign + ",".join(nums)
    return " ".join(parts)


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

"""Bounds on what one answer carries: however many places, files, sessions or lines a
result could name, and however long its diff, it names at most so many and says how many
more there are.

Counts stay whole (``matches``, ``added``, ``removed``...); only the lists and the diff
are cut. A list field keeps its name and holds the first :data:`MAX_LISTED` items; a
``<name>_more`` field says how many were left out (only when some were).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar

from steadyhand.text.diff import cut_diff

T = TypeVar("T")

#: The most items a list in one answer holds (places, files, sessions, stretches...).
MAX_LISTED = 100
#: The most items a message names in words.
MAX_NAMED = 20


def listed(items: Sequence[T], most: int = MAX_LISTED) -> tuple[list[T], int]:
    """The first ``most`` of ``items``, and how many were left out."""
    if len(items) <= most:
        return list(items), 0
    return list(items[:most]), len(items) - most


def list_fields(name: str, items: Sequence[T], most: int = MAX_LISTED) -> dict[str, object]:
    """``{name: first items}`` and ``{name_more: count}`` when some were left out."""
    shown, more = listed(items, most)
    fields: dict[str, object] = {name: shown}
    if more:
        fields[f"{name}_more"] = more
    return fields


def named(items: Sequence[str], most: int = MAX_NAMED, *, joiner: str = ", ") -> str:
    """``a, b, c`` for a message: the first ``most`` items and "and N more"."""
    shown, more = listed(items, most)
    text = joiner.join(shown)
    return f"{text}{joiner}and {more:,} more" if more else text


def diff_fields(diff: str, max_bytes: int) -> tuple[dict[str, object], str]:
    """The ``diff`` field of a result (cut to whole hunks within ``max_bytes``, with
    ``diff_cut``: the hunks left out), and a sentence for the message when it was cut."""
    kept, left_out = cut_diff(diff, max_bytes)
    if not left_out:
        return {"diff": diff}, ""
    note = (
        f"(The diff is cut to what fits in one answer: {left_out:,} more hunk(s) are left "
        "out; read the file to see the rest.)"
    )
    return {"diff": kept, "diff_cut": left_out}, note

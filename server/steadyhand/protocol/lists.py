"""Bounds on the lists one answer carries: however many places, files, sessions, cells or
stretches of lines a result (or a refusal) could name, it holds at most so many and says
how many more there are.

Counts stay whole (``matches``, ``added``...); only the lists are cut. A list field keeps
its name and holds the first :data:`MAX_LISTED` items; a ``<name>_more`` field says how
many were left out (only when some were). A message names at most :data:`MAX_NAMED`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar

T = TypeVar("T")

#: The most items a list field of one answer holds.
MAX_LISTED = 100
#: The most items a message names in words.
MAX_NAMED = 20


def listed(items: Sequence[T], most: int = MAX_LISTED) -> tuple[list[T], int]:
    """The first ``most`` of ``items``, and how many were left out."""
    if len(items) <= most:
        return list(items), 0
    return list(items[:most]), len(items) - most


def list_fields(name: str, items: Sequence[T], most: int = MAX_LISTED) -> dict[str, object]:
    """``{name: the first items}``, and ``{name_more: how many more}`` when some were
    left out."""
    shown, more = listed(items, most)
    fields: dict[str, object] = {name: shown}
    if more:
        fields[f"{name}_more"] = more
    return fields


def named(items: Sequence[str], most: int = MAX_NAMED, *, joiner: str = ", ") -> str:
    """``a, b, c`` for a message: the first ``most`` items, then "and N more"."""
    shown, more = listed(items, most)
    text = joiner.join(shown)
    return f"{text}{joiner}and {more:,} more" if more else text

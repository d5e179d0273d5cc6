"""Bounds on the searches matching makes, by input size and by time.

Finding a near-miss and explaining a miss compare the model's text with the file.
Some of those comparisons (difflib's matcher above all) cost the product of the two
lengths, and a file of minified code has lines of tens of kilobytes. So every
comparison here is bounded by size: the common head and tail are cut off first (a
slip is usually one place), and only what is left, if small enough, goes to the
matcher; anything larger is compared coarsely. And every search as a whole runs
against a :class:`Budget`, a deadline it checks as it goes.
"""

from __future__ import annotations

import difflib
import time
from collections import Counter
from collections.abc import Callable, Sequence
from typing import TypeVar

T = TypeVar("T")

Opcode = tuple[str, int, int, int, int]

#: difflib's matcher compares two texts character by character outright only when the
#: product of their lengths (after the common head and tail) is at most this: some
#: 200 × 200 characters, a few milliseconds at most.
CHAR_CELLS = 40_000
#: The same for two lists of lines (lines compare by hash: far cheaper per cell).
LINE_CELLS = 400_000


class OutOfTime(Exception):
    """A search ran past its budget's deadline."""


class Budget:
    """A deadline shared by the steps of one search (None: no deadline)."""

    __slots__ = ("_clock", "deadline")

    def __init__(self, seconds: float | None, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self.deadline = None if seconds is None else clock() + seconds

    def expired(self) -> bool:
        return self.deadline is not None and self._clock() > self.deadline

    def check(self) -> None:
        """Raise :class:`OutOfTime` once the deadline has passed."""
        if self.deadline is not None and self._clock() > self.deadline:
            raise OutOfTime


UNLIMITED = Budget(None)


def common_ends(a: Sequence[T], b: Sequence[T]) -> tuple[int, int]:
    """The length of the common head of ``a`` and ``b``, and of their common tail
    (not overlapping the head)."""
    n = min(len(a), len(b))
    pre = 0
    if isinstance(a, str) and isinstance(b, str):
        # whole blocks at C speed first, then one character at a time
        step = 1024
        while pre + step <= n and a[pre : pre + step] == b[pre : pre + step]:
            pre += step
    while pre < n and a[pre] == b[pre]:
        pre += 1
    suf = 0
    la, lb = len(a), len(b)
    if isinstance(a, str) and isinstance(b, str):
        step = 1024
        while (
            suf + step <= n - pre and a[la - suf - step : la - suf] == b[lb - suf - step : lb - suf]
        ):
            suf += step
    while suf < n - pre and a[la - 1 - suf] == b[lb - 1 - suf]:
        suf += 1
    return pre, suf


def opcodes(a: Sequence[T], b: Sequence[T], cells: int = CHAR_CELLS) -> list[Opcode]:
    """Opcodes (as :meth:`difflib.SequenceMatcher.get_opcodes`) turning ``a`` into
    ``b``, at a cost bounded by ``cells``: the common head and tail are equal, and what
    lies between them goes to difflib's matcher only if the product of its lengths is
    at most ``cells``; otherwise it is one replaced (or deleted, or inserted) stretch."""
    pre, suf = common_ends(a, b)
    ahi, bhi = len(a) - suf, len(b) - suf
    out: list[Opcode] = []
    if pre:
        out.append(("equal", 0, pre, 0, pre))
    am, bm = ahi - pre, bhi - pre
    if am and bm and am * bm <= cells:
        sm = difflib.SequenceMatcher(None, a[pre:ahi], b[pre:bhi], autojunk=False)
        for op, i1, i2, j1, j2 in sm.get_opcodes():
            out.append((op, pre + i1, pre + i2, pre + j1, pre + j2))
    elif am or bm:
        op = "replace" if am and bm else "delete" if am else "insert"
        out.append((op, pre, ahi, pre, bhi))
    if suf:
        out.append(("equal", ahi, len(a), bhi, len(b)))
    return out


def similarity(a: str, b: str, cells: int = CHAR_CELLS) -> float:
    """difflib's ratio of ``a`` and ``b`` (0 to 1), bounded like :func:`opcodes`: on
    long texts, the common head and tail count as matched and the rest is estimated
    from the characters the two have in common (difflib's quick ratio, an upper bound
    of the true one)."""
    total = len(a) + len(b)
    if not total:
        return 1.0
    pre, suf = common_ends(a, b)
    am, bm = a[pre : len(a) - suf], b[pre : len(b) - suf]
    if not am or not bm:
        return 2.0 * (pre + suf) / total
    if len(am) * len(bm) <= cells:
        inner = difflib.SequenceMatcher(None, am, bm, autojunk=False).ratio()
    else:  # the characters the two have in common, counted at C speed
        common = Counter(am) & Counter(bm)
        inner = 2.0 * sum(common.values()) / (len(am) + len(bm))
    inner *= (len(am) + len(bm)) / 2.0
    return 2.0 * (pre + suf + inner) / total

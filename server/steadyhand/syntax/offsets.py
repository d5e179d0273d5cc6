"""Character offsets (how the tools address text) as byte offsets (how trees do). Pure.

For ASCII text the two agree. For other text, :class:`Marks` keeps a known byte offset
every :data:`MARK_EVERY` characters, so an offset is converted by encoding at most that
many characters, wherever in the text it lies, and a change moves the marks after it
instead of counting again from the top.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from dataclasses import dataclass

from steadyhand.syntax.issues import Edit

#: Characters between two marks.
MARK_EVERY = 4096


def encode(text: str) -> bytes:
    return text.encode("utf-8", "surrogatepass")


@dataclass(frozen=True, slots=True)
class Marks:
    """Known (character offset, byte offset) pairs of a text, in order, from (0, 0)."""

    chars: tuple[int, ...]
    bytes: tuple[int, ...]


def build_marks(text: str) -> Marks | None:
    """Marks for ``text``; None for ASCII text, which needs none."""
    if text.isascii():
        return None
    chars = [0]
    offs = [0]
    b = 0
    for c in range(MARK_EVERY, len(text) + 1, MARK_EVERY):
        b += len(encode(text[c - MARK_EVERY : c]))
        chars.append(c)
        offs.append(b)
    return Marks(tuple(chars), tuple(offs))


def byte_offset(text: str, marks: Marks | None, pos: int) -> int:
    """The byte offset of character ``pos`` of ``text`` (``marks``: from
    :func:`build_marks` or :func:`shift_marks`)."""
    if marks is None:
        return pos
    k = bisect.bisect_right(marks.chars, pos) - 1
    c = marks.chars[k]
    return marks.bytes[k] + len(encode(text[c:pos]))


@dataclass(frozen=True, slots=True)
class CharEdit:
    """An edit in characters and in bytes: ``[start, end)`` of the old text (both units)
    became ``length`` characters, ``byte_length`` bytes."""

    start: int
    end: int
    length: int
    byte_start: int
    byte_end: int
    byte_length: int


def shift_marks(marks: Marks | None, edits: Sequence[CharEdit], old_chars: int) -> Marks | None:
    """The marks of the text after ``edits`` (ordered) of a text of ``old_chars``
    characters (``marks`` None: it was ASCII): marks inside an edit are dropped, those
    after it move by what it added or removed, and the ends of each edit are marked."""
    if marks is None:
        if all(e.length == e.byte_length for e in edits):
            return None  # ASCII put into ASCII
        every = tuple(range(0, old_chars + 1, MARK_EVERY))
        marks = Marks(every, every)
    pairs: list[tuple[int, int]] = []
    dc = db = 0
    k = 0
    for c, b in zip(marks.chars, marks.bytes, strict=True):
        while k < len(edits) and edits[k].start < c and edits[k].end <= c:
            e = edits[k]
            pairs.append((e.start + dc, e.byte_start + db))
            dc += e.length - (e.end - e.start)
            db += e.byte_length - (e.byte_end - e.byte_start)
            pairs.append((e.end + dc, e.byte_end + db))
            k += 1
        if k < len(edits) and edits[k].start < c < edits[k].end:
            continue  # inside what the edit replaced
        pairs.append((c + dc, b + db))
    for e in edits[k:]:
        pairs.append((e.start + dc, e.byte_start + db))
        dc += e.length - (e.end - e.start)
        db += e.byte_length - (e.byte_end - e.byte_start)
        pairs.append((e.end + dc, e.byte_end + db))
    pairs = sorted(set(pairs))
    return Marks(tuple(c for c, _ in pairs), tuple(b for _, b in pairs))


def _shared(a: bytes | bytearray, b: bytes | bytearray) -> int:
    """How many leading bytes ``a`` and ``b`` share (slices compared, halving)."""
    n = min(len(a), len(b))
    if a[:n] == b[:n]:
        return n
    lo, hi = 0, n  # a[:lo] == b[:lo]; a[:hi] != b[:hi]
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if a[lo:mid] == b[lo:mid]:
            lo = mid
        else:
            hi = mid
    return lo


def cores(
    data: bytes | bytearray, edits: Sequence[Edit], texts: Sequence[bytes]
) -> tuple[list[Edit], list[bytes]]:
    """``edits`` of ``data`` (putting in ``texts``) without the bytes each leaves as they
    were at either end (never cutting a character in two); an edit that changes nothing
    is left out."""
    out: list[Edit] = []
    mids: list[bytes] = []
    for e, new in zip(edits, texts, strict=True):
        old = data[e.start : e.end]
        if old == new:
            continue
        if not old or not new or (old[0] != new[0] and old[-1] != new[-1]):
            out.append(e)  # (nothing shared at either end)
            mids.append(new)
            continue
        pre = _shared(old, new)
        while pre > 0 and pre < len(old) and (old[pre] & 0xC0) == 0x80:
            pre -= 1
        room = min(len(old), len(new)) - pre
        suf = _shared(old[len(old) - room :][::-1], new[len(new) - room :][::-1]) if room else 0
        while suf > 0 and (old[len(old) - suf] & 0xC0) == 0x80:
            suf -= 1
        mid = new[pre : len(new) - suf]
        out.append(Edit(e.start + pre, e.end - suf, len(mid)))
        mids.append(mid)
    return out, mids


def common_prefix(a: bytes | bytearray, b: bytes | bytearray) -> int:
    """How many leading bytes ``a`` and ``b`` share, never ending inside a character."""
    n = min(len(a), len(b))
    lo = 0
    step = 1 << 16
    while lo + step <= n and a[lo : lo + step] == b[lo : lo + step]:
        lo += step
    hi = min(n, lo + step)
    while lo < hi:  # a[:lo] == b[:lo]; the first difference is before hi (or none)
        mid = (lo + hi + 1) // 2
        if a[lo:mid] == b[lo:mid]:
            lo = mid
        else:
            hi = mid - 1
    while lo > 0 and lo < len(a) and (a[lo] & 0xC0) == 0x80:
        lo -= 1
    return lo


def common_suffix(a: bytes | bytearray, b: bytes | bytearray, most: int) -> int:
    """How many trailing bytes ``a`` and ``b`` share (at most ``most``), never starting
    inside a character."""
    n = min(len(a), len(b), most)
    la, lb = len(a), len(b)
    lo = 0
    step = 1 << 16
    while lo + step <= n and a[la - lo - step : la - lo] == b[lb - lo - step : lb - lo]:
        lo += step
    hi = min(n, lo + step)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if a[la - mid : la - lo] == b[lb - mid : lb - lo]:
            lo = mid
        else:
            hi = mid - 1
    while lo > 0 and (a[la - lo] & 0xC0) == 0x80:
        lo -= 1
    return lo


def whole_edit(old: bytes | bytearray, new: bytes | bytearray) -> tuple[Edit, bytes]:
    """The one edit that turns ``old`` into ``new`` (their common start and end kept), and
    the bytes it puts in."""
    p = common_prefix(old, new)
    s = common_suffix(old, new, min(len(old), len(new)) - p)
    return Edit(p, len(old) - s, len(new) - p - s), bytes(new[p : len(new) - s])


def apply_edits(data: bytes | bytearray, edits: Sequence[Edit], texts: Sequence[bytes]) -> bytes:
    """``data`` with ``edits`` (ordered) putting in ``texts``."""
    parts: list[bytes | bytearray] = []
    pos = 0
    for e, t in zip(edits, texts, strict=True):
        parts.append(data[pos : e.start])
        parts.append(t)
        pos = e.end
    parts.append(data[pos:])
    return b"".join(parts)

"""Where one user-perceived character ends and the next begins, simply.

A match must never start or end inside a character as a reader sees it: ``é`` stored
as ``e`` and a combining accent is one character, and a match ending after the ``e``
would leave the accent to sit on whatever ``new_string`` puts there. Unicode defines
such clusters (UAX #29) in full; this module keeps to a short, documented subset that
covers what text files hold, with no dependency beyond :mod:`unicodedata`.

A cluster is a character followed by everything that extends it:

- combining marks (categories ``Mn``, ``Mc``, ``Me``), which include the variation
  selectors (``U+FE00``-``U+FE0F``, ``U+E0100``-``U+E01EF``) and the spacing vowel
  signs of Indic scripts;
- the zero-width joiner ``U+200D``, and the character right after it (an emoji ZWJ
  sequence such as a family, or a joined Indic letter, stays one piece);
- the emoji skin-tone modifiers ``U+1F3FB``-``U+1F3FF`` and the tag characters
  ``U+E0020``-``U+E007F`` (flags of regions);
- Hangul jamo that make one syllable: a vowel jamo after a leading jamo or an LV
  syllable, a trailing jamo after a vowel jamo or a syllable, as UAX #29 joins them;
- the second of a pair of regional indicators (a flag such as 🇫🇷).

Nothing extends a line break or another control character: a mark at the start of a
line starts a cluster of its own.
"""

from __future__ import annotations

import unicodedata

ZWJ = "\u200d"
_SBASE, _SCOUNT, _TCOUNT = 0xAC00, 11172, 28


def _hangul(ch: str) -> str:
    """The Hangul syllable type of ``ch``: L, V, T, LV, LVT, or "" for none."""
    c = ord(ch)
    if 0x1100 <= c <= 0x115F or 0xA960 <= c <= 0xA97C:
        return "L"
    if 0x1160 <= c <= 0x11A7 or 0xD7B0 <= c <= 0xD7C6:
        return "V"
    if 0x11A8 <= c <= 0x11FF or 0xD7CB <= c <= 0xD7FB:
        return "T"
    if _SBASE <= c < _SBASE + _SCOUNT:
        return "LV" if (c - _SBASE) % _TCOUNT == 0 else "LVT"
    return ""


def _regional(ch: str) -> bool:
    return 0x1F1E6 <= ord(ch) <= 0x1F1FF


def _extender(ch: str) -> bool:
    c = ord(ch)
    return (
        unicodedata.category(ch)[0] == "M"
        or ch == ZWJ
        or 0x1F3FB <= c <= 0x1F3FF
        or 0xE0020 <= c <= 0xE007F
    )


def inside(text: str, pos: int) -> bool:
    """Whether offset ``pos`` of ``text`` falls inside a cluster (between a character
    and what extends it); the ends of the text never do."""
    if pos <= 0 or pos >= len(text):
        return False
    prev, ch = text[pos - 1], text[pos]
    if unicodedata.category(prev) == "Cc" or unicodedata.category(ch) == "Cc":
        return False
    if _extender(ch) or prev == ZWJ:
        return True
    h0 = _hangul(prev)
    if h0:
        h1 = _hangul(ch)
        if h0 == "L" and h1 in ("L", "V", "LV", "LVT"):
            return True
        if h0 in ("LV", "V") and h1 in ("V", "T"):
            return True
        return h0 in ("LVT", "T") and h1 == "T"
    if _regional(prev) and _regional(ch):
        run = 0
        k = pos - 1
        while k >= 0 and _regional(text[k]):
            run += 1
            k -= 1
        return run % 2 == 1
    return False


def splits(text: str, start: int, end: int) -> bool:
    """Whether the span ``text[start:end]`` starts or ends inside a cluster."""
    return inside(text, start) or inside(text, end)


def cluster_around(text: str, pos: int) -> tuple[int, int]:
    """The span of the cluster ``pos`` falls inside (or starts), for quoting it."""
    a = pos
    while inside(text, a):
        a -= 1
    b = pos + 1 if pos < len(text) else pos
    while inside(text, b):
        b += 1
    return a, b


def describe(cluster: str) -> str:
    """``cluster`` quoted for a message, with its code points when it is several
    (``'é' (U+0065 U+0301)``): the model then sees that the accent is a character."""
    shown = f"'{cluster}'"
    if len(cluster) == 1:
        return shown
    return shown + " (" + " ".join(f"U+{ord(c):04X}" for c in cluster) + ")"

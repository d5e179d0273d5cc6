"""Splices, the primitive of every change: replace ``text[start:end]`` with new text.

Pure functions on them: applying ordered splices, composing the steps of several edits
into splices on the base text, cutting a splice to what it really changes, and mapping
splices of the LF view to the raw text with its own line endings. Every way a change
reaches a file (disk, an editor buffer, history) uses these, so all of them make the
same text.
"""

from __future__ import annotations

import difflib
import itertools
from collections.abc import Sequence
from dataclasses import dataclass

from steadyhand.text.lines import NewlineMap, with_endings


@dataclass(frozen=True, slots=True)
class Splice:
    """Replace ``view[start:end]`` with ``text``."""

    start: int
    end: int
    text: str


def apply_splices(text: str, splices: Sequence[Splice]) -> str:
    """``text`` with non-overlapping, ordered splices applied."""
    out: list[str] = []
    pos = 0
    for sp in splices:
        out.append(text[pos : sp.start])
        out.append(sp.text)
        pos = sp.end
    out.append(text[pos:])
    return "".join(out)


def compose(base_len: int, steps: Sequence[Sequence[Splice]]) -> tuple[Splice, ...]:
    """Splices on a base text with the effect of applying each step in turn.

    Each step's splices are ordered, non-overlapping, and refer to the text as the
    earlier steps left it. The result refers to the base text only, so several edits
    become one change (one undo step in an editor).
    """
    # The current text as pieces: (a, b) is base[a:b], a str is inserted text.
    pieces: list[tuple[int, int] | str] = [(0, base_len)] if base_len else []

    def take(lo: int, hi: int) -> list[tuple[int, int] | str]:
        out: list[tuple[int, int] | str] = []
        pos = 0
        for p in pieces:
            n = len(p) if isinstance(p, str) else p[1] - p[0]
            a, b = max(lo, pos), min(hi, pos + n)
            if a < b:
                if isinstance(p, str):
                    out.append(p[a - pos : b - pos])
                else:
                    out.append((p[0] + a - pos, p[0] + b - pos))
            pos += n
        return out

    for step in steps:
        total = sum(len(p) if isinstance(p, str) else p[1] - p[0] for p in pieces)
        for sp in reversed(step):
            pieces = [*take(0, sp.start), *([sp.text] if sp.text else []), *take(sp.end, total)]
            total += len(sp.text) - (sp.end - sp.start)
    out: list[Splice] = []
    base_pos = 0
    pending: list[str] = []
    start: int | None = None
    for p in pieces:
        if isinstance(p, str):
            if start is None:
                start = base_pos
            pending.append(p)
            continue
        if start is not None or p[0] != base_pos:
            out.append(Splice(base_pos if start is None else start, p[0], "".join(pending)))
            pending, start = [], None
        base_pos = p[1]
    if start is not None or base_pos != base_len:
        out.append(Splice(base_pos if start is None else start, base_len, "".join(pending)))
    return tuple(out)


def _common_prefix(a: str, b: str) -> int:
    """How many leading characters ``a`` and ``b`` share (slices compared, halving)."""
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


def changed_core(text: str, sp: Splice) -> Splice:
    """``sp`` (a splice on ``text``) without what it leaves as it was at either end: the
    characters its new text shares with the text it replaces, at the start and at the
    end, stay untouched. A CRLF pair is never split (a position between CR and LF does
    not exist in LSP)."""
    old, new = text[sp.start : sp.end], sp.text
    pre = _common_prefix(old, new)
    m = min(len(old), len(new)) - pre
    suf = _common_prefix(old[len(old) - m :][::-1], new[len(new) - m :][::-1]) if m else 0
    if pre > 0 and old[pre - 1] == "\r" and pre < len(old) and old[pre] == "\n":
        pre -= 1
    end = len(old) - suf
    if suf > 0 and end > pre and old[end - 1] == "\r" and old[end] == "\n":
        suf -= 1
    return Splice(sp.start + pre, sp.end - suf, new[pre : len(new) - suf])


def _kept_breaks_apart(view: str, sp: Splice) -> list[Splice]:
    """``sp`` cut into the pieces between the line breaks it keeps, so that those stay
    untouched in the raw text with whatever ending they have there (a mixed file).

    Lines are aligned (:class:`difflib.SequenceMatcher`); a line break is kept where the
    new text has one at the same place: inside a run of equal lines or of lines replaced
    one for one, and at the start of every run.
    """
    old = view[sp.start : sp.end]
    if "\n" not in old or "\n" not in sp.text:
        return [sp]
    ol, nl = old.split("\n"), sp.text.split("\n")
    kept: list[tuple[int, int]] = []  # (break after old line i, break after new line j)

    def keep(i: int, j: int) -> None:
        inside = 0 <= i < len(ol) - 1 and 0 <= j < len(nl) - 1
        if inside and (not kept or (i > kept[-1][0] and j > kept[-1][1])):
            kept.append((i, j))

    sm = difflib.SequenceMatcher(None, ol, nl)
    for op, i1, i2, j1, j2 in sm.get_opcodes():
        keep(i1 - 1, j1 - 1)
        if op == "equal" or (op == "replace" and i2 - i1 == j2 - j1):
            for k in range(i2 - i1 - 1):
                keep(i1 + k, j1 + k)
    if not kept:
        return [sp]
    # the offset of each line's break in ``old`` and ``sp.text``
    o_at = list(itertools.accumulate(len(x) + 1 for x in ol))
    n_at = list(itertools.accumulate(len(x) + 1 for x in nl))
    out: list[Splice] = []
    o_pos = n_pos = 0
    for i, j in [*kept, (len(ol) - 1, len(nl) - 1)]:
        o_end, n_end = o_at[i] - 1, n_at[j] - 1
        piece = Splice(sp.start + o_pos, sp.start + o_end, sp.text[n_pos:n_end])
        if old[o_pos:o_end] != piece.text:
            out.append(changed_core(view, piece))
        o_pos, n_pos = o_end + 1, n_end + 1
    return out


def raw_splices(
    nmap: NewlineMap,
    splices: Sequence[Splice],
    newline: str,
    *,
    mixed_view: str | None = None,
    raw: str | None = None,
) -> list[Splice]:
    """View splices as splices of the raw text (``nmap`` = ``NewlineMap(raw)``).

    Untouched lines keep their endings; line breaks in the new text take ``newline``.
    ``mixed_view``: the view text, for a file of mixed line endings; each splice is then
    first cut to what it changes (:func:`changed_core`), so the lines it leaves as they
    were keep their own endings. ``raw``: the raw text itself, for a file of mixed line
    endings, so that no lone CR ends up right before a lone LF (:func:`_breaks_unmerged`).
    Every way a change reaches a file (disk, editor) maps its splices here, so all of
    them make the same text.
    """
    if mixed_view is not None:
        splices = [
            piece
            for sp in splices
            for piece in _kept_breaks_apart(mixed_view, changed_core(mixed_view, sp))
        ]
    out = [
        Splice(nmap.to_raw(sp.start), nmap.to_raw(sp.end), with_endings(sp.text, newline))
        for sp in splices
    ]
    if mixed_view is not None and raw is not None and "\r" in raw:
        return _breaks_unmerged(raw, out)
    return out


def _breaks_unmerged(raw: str, splices: list[Splice]) -> list[Splice]:
    """``splices`` of ``raw`` (in order, apart) changed so that none leaves a lone CR
    right before a lone LF: the two would read as one CRLF line break, and two lines
    would become one. The LF on the changed side (a break the change writes, or the one
    ending a line the change emptied) becomes a CRLF instead; every line keeps its place
    and the untouched ones their endings."""
    merged: list[Splice] = []
    for sp in splices:  # adjacent splices as one, so each has untouched text on both sides
        if merged and merged[-1].end == sp.start:
            last = merged.pop()
            sp = Splice(last.start, sp.end, last.text + sp.text)
        merged.append(sp)
    out: list[Splice] = []
    for sp in merged:
        text = sp.text
        after = raw[sp.end : sp.end + 1]
        if text.endswith("\r") and after == "\n":
            text += "\n"
        if sp.start and raw[sp.start - 1] == "\r" and (text or after)[:1] == "\n":
            text = "\r" + text
        out.append(sp if text is sp.text else Splice(sp.start, sp.end, text))
    return out


def coalesce(text: str, splices: Sequence[Splice], most: int) -> list[Splice]:
    """At most ``most`` splices that make the same change to ``text`` as ``splices``
    (ordered, not overlapping): runs of neighbours are merged into one, which also
    rewrites, unchanged, the text between them."""
    if len(splices) <= most:
        return list(splices)
    per = -(-len(splices) // most)
    out: list[Splice] = []
    for i in range(0, len(splices), per):
        group = splices[i : i + per]
        parts = [group[0].text]
        for prev, sp in itertools.pairwise(group):
            parts += (text[prev.end : sp.start], sp.text)
        out.append(Splice(group[0].start, group[-1].end, "".join(parts)))
    return out

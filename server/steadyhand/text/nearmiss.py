"""When ``old_string`` is not found: the closest region of the file and what differs.

The answer to a failed match should let the model fix its call in one try, without
another read: the few numbered lines of the file that look most like ``old_string``, and
what is different, in words ("line 12 is indented with a tab, you sent 4 spaces").

Finding the region: lines are compared by a loose key (typographic punctuation folded,
whitespace collapsed). Lines of ``old_string`` whose key occurs in the file vote for the
place the block would start; when no line matches even loosely, the most distinctive
lines are compared fuzzily (only in files of moderate size, so a refusal stays cheap).
A line of ``old_string`` that is a stretch of a much longer file line (minified code,
data) is placed within that line by the pieces of it the line contains.

Every comparison is bounded by size (:mod:`steadyhand.text.budget`) and the whole
search by a deadline: past it, the search answers with what it found so far, or says
that the file's lines are too long to compare.
"""

from __future__ import annotations

import unicodedata
from collections import Counter
from dataclasses import dataclass

from steadyhand.text.budget import LINE_CELLS, Budget, OutOfTime, opcodes, similarity
from steadyhand.text.chars import (
    DASHES,
    ELLIPSIS,
    INVISIBLES,
    ODD_SPACES,
    chars_re,
    normalize_quotes,
    replace_chars,
)
from steadyhand.text.lines import split_lines, to_view
from steadyhand.text.render import number_lines

#: At most this many lines of the file are shown.
MAX_SHOWN = 14
#: At most this many differences are spelled out.
MAX_DIFFERENCES = 6
#: Fuzzy search (no line matches even loosely) only in files up to this many lines.
FUZZY_MAX_LINES = 20_000
#: A line of old_string occurring more often than this is too common to place the block.
COMMON_LINE = 40
#: How long the search for the closest region may take (seconds).
SEARCH_SECONDS = 1.0
#: A file line at least this long, and much longer than the model's line, is searched
#: for the model's line as a stretch of it.
LONG_LINE = 400
#: The most pieces of a model's line looked up in a long file line.
PIECES = 48

_WS = " \t" + ODD_SPACES
_FOLD = str.maketrans({**dict.fromkeys(DASHES, "-"), **dict.fromkeys(ODD_SPACES, " ")})
_FOLD_RE = chars_re(DASHES + ODD_SPACES)


@dataclass(frozen=True, slots=True)
class NearMiss:
    """The closest region (1-based, inclusive lines) and what differs from it."""

    start_line: int
    end_line: int
    excerpt: str
    differences: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Unsearched:
    """The search ran out of time before it found a region: the file's lines are too
    long (or too many) to compare with ``old_string``."""

    longest_line: int


def _key(line: str) -> str:
    if line.isascii():  # nothing to fold
        return " ".join(line.split())
    t = replace_chars(normalize_quotes(line), _FOLD, _FOLD_RE).replace(ELLIPSIS, "...")
    for ch in INVISIBLES:
        t = t.replace(ch, "")
    return " ".join(t.split())


def _place(line: str, piece: str) -> tuple[int, float] | None:
    """Where ``piece`` best lines up within the much longer ``line`` (the offset of its
    start), and the share of ``piece``'s stretches found there; None: none found."""
    k = max(4, min(16, len(piece) // 4))
    if len(piece) < k:
        return None
    step = max(k, (len(piece) - k) // PIECES + 1)
    votes: Counter[int] = Counter()
    tried = 0
    for j in range(0, len(piece) - k + 1, step):
        tried += 1
        chunk = piece[j : j + k]
        pos = line.find(chunk)
        hits = 0
        while pos >= 0 and hits < 4:
            votes[pos - j] += 1
            hits += 1
            pos = line.find(chunk, pos + 1)
    if not votes:
        return None
    # offsets a few characters apart are one place (a character added or dropped)
    best, best_n = 0, 0
    for at in votes:
        n = sum(votes.get(at + d, 0) for d in range(-4, 5))
        if n > best_n or (n == best_n and at < best):
            best, best_n = at, n
    return max(0, best), min(1.0, best_n / tried)


def _fuzzy(k_n: str, k_f: str, floor: float = 0.6) -> float:
    """How alike the model's line key ``k_n`` and a file line key ``k_f`` are (0 to 1;
    0 when their lengths alone show it is below ``floor``)."""
    if len(k_f) >= LONG_LINE and len(k_f) >= 2 * len(k_n) >= 16:
        placed = _place(k_f, k_n)
        return placed[1] if placed is not None else 0.0
    total = len(k_f) + len(k_n)
    if not total or 2.0 * min(len(k_f), len(k_n)) / total < floor:
        return 0.0  # the lengths alone rule it out
    return similarity(k_f, k_n)


def _best_start(keys_n: list[str], keys_f: list[str], budget: Budget) -> int | None:
    index: dict[str, list[int]] = {}
    for i, k in enumerate(keys_f):
        if k:
            index.setdefault(k, []).append(i)
    for cap in (COMMON_LINE, 400):
        votes: Counter[int] = Counter()
        for j, k in enumerate(keys_n):
            hits = index.get(k, []) if k else []
            if len(hits) > cap:
                continue
            for i in hits:
                votes[i - j] += 1
        if votes:
            return max(votes.items(), key=lambda kv: (kv[1], -kv[0]))[0]
    if len(keys_f) > FUZZY_MAX_LINES:
        return None
    distinct = sorted(((len(k), j) for j, k in enumerate(keys_n) if k), reverse=True)[:3]
    scores: dict[int, float] = {}
    for _, j in distinct:
        for i, k in enumerate(keys_f):
            if not k:
                continue
            if not i % 256:
                budget.check()
            r = _fuzzy(keys_n[j], k)
            if r >= 0.6:
                scores[i - j] = scores.get(i - j, 0.0) + r
    if not scores:
        return None
    return max(scores.items(), key=lambda kv: (kv[1], -kv[0]))[0]


def _lead(line: str) -> str:
    return line[: len(line) - len(line.lstrip(_WS))]


def _trail(line: str) -> str:
    return line[len(line.rstrip(_WS)) :]


def _char_name(ch: str) -> str:
    if ch == " ":
        return "a space"
    if ch == "\t":
        return "a tab"
    name = unicodedata.name(ch, f"U+{ord(ch):04X}").lower()
    shown = "" if ch in INVISIBLES or ch in ODD_SPACES else f"{ch}, "
    return f"{'an' if name[0] in 'aeiou' else 'a'} {name} ({shown}U+{ord(ch):04X})"


def describe_whitespace(ws: str) -> str:
    """``"4 spaces"``, ``"1 tab"``, ``"2 tabs and 1 space"``, ``"no indentation"``."""
    if not ws:
        return "nothing"
    counts = Counter("tab" if c == "\t" else "space" if c == " " else _char_name(c) for c in ws)
    parts = []
    for what, n in counts.items():
        if what in ("tab", "space"):
            parts.append(f"{n} {what}{'s' if n != 1 else ''}")
        else:
            parts.append(what if n == 1 else f"{n} × {what}")
    return " and ".join(parts)


def _show(s: str, limit: int = 60) -> str:
    s = s.replace("\t", "\\t")
    for ch in ODD_SPACES + INVISIBLES:
        s = s.replace(ch, f"\\u{ord(ch):04x}")
    return s if len(s) <= limit else s[: limit - 1] + "…"


def _q(s: str) -> str:
    """``s`` as :func:`_show` writes it, in quotes, other unprintable characters escaped
    once (``repr`` would escape the backslashes :func:`_show` wrote a second time)."""
    shown = "".join(ch if ch.isprintable() else repr(ch)[1:-1] for ch in _show(s))
    return f"'{shown}'"


def _col(f: str, at: int) -> str:
    """ " at column N" for a place in a long line (where a quote alone is hard to find)."""
    return f" at column {at + 1:,}" if len(f) > LONG_LINE else ""


def _core_differences(f: str, m: str, n: int) -> list[str]:
    out: list[str] = []
    for op, i1, i2, j1, j2 in opcodes(f, m):
        if op == "equal":
            continue
        fs, ms = f[i1:i2], m[j1:j2]
        if fs and ms and normalize_quotes(fs) == normalize_quotes(ms):
            kind = "curly" if normalize_quotes(fs) != fs else "straight"
            other = "straight" if kind == "curly" else "curly"
            out.append(f"line {n} uses {kind} quotes ({fs}) where you sent {other} ones ({ms})")
        elif fs and ms and _key(fs) == _key(ms) and fs.strip(_WS) and ms.strip(_WS):
            out.append(
                f"line {n} has {', '.join(_char_name(c) for c in fs[:3])} where you sent {_q(ms)}"
            )
        elif fs and not fs.strip(_WS) and (not ms or not ms.strip(_WS)):
            sent = f"you sent {describe_whitespace(ms)}" if ms else "you sent none"
            out.append(f"line {n} has {describe_whitespace(fs)} at column {i1 + 1}, {sent}")
        elif fs and all(c in INVISIBLES for c in fs) and not ms:
            out.append(f"line {n} contains {_char_name(fs[0])}, which you did not send")
        else:
            if len(f) <= 60 and len(m) <= 60:
                fs, ms = f, m
            else:
                fs, ms = f[max(0, i1 - 20) : i2 + 20], m[max(0, j1 - 20) : j2 + 20]
            out.append(f"line {n}{_col(f, i1)} reads {_q(fs)} where you sent {_q(ms)}")
            break
        if len(out) >= 3:
            break
    return out


def _within(f: str, m: str, n: int) -> list[str] | None:
    """What differs between the model's line ``m`` and the stretch of the long file
    line ``f`` (line ``n``) it lines up with; None when it lines up nowhere."""
    mc = m.strip(_WS)
    placed = _place(f, mc)
    if placed is None:
        return None
    at = placed[0]
    # the end that lines up best, for a character or two added or dropped
    best_end, best_suf = at + len(mc), -1
    for d in range(-8, 9):
        end = at + len(mc) + d
        if end <= at or end > len(f):
            continue
        suf = 0
        while suf < len(mc) and suf < end - at and f[end - 1 - suf] == mc[len(mc) - 1 - suf]:
            suf += 1
        if suf > best_suf:
            best_end, best_suf = end, suf
    stretch = f[at:best_end]
    if stretch == mc:
        return []
    out: list[str] = []
    for op, i1, i2, j1, j2 in opcodes(stretch, mc):
        if op == "equal":
            continue
        fs = stretch[max(0, i1 - 20) : i2 + 20]
        ms = mc[max(0, j1 - 20) : j2 + 20]
        out.append(f"line {n} at column {at + i1 + 1:,} reads {_q(fs)} where you sent {_q(ms)}")
        break
    return out


def describe_line(f: str, m: str, n: int) -> list[str]:
    """What differs between file line ``n`` (``f``) and the model's line ``m``."""
    out: list[str] = []
    fi, mi = _lead(f), _lead(m)
    if fi != mi and f.strip(_WS) and m.strip(_WS):
        if not fi:
            out.append(f"line {n} has no indentation, you sent {describe_whitespace(mi)}")
        elif not mi:
            out.append(f"line {n} is indented with {describe_whitespace(fi)}, you sent none")
        else:
            out.append(
                f"line {n} is indented with {describe_whitespace(fi)}, you sent "
                f"{describe_whitespace(mi)}"
            )
    fb, mb = f[len(fi) :], m[len(mi) :]
    ft, mt = _trail(fb), _trail(mb)
    if ft != mt:
        if ft and not mt:
            out.append(f"line {n} ends with {describe_whitespace(ft)} that you did not send")
        elif mt and not ft:
            out.append(f"line {n} has no trailing whitespace, you sent {describe_whitespace(mt)}")
        else:
            out.append(
                f"line {n} ends with {describe_whitespace(ft)}, you sent {describe_whitespace(mt)}"
            )
    fc, mc = fb[: len(fb) - len(ft)], mb[: len(mb) - len(mt)]
    if fc != mc:
        out.extend(_core_differences(fc, mc, n))
    return out


def _pair_block(
    keys_n: list[str], keys_f: list[str], i1: int, i2: int, f1: int, f2: int, budget: Budget
) -> list[tuple[int, int]]:
    """Pair the model's lines ``i1:i2`` with file lines ``f1:f2`` in order: one to one
    when the counts agree, else each with its most similar remaining line."""
    if i2 - i1 == f2 - f1:
        return [(i1 + k, f1 + k) for k in range(i2 - i1)]
    out: list[tuple[int, int]] = []
    nxt = f1
    for k in range(i1, i2):
        budget.check()
        best, best_r = -1, 0.5
        for fk in range(nxt, f2):
            r = _fuzzy(keys_n[k], keys_f[fk], best_r)
            if r > best_r:
                best, best_r = fk, r
        if best >= 0:
            out.append((k, best))
            nxt = best + 1
    return out


def _describe(f: str, m: str, n: int) -> list[str]:
    """What differs between file line ``n`` and the model's line, a stretch of it when
    the file line is long and the model's much shorter."""
    if len(f) >= LONG_LINE and len(m.strip(_WS)) * 4 < len(f) * 3:
        within = _within(f, m, n)
        if within is not None:
            return within
    return describe_line(f, m, n)


def closest_region(
    view: str, old: str, budget: Budget | None = None
) -> NearMiss | Unsearched | None:
    """The region of ``view`` most like ``old`` and how they differ; None when nothing
    is alike; :class:`Unsearched` when the search ran out of time (``budget``, by
    default :data:`SEARCH_SECONDS`) before it found a region."""
    if budget is None:
        budget = Budget(SEARCH_SECONDS)
    lines = split_lines(view)
    try:
        return _closest(lines, old, budget)
    except OutOfTime:
        return Unsearched(max(map(len, lines), default=0))


def _closest(lines: list[str], old: str, budget: Budget) -> NearMiss | None:
    needle = to_view(old).split("\n")
    if len(needle) > 1 and needle[-1] == "":
        needle.pop()
    keys_n = [_key(line) for line in needle]
    if not any(keys_n):
        return None
    if not lines:
        return None
    keys_f: list[str] = []
    for at in range(0, len(lines), 4096):
        budget.check()
        keys_f.extend(_key(line) for line in lines[at : at + 4096])
    start = _best_start(keys_n, keys_f, budget)
    if start is None:
        return None
    wlo = max(0, start - 2)
    whi = min(len(lines), max(start, 0) + len(needle) + 2)
    diffs: list[str] = []
    used: list[int] = []
    ops = opcodes(keys_n, keys_f[wlo:whi], LINE_CELLS)
    paired_n: set[int] = set()
    paired_f: set[int] = set()
    for op, i1, i2, j1, j2 in ops:
        if op not in ("equal", "replace"):
            continue
        for k, fk in _pair_block(keys_n, keys_f, i1, i2, wlo + j1, wlo + j2, budget):
            used.append(fk)
            paired_n.add(k)
            paired_f.add(fk)
            if not budget.expired():  # past the deadline, the region alone is shown
                diffs.extend(_describe(lines[fk], needle[k], fk + 1))
    if not used:
        return None
    first, last = min(used), max(used)
    for op, i1, i2, j1, j2 in ops:
        if op in ("delete", "replace"):
            for k in range(i1, i2):
                if k not in paired_n and needle[k].strip(_WS):
                    diffs.append(f"your line {_q(needle[k].strip(_WS))} is not in the file here")
        if op in ("insert", "replace"):
            for k in range(j1, j2):
                fi = wlo + k
                if fi not in paired_f and first < fi < last:
                    diffs.append(
                        f"line {fi + 1} ({_q(lines[fi].strip(_WS))}) is in the file "
                        "but not in old_string"
                    )
    hi = min(last, first + MAX_SHOWN - 1)
    excerpt, _ = number_lines(lines[first : hi + 1], first + 1, 2000)
    if len(diffs) > MAX_DIFFERENCES:
        more = len(diffs) - (MAX_DIFFERENCES - 1)
        diffs = [*diffs[: MAX_DIFFERENCES - 1], f"and {more} more difference(s)"]
    return NearMiss(first + 1, hi + 1, excerpt, tuple(diffs))


def no_match_message(path: str, near: NearMiss) -> str:
    where = (
        f"line {near.start_line}"
        if near.start_line == near.end_line
        else f"lines {near.start_line}-{near.end_line}"
    )
    what = (
        f"What differs: {'; '.join(near.differences)}."
        if near.differences
        else "Compare it with your old_string character by character."
    )
    return (
        f"old_string was not found in {path}. The closest text is at {where}:\n"
        f"{near.excerpt}\n{what} Copy the text exactly as shown (after the tab that "
        "follows each line number) into old_string and retry."
    )


def unsearched_message(path: str, miss: Unsearched) -> str:
    return (
        f"old_string was not found in {path}, and its lines are too long to compare with "
        f"the file's in the time a search may take (the longest line has "
        f"{miss.longest_line:,} characters). Read the lines you want to change and copy "
        "old_string from them exactly, or use a shorter, distinctive stretch of the line, "
        "and retry."
    )

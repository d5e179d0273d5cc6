"""When ``old_string`` is not found: the closest region of the file and what differs.

The answer to a failed match should let the model fix its call in one try, without
another read: the few numbered lines of the file that look most like ``old_string``, and
what is different, in words ("line 12 is indented with a tab, you sent 4 spaces").

Finding the region: lines are compared by a loose key (typographic punctuation folded,
whitespace collapsed). Lines of ``old_string`` whose key occurs in the file vote for the
place the block would start; when no line matches even loosely, the most distinctive
lines are compared fuzzily (only in files of moderate size, so a refusal stays cheap).
"""

from __future__ import annotations

import difflib
import unicodedata
from collections import Counter
from dataclasses import dataclass

from steadyhand.text.chars import DASHES, ELLIPSIS, INVISIBLES, ODD_SPACES, normalize_quotes
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

_WS = " \t" + ODD_SPACES
_FOLD = str.maketrans({**dict.fromkeys(DASHES, "-"), **dict.fromkeys(ODD_SPACES, " ")})


@dataclass(frozen=True, slots=True)
class NearMiss:
    """The closest region (1-based, inclusive lines) and what differs from it."""

    start_line: int
    end_line: int
    excerpt: str
    differences: tuple[str, ...]


def _key(line: str) -> str:
    t = normalize_quotes(line).translate(_FOLD).replace(ELLIPSIS, "...")
    for ch in INVISIBLES:
        t = t.replace(ch, "")
    return " ".join(t.split())


def _best_start(keys_n: list[str], keys_f: list[str]) -> int | None:
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
    sm = difflib.SequenceMatcher(autojunk=False)
    for _, j in distinct:
        sm.set_seq2(keys_n[j])
        for i, k in enumerate(keys_f):
            if not k:
                continue
            sm.set_seq1(k)
            if sm.real_quick_ratio() < 0.6 or sm.quick_ratio() < 0.6:
                continue
            r = sm.ratio()
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


def _core_differences(f: str, m: str, n: int) -> list[str]:
    out: list[str] = []
    sm = difflib.SequenceMatcher(None, f, m, autojunk=False)
    for op, i1, i2, j1, j2 in sm.get_opcodes():
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
            out.append(f"line {n} reads {_q(fs)} where you sent {_q(ms)}")
            break
        if len(out) >= 3:
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
    keys_n: list[str], keys_f: list[str], i1: int, i2: int, f1: int, f2: int
) -> list[tuple[int, int]]:
    """Pair the model's lines ``i1:i2`` with file lines ``f1:f2`` in order: one to one
    when the counts agree, else each with its most similar remaining line."""
    if i2 - i1 == f2 - f1:
        return [(i1 + k, f1 + k) for k in range(i2 - i1)]
    out: list[tuple[int, int]] = []
    nxt = f1
    for k in range(i1, i2):
        best, best_r = -1, 0.5
        for fk in range(nxt, f2):
            r = difflib.SequenceMatcher(None, keys_n[k], keys_f[fk], autojunk=False).ratio()
            if r > best_r:
                best, best_r = fk, r
        if best >= 0:
            out.append((k, best))
            nxt = best + 1
    return out


def closest_region(view: str, old: str) -> NearMiss | None:
    """The region of ``view`` most like ``old`` and how they differ, or None."""
    needle = to_view(old).split("\n")
    if len(needle) > 1 and needle[-1] == "":
        needle.pop()
    keys_n = [_key(line) for line in needle]
    if not any(keys_n):
        return None
    lines = split_lines(view)
    if not lines:
        return None
    keys_f = [_key(line) for line in lines]
    start = _best_start(keys_n, keys_f)
    if start is None:
        return None
    wlo = max(0, start - 2)
    whi = min(len(lines), max(start, 0) + len(needle) + 2)
    sm = difflib.SequenceMatcher(None, keys_n, keys_f[wlo:whi], autojunk=False)
    diffs: list[str] = []
    used: list[int] = []
    ops = sm.get_opcodes()
    paired_n: set[int] = set()
    paired_f: set[int] = set()
    for op, i1, i2, j1, j2 in ops:
        if op not in ("equal", "replace"):
            continue
        for k, fk in _pair_block(keys_n, keys_f, i1, i2, wlo + j1, wlo + j2):
            used.append(fk)
            paired_n.add(k)
            paired_f.add(fk)
            diffs.extend(describe_line(lines[fk], needle[k], fk + 1))
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

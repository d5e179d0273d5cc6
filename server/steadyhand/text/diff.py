"""Unified diffs and change counts for result messages.

Diffs are built from the lines around the known edit location, never by diffing two
whole large files, so an edit in a 100,000-line file costs what the edit touches.
"""

from __future__ import annotations

import bisect
import difflib
import itertools
import operator
from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple

from steadyhand.text.lines import split_lines
from steadyhand.text.splices import Splice

CONTEXT = 3


@dataclass(frozen=True, slots=True)
class DiffStat:
    added: int
    removed: int


def unified(
    old_lines: list[str],
    new_lines: list[str],
    *,
    name: str,
    first_line: int = 1,
    new_first_line: int | None = None,
) -> str:
    """A unified diff of two line lists that start at ``first_line`` of the file (and at
    ``new_first_line`` of the new file, when earlier changes moved it)."""
    return _unified(old_lines, new_lines, name, first_line, new_first_line).diff


#: Marks a last line without a line end while lines are diffed (two noncharacters);
#: written out as unified diffs do, on a line of its own after that line.
_NO_EOL = "\uffff\U0010fffe"
_NO_EOL_LINE = "\n\\ No newline at end of file"


def _lines(text: str, *, at_end: bool) -> list[str]:
    """:func:`split_lines`, the last line marked when ``text`` reaches the end of its
    file (``at_end``) without a line end: a change of only that line end then shows."""
    lines = split_lines(text)
    if at_end and lines and not text.endswith("\n"):
        lines[-1] += _NO_EOL
    return lines


def _header(name: str) -> list[str]:
    """The two header lines, as git writes them: ``a/`` and ``b/`` before the path, an
    absolute path without its leading slash (``--- a/home/me/f.py``), so that ``patch
    -p1`` run at the file system's root (or at a workspace folder, for a relative name)
    finds the file. A name with a space ends with a tab, as git writes it, so that
    ``patch`` takes the whole name rather than stopping at the space."""
    bare = name.lstrip("/")
    end = "\t" if " " in bare else ""
    return [f"--- a/{bare}{end}", f"+++ b/{bare}{end}"]


class _Built(NamedTuple):
    diff: str
    stat: DiffStat
    #: the runs of added lines, each joined
    plus: list[str]
    #: the runs of changed lines, as (first, last) lines of the new text (``last`` =
    #: ``first - 1`` for lines only removed)
    runs: list[tuple[int, int]]


@dataclass(slots=True)
class _Plan:
    """A unified diff before its text is written: which lines go in which hunk, its
    counts and runs, and how many lines its text will have. Building the text is most of
    a long diff's cost, and a long diff is usually left out of the result."""

    old: list[str]
    new: list[str]
    shift: int
    new_shift: int
    #: lines replaced in place (the aligned shape), with each hunk as (first, end) indices
    #: into ``differ`` and the old lines it spans, ``lo``-``hi``
    differ: list[int] | None
    hunks: list[tuple[int, int, int, int]]
    #: the general shape: difflib-style opcodes grouped into hunks
    groups: list[list[Opcode]]
    stat: DiffStat
    plus: list[str]
    runs: list[tuple[int, int]]
    #: lines of the text (its newlines), the "\ No newline at end of file" notes not counted
    lines: int


def _unified(
    old_lines: list[str],
    new_lines: list[str],
    name: str,
    first_line: int = 1,
    new_first_line: int | None = None,
) -> _Built:
    """:func:`unified`, with its counts and its runs."""
    plan = _plan(old_lines, new_lines, first_line, new_first_line)
    return _Built(_render(plan, name), plan.stat, _plain(plan.plus), plan.runs)


def _plain(plus: list[str]) -> list[str]:
    """The runs of added lines without the mark of a last line that has no line end."""
    if any(_NO_EOL in run for run in plus):
        return [run.replace(_NO_EOL, "") for run in plus]
    return plus


def _plan(
    old_lines: list[str],
    new_lines: list[str],
    first_line: int = 1,
    new_first_line: int | None = None,
) -> _Plan:
    shift = first_line - 1
    new_shift = shift if new_first_line is None else new_first_line - 1
    if not old_lines or not new_lines:  # a creation or an emptying: one run, no search
        codes = [] if old_lines == new_lines else [_one_sided(old_lines, new_lines)]
        return _general(old_lines, new_lines, shift, new_shift, _grouped(codes, CONTEXT))
    if len(old_lines) + len(new_lines) >= SMALL_DIFF:
        differ = _aligned_changes(old_lines, new_lines)
    else:  # the usual edit: one line changed, among its context lines
        k = _one_replaced_at(old_lines, new_lines)
        differ = None if k is None else [k]
    if differ is not None:
        return _aligned(old_lines, new_lines, differ, shift, new_shift)
    groups = _grouped(_opcodes(old_lines, new_lines), CONTEXT)
    return _general(old_lines, new_lines, shift, new_shift, groups)


def _one_sided(old_lines: list[str], new_lines: list[str]) -> Opcode:
    """The one opcode of a diff with one side empty (as difflib gives it)."""
    if old_lines:
        return ("delete", 0, len(old_lines), 0, 0)
    return ("insert", 0, 0, 0, len(new_lines))


def _general(
    old_lines: list[str],
    new_lines: list[str],
    shift: int,
    new_shift: int,
    groups: list[list[Opcode]],
) -> _Plan:
    added = removed = 0
    plus: list[str] = []
    runs: list[tuple[int, int]] = []
    lines = 2 + len(groups) if groups else 0
    for group in groups:
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                lines += i2 - i1
                continue
            runs.append((j1 + 1 + new_shift, j2 + new_shift))
            if tag != "insert":
                removed += i2 - i1
            if tag != "delete" and j2 > j1:
                plus.append("\n+".join(new_lines[j1:j2]))
                added += j2 - j1
    lines += added + removed
    stat = DiffStat(added, removed)
    return _Plan(old_lines, new_lines, shift, new_shift, None, [], groups, stat, plus, runs, lines)


def _render(plan: _Plan, name: str) -> str:
    """The text of a planned diff ("" when nothing changed)."""
    if plan.differ:
        text = _aligned_text(plan, name)
    elif plan.groups:
        text = _general_text(plan, name)
    else:
        return ""
    return text.replace(_NO_EOL, _NO_EOL_LINE) if _NO_EOL in text else text


def _general_text(plan: _Plan, name: str) -> str:
    old_lines, new_lines = plan.old, plan.new
    out = _header(name)
    for group in plan.groups:
        first, last = group[0], group[-1]
        old_range = _range(first[1], last[2], plan.shift)
        new_range = _range(first[3], last[4], plan.new_shift)
        out.append(f"@@ -{old_range} +{new_range} @@")
        for tag, i1, i2, j1, j2 in group:  # each run of lines joined at once, in C
            if tag == "equal":
                if i2 > i1:
                    out.append(" " + "\n ".join(old_lines[i1:i2]))
                continue
            if tag != "insert" and i2 > i1:
                out.append("-" + "\n-".join(old_lines[i1:i2]))
            if tag != "delete" and j2 > j1:
                out.append("+" + "\n+".join(new_lines[j1:j2]))
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
    aligned = _aligned_blocks(a, b, pre, ahi, bhi)
    if aligned is not None:
        blocks.extend(aligned)
    elif pre < ahi and pre < bhi:
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


def _differing(a: list[str], b: list[str]) -> list[int] | None:
    """Where two equally long line lists differ, when they mostly agree line for line
    (lines replaced in place, the usual shape of a rewrite: the differing lines span at
    least 8 lines, and at most a quarter of that span differs); None when they do not."""
    if len(a) != len(b):
        return None
    differ = list(itertools.compress(itertools.count(), map(operator.ne, a, b)))
    if not differ:
        return differ
    span = differ[-1] - differ[0] + 1
    if span < 8 or len(differ) * 4 > span:
        return None
    return differ


def _aligned_blocks(
    a: list[str], b: list[str], lo: int, ahi: int, bhi: int
) -> list[tuple[int, int, int]] | None:
    """Matching blocks of two stretches that mostly agree line for line, or None."""
    differ = _differing(a[lo:ahi], b[lo:bhi])
    if differ is None:
        return None
    blocks: list[tuple[int, int, int]] = []
    start = 0
    for k in [*differ, ahi - lo]:  # the stretch's end closes the last block
        if k > start:
            blocks.append((lo + start, lo + start, k - start))
        start = k + 1
    return blocks


def _aligned_changes(a: list[str], b: list[str]) -> list[int] | None:
    """:func:`_differing` of two whole line lists: the shortcut :func:`_unified` takes
    before building blocks and opcodes."""
    return _differing(a, b)


def _aligned(a: list[str], b: list[str], differ: list[int], shift: int, new_shift: int) -> _Plan:
    """The plan of a diff of lines replaced in place at the positions ``differ``: the
    same diff the general path gives, without opcodes for every stretch. A rewrite has a
    hunk per few lines, so the loop works straight on the positions."""
    n, total, m = CONTEXT, len(a), len(differ)
    hunks: list[tuple[int, int, int, int]] = []
    plus: list[str] = []
    runs: list[tuple[int, int]] = []
    lines = 2 if m else 0
    i, reach = 0, 2 * n + 1
    while i < m:
        j = i + 1  # the hunk takes the changes with at most 2n unchanged lines between
        while j < m and differ[j] - differ[j - 1] <= reach:
            j += 1
        lo = differ[i] - n if differ[i] > n else 0
        hi = differ[j - 1] + n + 1
        if hi > total:
            hi = total
        hunks.append((i, j, lo, hi))
        lines += 1 + hi - lo + j - i
        k = i
        while k < j:  # a run of consecutive changed lines
            start = differ[k]
            end = start + 1
            k += 1
            while k < j and differ[k] == end:
                end += 1
                k += 1
            plus.append(b[start] if end - start == 1 else "\n+".join(b[start:end]))
            runs.append((start + 1 + new_shift, end + new_shift))
        i = j
    stat = DiffStat(m, m)
    return _Plan(a, b, shift, new_shift, differ, hunks, [], stat, plus, runs, lines)


def _aligned_text(plan: _Plan, name: str) -> str:
    a, b, differ = plan.old, plan.new, plan.differ
    assert differ is not None
    shift, new_shift = plan.shift, plan.new_shift
    out = _header(name)
    append = out.append
    for i, j, lo, hi in plan.hunks:
        if hi - lo == 1:  # _range's format, written out: this runs once per hunk
            append(f"@@ -{lo + 1 + shift} +{lo + 1 + new_shift} @@")
        else:
            append(f"@@ -{lo + 1 + shift},{hi - lo} +{lo + 1 + new_shift},{hi - lo} @@")
        pos, k = lo, i
        while k < j:  # a run of consecutive changed lines
            start = differ[k]
            end = start + 1
            k += 1
            while k < j and differ[k] == end:
                end += 1
                k += 1
            if start > pos:
                append(" " + "\n ".join(a[pos:start]))
            if end - start == 1:
                append("-" + a[start])
                append("+" + b[start])
            else:
                append("-" + "\n-".join(a[start:end]))
                append("+" + "\n+".join(b[start:end]))
            pos = end
        if hi > pos:
            append(" " + "\n ".join(a[pos:hi]))
    return "\n".join(out) + "\n"


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


def _one_replaced_at(a: list[str], b: list[str]) -> int | None:
    """Where two equally long lists differ, when they differ in one line and neither
    version of that line appears anywhere on the other side (the usual one-line edit);
    None otherwise. difflib gives such a pair one replaced line: no matching block can
    use that line, so its longest blocks are the common head and tail."""
    n = len(a)
    if n != len(b):
        return None
    k = 0
    while k < n and a[k] == b[k]:
        k += 1
    if k == n or a[k + 1 :] != b[k + 1 :] or a[k] in b or b[k] in a:
        return None
    return k


def line_opcodes(a: list[str], b: list[str]) -> list[Opcode]:
    """difflib-style opcodes turning the lines ``a`` into ``b``, found as the diffs here
    find them (unique lines as anchors first on long inputs, so never quadratic in the
    whole length)."""
    return _opcodes(a, b)


def line_splices(old_view: str, new_view: str) -> list[Splice]:
    """The change from ``old_view`` to ``new_view`` as splices of whole lines, one per run
    of lines replaced, added or removed (found as :func:`line_opcodes` finds them): a
    rewrite of a file that keeps most of its lines is a few local changes, not one."""
    a = old_view.splitlines(keepends=True)
    b = new_view.splitlines(keepends=True)
    offsets = [0, *itertools.accumulate(map(len, a))]
    return [
        Splice(offsets[i1], offsets[i2], "".join(b[j1:j2]))
        for tag, i1, i2, j1, j2 in _opcodes(a, b)
        if tag != "equal"
    ]


def _opcodes(a: list[str], b: list[str]) -> list[Opcode]:
    if len(a) + len(b) < SMALL_DIFF:  # (one replaced line took _unified's shortcut)
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


def changed_runs(diff: str) -> list[tuple[int, int, int]]:
    """Each run of changed lines of a diff from :func:`unified`, in order: the first old
    line it replaces (1-based; for a run that only adds lines, the old line it comes
    before), how many old lines it removes and how many new lines it adds."""
    runs: list[tuple[int, int, int]] = []
    old_line = 0
    removed = added = 0
    start = 0

    def close() -> None:
        nonlocal removed, added
        if removed or added:
            runs.append((start, removed, added))
        removed = added = 0

    for line in diff.split("\n")[2:]:
        if line.startswith("@@"):
            close()
            old = line.split(" ")[1][1:]
            first, _, count = old.partition(",")
            # "-5,0" names the line before an insertion: the run comes before line 6
            old_line = int(first) + (1 if count == "0" else 0)
        elif line.startswith("-"):
            if not (removed or added):
                start = old_line
            removed += 1
            old_line += 1
        elif line.startswith("+"):
            if not (removed or added):
                start = old_line
            added += 1
        elif line.startswith(" "):
            close()
            old_line += 1
    close()
    return runs


def changed_ranges(diff: str, new_total: int) -> list[tuple[int, int]]:
    """The lines of the new text a diff from :func:`unified` changed, as 1-based
    ``(first, last)`` runs in order: each run of added or replacing lines, and for lines
    only removed, the line that now stands where they were (the last line, when they
    were at the end; none in a text left empty). ``new_total``: the new text's lines.
    The diff :func:`whole_diff` made last knows its runs already (a write's long diff);
    any other is read line by line."""
    last = _last_whole
    known = last is not None and last._text is diff
    return ranges_of_runs(last.runs if last is not None and known else _runs_of(diff), new_total)


def ranges_of_runs(runs: list[tuple[int, int]], new_total: int) -> list[tuple[int, int]]:
    """:func:`changed_ranges` of a diff's runs (:attr:`WholeDiff.runs`)."""
    joined: list[tuple[int, int]] = []
    for first, end in runs:  # runs that touch (a removal, then what replaced it): one
        if joined and first == joined[-1][1] + 1:
            joined[-1] = (joined[-1][0] if joined[-1][0] <= joined[-1][1] else first, end)
        else:
            joined.append((first, end))
    out: list[tuple[int, int]] = []
    for first, end in joined:
        if first <= end:
            out.append((first, end))
        elif new_total:  # only removed: the line now in their place
            at = min(first, new_total)
            if not out or out[-1][1] < at:
                out.append((at, at))
    return out


def _runs_of(diff: str) -> list[tuple[int, int]]:
    """The runs of changed lines of a diff, as (first, last) lines of the new text
    (``last`` = ``first - 1`` for a run that only removes lines)."""
    runs: list[tuple[int, int]] = []
    line = start = 0
    in_run = False
    for text in diff.split("\n")[2:]:
        kind = text[:1]
        if kind == "-" or kind == "+":
            if not in_run:
                in_run, start = True, line
            if kind == "+":
                line += 1
            continue
        if in_run and kind != "\\":  # a "\ No newline" note stays in its run
            runs.append((start, line - 1))
            in_run = False
        if kind == "@":
            new = text.split(" ")[2][1:]
            first, _, count = new.partition(",")
            # "+5,0" names the line before what was removed: the run is at line 6
            line = int(first) + (1 if count == "0" else 0)
        elif kind == " ":
            line += 1
    if in_run:
        runs.append((start, line - 1))
    return runs


def stat(diff: str) -> DiffStat:
    """Lines added and removed by a diff from :func:`unified`."""
    last = _last_whole
    if last is not None and last._text is diff:
        return last.stat
    if not diff.startswith("--- "):
        return DiffStat(0, 0)
    # Every body line follows a newline; of the two header lines only "+++" does.
    return DiffStat(diff.count("\n+") - 1, diff.count("\n-"))


def splices_diff(
    old_view: str,
    new_view: str,
    splices: Sequence[Splice],
    *,
    name: str,
    firsts: Sequence[int] | None = None,
) -> str:
    """Diff of ordered, non-overlapping ``splices`` on ``old_view`` (``new_view`` is the
    result), built around each group of nearby splices: edits far apart in a big file
    cost what they touch, not the lines between them. ``firsts``: the first line of
    every splice, when known."""
    global _last_spliced
    last = _last_spliced
    if (
        last is not None
        and last[0] is old_view
        and last[1] is new_view
        and last[2] is splices
        and last[3] == name
    ):
        return last[4]  # an edit's result and its history entry diff the same change
    diff = _splices_diff(old_view, new_view, splices, name, firsts)
    if len(old_view) + len(new_view) <= _MEMO_CHARS:
        _last_spliced = (old_view, new_view, splices, name, diff)
    return diff


_last_spliced: tuple[str, str, Sequence[Splice], str, str] | None = None


def _splices_diff(
    old_view: str,
    new_view: str,
    splices: Sequence[Splice],
    name: str,
    firsts: Sequence[int] | None,
) -> str:
    out: list[str] = []
    pos, at_line = 0, 1  # a position in old_view and its line: counting goes forward only
    delta = line_delta = 0  # how far earlier splices moved the new text (chars, lines)
    # [start, end_old, delta, line_delta, first line, last line, growth of the group]
    group: list[int] | None = None
    groups: list[list[int]] = []
    for k, sp in enumerate(splices):
        if firsts is not None:
            first = firsts[k]
        else:
            first = at_line + old_view.count("\n", pos, sp.start)
        pos, at_line = sp.start, first
        last = first + old_view.count("\n", sp.start, max(sp.start, sp.end - 1))
        if _joins_next_line(old_view, sp):
            last += 1
        grow = len(sp.text) - (sp.end - sp.start)
        if group is not None and first - group[5] - 1 <= 2 * CONTEXT:
            group[1], group[5] = sp.end, last
            group[6] += grow
        else:
            group = [sp.start, sp.end, delta, line_delta, first, last, grow]
            groups.append(group)
        delta += grow
        line_delta += sp.text.count("\n") - old_view.count("\n", sp.start, sp.end)
    for start, end_old, before, lines_before, first, _, growth in groups:
        hunks = _window_diff(
            old_view,
            new_view,
            start,
            end_old,
            shift=before,
            growth=growth,
            line=first,
            line_shift=lines_before,
            name=name,
        )
        if hunks:
            out.append(hunks if not out else hunks.split("\n", 2)[2])
    return "".join(out)


def _joins_next_line(old_view: str, sp: Splice) -> bool:
    """Whether the line after a splice that ends at a line start changes too: what is left
    of the splice's first line, with the new text, does not end a line, so the next line
    joins it."""
    end = sp.end
    if end == sp.start or end >= len(old_view) or old_view[end - 1] != "\n":
        return False
    if sp.text:
        return not sp.text.endswith("\n")
    return sp.start > 0 and old_view[sp.start - 1] != "\n"


def _window_diff(
    old_view: str,
    new_view: str,
    change_start: int,
    change_end_old: int,
    *,
    shift: int,
    growth: int,
    line: int,
    line_shift: int,
    name: str,
) -> str:
    """Diff of one region: ``old_view[change_start:change_end_old]`` became
    ``new_view[change_start + shift : change_end_old + shift + growth]``; the text
    around it is the same, moved by ``shift`` characters and ``line_shift`` lines."""
    start = old_view.rfind("\n", 0, change_start) + 1
    back = 0
    for _ in range(CONTEXT):
        if start == 0:
            break
        start = old_view.rfind("\n", 0, start - 1) + 1
        back += 1
    change_end_new = change_end_old + shift + growth
    line_end = _after_line_end(old_view, change_end_old) and _after_line_end(
        new_view, change_end_new
    )
    end_old = _forward_lines(old_view, change_end_old, CONTEXT + 1, line_end)
    end_new = end_old + shift + growth  # the same tail follows in both
    first_line = line - back
    return unified(
        _lines(old_view[start:end_old], at_end=end_old == len(old_view)),
        _lines(new_view[start + shift : end_new], at_end=end_new == len(new_view)),
        name=name,
        first_line=first_line,
        new_first_line=first_line + line_shift,
    )


def _after_line_end(text: str, pos: int) -> bool:
    return 0 < pos <= len(text) and text[pos - 1] == "\n"


def _forward_lines(text: str, pos: int, n: int, line_end: bool) -> int:
    # Position after the end of the line holding ``pos`` and n-1 more lines; with
    # ``line_end``, a change ending just after a newline leaves the next line untouched.
    if line_end:
        pos -= 1
    for _ in range(n):
        i = text.find("\n", pos)
        if i < 0:
            return len(text)
        pos = i + 1
    return pos


class WholeDiff:
    """The diff of two whole texts, whose text is written only when it is asked for
    (:attr:`text`): its counts, its runs of changed lines and its size are known
    before, and a long diff is left out of a result unwritten."""

    __slots__ = ("_plan", "_text", "name", "new", "old")

    def __init__(self, old: str, new: str, name: str, plan: _Plan) -> None:
        self.old = old
        self.new = new
        self.name = name
        self._plan = plan
        self._text: str | None = None

    @property
    def stat(self) -> DiffStat:
        return self._plan.stat

    @property
    def runs(self) -> list[tuple[int, int]]:
        """The runs of changed lines, as (first, last) lines of the new text (``last`` =
        ``first - 1`` for lines only removed)."""
        return self._plan.runs

    @property
    def plus(self) -> list[str]:
        """The runs of added lines, each joined."""
        return _plain(self._plan.plus)

    @property
    def lines_at_least(self) -> int:
        """How many lines (newlines) the text has at least: all but the notes of a last
        line without a line end. 0 when nothing changed."""
        return self._plan.lines

    @property
    def text(self) -> str:
        """The unified diff ("" when nothing changed)."""
        if self._text is None:
            self._text = _render(self._plan, self.name)
        return self._text


#: The last whole-file diff, kept to be handed out again: a write's result, the secret
#: scan of its added lines and its history entry all want the diff of the same texts.
_last_whole: WholeDiff | None = None
_MEMO_CHARS = 1 << 23  # the texts are alive anyway while their change is handled


def whole_change(old_view: str, new_view: str, *, name: str) -> WholeDiff:
    """The diff of two whole texts, its text not written yet (see :class:`WholeDiff`)."""
    global _last_whole
    last = _last_whole
    if last is not None and last.old is old_view and last.new is new_view and last.name == name:
        return last
    _last_whole = last = None  # its line lists go before the next are made: memory reused
    plan = _plan(_lines(old_view, at_end=True), _lines(new_view, at_end=True))
    made = WholeDiff(old_view, new_view, name, plan)
    if len(old_view) + len(new_view) <= _MEMO_CHARS:
        _last_whole = made
    return made


def whole_diff(old_view: str, new_view: str, *, name: str) -> str:
    return whole_change(old_view, new_view, name=name).text


def known_added_text(old_view: str, new_view: str) -> str | None:
    """The added lines (joined by LF) of the whole diff of exactly these two texts, if it
    was just made; None otherwise. Every line a change adds is among them."""
    last = _last_whole
    if last is not None and last.old is old_view and last.new is new_view:
        return "\n".join(last.plus)
    return None


def cut_diff(diff: str, max_bytes: int) -> tuple[str, int]:
    """``diff`` (from :func:`unified`) as a result may carry it: whole when it holds at
    most ``max_bytes`` bytes of UTF-8, else its headers and the first hunks that fit, so
    that what is kept is still a diff that applies ("" when not even the first hunk
    fits). Returns that and how many hunks were left out."""
    if len(diff) * 4 <= max_bytes or len(diff.encode("utf-8", "surrogatepass")) <= max_bytes:
        return diff, 0
    starts = [i + 1 for i in _find_all(diff, "\n@@ ")]
    if not starts:
        return "", 1
    used = len(diff[: starts[0]].encode("utf-8", "surrogatepass"))
    bounds = [*starts, len(diff)]
    for n, (a, b) in enumerate(itertools.pairwise(bounds)):
        used += len(diff[a:b].encode("utf-8", "surrogatepass"))
        if used > max_bytes:
            return (diff[:a].rstrip("\n") if n else ""), len(starts) - n
    return diff, 0


def _find_all(text: str, sub: str) -> list[int]:
    out: list[int] = []
    i = text.find(sub)
    while i >= 0:
        out.append(i)
        i = text.find(sub, i + 1)
    return out

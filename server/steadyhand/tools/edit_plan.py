"""Edits planned as splices (``edit`` and ``multiEdit``): finding the place, checking
the agent was shown it, committing the change, and describing it for the model."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Sequence

from steadyhand.documents.snapshot import (
    ByContent,
    ContentKey,
    Snapshot,
    content_key,
    mixed_view,
)
from steadyhand.protocol.errors import ErrorCode, ToolError
from steadyhand.protocol.lists import list_fields
from steadyhand.protocol.results import Result, success
from steadyhand.state.file_state import FileRecord, Range, missing_lines, shift_ranges
from steadyhand.text.diff import splices_diff, stat, whole_diff
from steadyhand.text.lines import count_lines, ending_stats_spliced, to_view
from steadyhand.text.matching import (
    EXACT,
    MARKDOWN_SUFFIXES,
    EditPlan,
    Found,
    exact_places,
    plan_edit,
)
from steadyhand.text.render import CUT_MARKER_RE, snippet, snippet_at
from steadyhand.text.splices import Splice, apply_splices, raw_splices
from steadyhand.tools.mutation import Preview, Target, commit, preview, reached, told
from steadyhand.tools.records import omitted_note, total_lines


def plan_one(
    view: str,
    path: str,
    old_string: str,
    new_string: str,
    *,
    replace_all: bool = False,
    expected_replacements: int | None = None,
    found: Found | None = None,
) -> EditPlan:
    """The plan for one ``old_string`` → ``new_string`` replacement in ``view``
    (``found``: where ``old_string`` is, when already known)."""
    if old_string == "":
        if view:
            raise ToolError(
                ErrorCode.NO_MATCH,
                f"old_string is empty, but {path} is not empty, so there is no single "
                "place to insert at. Put the neighbouring text in old_string (and in "
                "new_string around your addition), or use write to replace the whole file.",
                path=path,
            )
        if new_string == "":
            raise ToolError(
                ErrorCode.NO_CHANGE,
                "old_string and new_string are both empty: there is nothing to change.",
                path=path,
            )
        return EditPlan(EXACT, (Splice(0, 0, to_view(new_string)),))
    markdown = os.path.splitext(path)[1].lower() in MARKDOWN_SUFFIXES
    if CUT_MARKER_RE.search(old_string) and old_string not in view:
        raise ToolError(
            ErrorCode.NO_MATCH,
            f"old_string contains the marker the read output puts where it cut a long line "
            f"(' … [line cut: N more characters]'); that marker is not in {path}. End "
            "old_string before the marker (or use a shorter stretch of that line) and retry.",
            path=path,
        )
    try:
        return plan_edit(
            view,
            old_string,
            new_string,
            replace_all=replace_all,
            markdown=markdown,
            path=path,
            expected_replacements=expected_replacements,
            found=found,
        )
    except ToolError as err:  # the matching refusals name the file by its real path too
        err.fields.setdefault("path", path)
        raise


async def plan_one_async(
    view: str,
    path: str,
    old_string: str,
    new_string: str,
    *,
    replace_all: bool = False,
    expected_replacements: int | None = None,
) -> EditPlan:
    """:func:`plan_one`, run at once when ``old_string`` is found exactly (or is empty),
    else in a worker thread: the near-miss tiers and the closest-region search are
    bounded in time, and meanwhile the event loop answers every other request."""
    found = exact_places(view, old_string) if old_string else None
    if found is not None or not old_string:
        return plan_one(
            view,
            path,
            old_string,
            new_string,
            replace_all=replace_all,
            expected_replacements=expected_replacements,
            found=found,
        )
    return await asyncio.to_thread(
        plan_one,
        view,
        path,
        old_string,
        new_string,
        replace_all=replace_all,
        expected_replacements=expected_replacements,
    )


#: For content seen before: one (offset, line) known in it, from the last lookup or the
#: last change. Checking what the agent was shown and describing the change look up the
#: same splices, and agents edit near where they edited last, while counting the lines
#: from the top of a 10k-line file takes some 0.1 ms.
_ANCHORS: ByContent[tuple[int, int]] = ByContent()


def _relative_line(text: str, pos: int, known: int, known_line: int) -> int:
    """The line of ``pos`` in ``text``, counted from ``known``, which is on ``known_line``."""
    if pos >= known:
        return known_line + text.count("\n", known, pos)
    return known_line - text.count("\n", pos, known)


def _line_at(view: str, offset: int, key: ContentKey) -> int:
    """The 1-based line of ``offset`` in ``view`` (whose content key is ``key``), counted
    from the known line if that is nearer than the top."""
    at, line = _ANCHORS.get(key) or (0, 1)
    if at > offset and at - offset >= offset:
        at, line = 0, 1
    line = _relative_line(view, offset, at, line)
    _ANCHORS.put(key, (offset, line))
    return line


def splice_lines(view: str, splices: Sequence[Splice], key: ContentKey) -> list[tuple[int, int]]:
    """The first and last line (1-based) of each of the ordered, non-overlapping
    ``splices`` in ``view``, in one forward pass: the lines between splices far apart in
    a big file are counted once, not once per use."""
    out: list[tuple[int, int]] = []
    pos = splices[0].start
    line = _line_at(view, pos, key)
    for sp in splices:
        line += view.count("\n", pos, sp.start)
        pos = sp.start
        out.append((line, line + view.count("\n", sp.start, max(sp.start, sp.end - 1))))
    return out


def changed_span(
    view: str, new_view: str, splices: Sequence[Splice], lines: Sequence[tuple[int, int]]
) -> tuple[int, int, int]:
    """The lines the splices changed: the first, and the last one in the old and in the
    new text (``new_view``: ``view`` with the splices applied; ``lines``: from
    :func:`splice_lines`). The last lines are counted from the last splice's line, so
    nothing between the splices is counted again."""
    first_sp, last_sp = splices[0], splices[-1]
    last_line = lines[-1][0]
    last_old = _relative_line(view, max(first_sp.start, last_sp.end - 1), last_sp.start, last_line)
    moved = sum(sp.text.count("\n") - view.count("\n", sp.start, sp.end) for sp in splices[:-1])
    growth = len(new_view) - len(view)
    last_growth = len(last_sp.text) - (last_sp.end - last_sp.start)
    last_start_new = last_sp.start + growth - last_growth
    new_end = last_sp.end + growth
    last_new = _relative_line(
        new_view, max(first_sp.start, new_end - 1), last_start_new, last_line + moved
    )
    return lines[0][0], last_old, last_new


def shown_after(
    shown: tuple[Range, ...],
    view: str,
    splices: Sequence[Splice],
    lines: Sequence[tuple[int, int]],
) -> tuple[Range, ...]:
    """The lines shown to a session after the ordered ``splices`` changed ``view``
    (``lines``: each splice's first and last line, from :func:`splice_lines`): each
    place moves the lines after it and adds the lines the agent wrote there, and nothing
    between places becomes shown. Splices that share a line count as one place. The last
    line a place touches in the new text holds the rest of an old line; when the replaced
    text ended with a line end before more text, that is a whole old line, which keeps its
    own standing (it is shown only if it was)."""
    # places: [start, end, first line, last line, line ends in the new text]
    places: list[list[int]] = []
    for sp, (first, last) in zip(splices, lines, strict=True):
        k_new = sp.text.count("\n")
        if places:
            p = places[-1]
            end_line = p[3] + (1 if p[0] < p[1] and view[p[1] - 1] == "\n" else 0)
            if first <= end_line:  # the same line: one place, the text between kept
                p[4] += view.count("\n", p[1], sp.start) + k_new
                p[1] = sp.end
                p[3] = p[2] + view.count("\n", p[0], max(p[0], sp.end - 1))
                continue
        places.append([sp.start, sp.end, first, last, k_new])
    for start, end, first, last_old, k_new in reversed(places):
        k_old = view.count("\n", start, end)
        whole_line_after = start < end < len(view) and view[end - 1] == "\n"
        written_last = first + k_new - (1 if whole_line_after else 0)
        shown = shift_ranges(shown, first, last_old, k_new - k_old, written_last)
    return shown


#: Longest window a partial_view refusal asks for in one read (the default read window).
UNSEEN_READ_SPAN = 2000


def shown_lines(
    rec: FileRecord, snap: Snapshot, splices: Sequence[Splice]
) -> list[tuple[int, int]]:
    """Each splice's first and last line (:func:`splice_lines`); refused unless every
    splice lies in lines shown to the session. The refusal names every unseen stretch,
    so one read (or one per stretch, when they lie far apart) is enough."""
    lines = splice_lines(snap.view, splices, content_key(snap))
    if rec.full_view:
        return lines
    gaps: list[tuple[int, int]] = []
    where: tuple[int, int] | None = None  # the first splice that is not all shown
    for first, last in lines:
        pos = first
        while pos <= last:
            gap = missing_lines(rec.shown, pos, last)
            if gap is None:
                break
            where = where or (first, last)
            if not gaps or gap[0] > gaps[-1][1] + 1:
                gaps.append(gap)
            else:
                gaps[-1] = (gaps[-1][0], max(gaps[-1][1], gap[1]))
            pos = gap[1] + 1
    if where is None:
        return lines
    lo = max(1, gaps[0][0] - 5)
    n = gaps[-1][1] - lo + 6
    if len(gaps) == 1 and where[0] <= gaps[0][0] and gaps[0][1] <= where[1]:
        what = (
            f"The text to replace in {snap.path} is on line(s) {where[0]}-{where[1]}, but "
            f"you have not been shown line(s) {gaps[0][0]}-{gaps[0][1]} in this session."
        )
    else:
        shown = ", ".join(f"{a}" if a == b else f"{a}-{b}" for a, b in gaps[:12])
        more = f" and {len(gaps) - 12} more" if len(gaps) > 12 else ""
        what = (
            f"The text to replace in {snap.path} lies partly in lines you have not been "
            f"shown in this session: {shown}{more}."
        )
    if n <= UNSEEN_READ_SPAN:
        step = f" Call read with offset={lo} and limit={n}, then retry the edit."
    else:
        step = (
            " They are too far apart for one read: read each with offset and limit, then "
            "retry the edit, or make the edit only where you have read (without "
            "replace_all, with old_string naming one place)."
        )
    raise ToolError(
        ErrorCode.PARTIAL_VIEW,
        what + step,
        path=snap.path,
        lines=[where[0], where[1]],
        **list_fields("unseen", [[a, b] for a, b in gaps]),
    )


#: At most this many changed lines are shown in an edit's snippet (the diff has them all).
SNIPPET_LINES = 16


def changed_snippet(
    view: str, new_view: str, splices: Sequence[Splice], lines: Sequence[tuple[int, int]]
) -> str:
    """Numbered lines of ``new_view`` (``view`` with the ordered ``splices`` applied) at
    each splice's new text, with two lines of context: nearby splices shown together,
    places further apart separated by a "..." line, at most :data:`SNIPPET_LINES`
    changed lines in all (``lines``: each splice's first and last line in ``view``)."""
    groups: list[list[int]] = []  # [offset in new_view, first line, last line]
    shift = moved = 0
    for sp, (first, _) in zip(splices, lines, strict=True):
        start, new_first = sp.start + shift, first + moved
        new_last = new_first + sp.text.count("\n", 0, max(0, len(sp.text) - 1))
        if groups and new_first - groups[-1][2] <= 5:  # their context lines would meet
            groups[-1][2] = max(groups[-1][2], new_last)
        else:
            groups.append([start, new_first, new_last])
        shift += len(sp.text) - (sp.end - sp.start)
        moved += sp.text.count("\n") - view.count("\n", sp.start, sp.end)
    shown: list[str] = []
    budget = SNIPPET_LINES
    for start, first, last in groups:
        if budget <= 0:
            break
        shown_last = min(last, first + budget - 1)
        budget -= shown_last - first + 1
        shown.append(snippet_at(new_view, start, first, shown_last))
    text = "\n   ...\n".join(shown)
    rest = len(groups) - len(shown)
    if rest:
        places = f"{rest} more changed place{'s' if rest != 1 else ''}"
        text += f"\n   ... and {places} (the diff has every change)"
    return text


async def apply_plan(
    target: Target,
    rec: FileRecord,
    snap: Snapshot,
    plan: EditPlan,
    *,
    summary: str | None = None,
    lines: Sequence[tuple[int, int]],
    new_view: str | None = None,
) -> Result:
    """Turn a plan into the new text, commit it, and describe it.

    A dry run (``target.dry_run``) runs every check, then answers the diff, changing
    nothing (not even the session's record). ``summary`` ("2 edits (3 replacements)")
    replaces "N occurrences" in the message. ``lines``: each splice's first and last line
    (:func:`shown_lines`); ``new_view``: the text with the splices applied, when the
    caller has it.
    """
    ctx = target.ctx
    view = snap.view
    if new_view is None:
        new_view = apply_splices(view, plan.splices)
    if new_view == view:
        raise ToolError(
            ErrorCode.NO_CHANGE,
            f"The edit would leave {snap.path} unchanged (the replacement equals the text "
            "it replaces). Check new_string.",
            path=snap.path,
        )
    newline = snap.endings.dominant
    rsp: Sequence[Splice]
    if snap.raw is view and newline == "\n":  # no CR anywhere: the view is the raw text
        new_raw, rsp = new_view, plan.splices
    else:
        rsp = raw_splices(
            snap.newline_map,
            plan.splices,
            newline,
            mixed_view=mixed_view(snap),
            raw=snap.raw,
        )
        new_raw = apply_splices(snap.raw, rsp)
    change = target.change(snap, new_raw, snap.encoding, splices=plan.splices)
    if target.dry_run:
        seen = await preview(ctx, change)
        return _dry_run_result(target, snap, plan, new_view, summary, lines, seen)
    # what the session has seen moves with the text (all of it, if it saw all)
    shown = None if rec.full_view else shown_after(rec.shown, view, plan.splices, lines)
    # the line-ending counts carry over: no pass over the new text
    endings = ending_stats_spliced(snap.endings, snap.raw, new_raw, rsp)
    applied = await commit(ctx, change, shown=shown, endings=endings)
    after = applied.snapshot

    first_sp = plan.splices[0]
    first_line, _, last_new = changed_span(view, new_view, plan.splices, lines)
    if after.view == new_view:
        # The text before the first splice is unchanged: its line is known in the new text.
        _ANCHORS.put(content_key(after), (first_sp.start, first_line))
        # exactly the planned text: diff around the splices, cut the snippet by offset
        diff = splices_diff(
            view, new_view, plan.splices, name=snap.path, firsts=[a for a, _ in lines]
        )
        shown_snippet = changed_snippet(view, new_view, plan.splices, lines)
    else:  # the editor changed more (a formatter on save), anywhere: diff the whole text
        diff = whole_diff(view, after.view, name=snap.path)
        snippet_last = min(last_new, first_line + SNIPPET_LINES - 1)
        shown_snippet = snippet(after.lines, first_line, snippet_last)
    ds = stat(diff)
    n = plan.replacements
    where = f"line {first_line}" if last_new <= first_line else f"lines {first_line}-{last_new}"
    what = f"applied {summary}" if summary else f"replaced {n} occurrence{'s' if n != 1 else ''}"
    head = f"Edited {snap.path}: {what} ({where}, +{ds.added} / -{ds.removed})."
    if plan.note:
        head += " " + plan.note
    fields = target.diff_fields(diff, total_lines(after))
    message = f"{told(head, applied, fields)}\n{shown_snippet}"
    return success(
        message,
        path=snap.path,
        replacements=n,
        matched=plan.tier.name,
        **fields,
        added=ds.added,
        removed=ds.removed,
        **reached(applied),
    )


def _dry_run_result(
    target: Target,
    snap: Snapshot,
    plan: EditPlan,
    new_view: str,
    summary: str | None,
    lines: Sequence[tuple[int, int]],
    seen: Preview,
) -> Result:
    diff = splices_diff(
        snap.view, new_view, plan.splices, name=snap.path, firsts=[a for a, _ in lines]
    )
    ds = stat(diff)
    n = plan.replacements
    what = f"apply {summary}" if summary else f"replace {n} occurrence{'s' if n != 1 else ''}"
    head = (
        f"Dry run: the edit would {what} in {snap.path} (+{ds.added} / -{ds.removed}); "
        "nothing was changed."
    )
    if plan.note:
        head += " " + plan.note
    head += seen.note()
    fields = target.diff_fields(diff, count_lines(new_view))
    if "diff" in fields:
        shown = str(fields["diff"])  # whole, or cut to whole hunks (then a note says so)
        if omitted_note(fields):
            head += " " + omitted_note(fields)
    else:  # the new text at the places it would change, as an edit's answer shows it
        head += " " + omitted_note(fields)
        shown = changed_snippet(snap.view, new_view, plan.splices, lines)
    return success(
        f"{head}\n{shown}",
        path=snap.path,
        dry_run=True,
        replacements=n,
        matched=plan.tier.name,
        **fields,
        added=ds.added,
        removed=ds.removed,
        **seen.fields(),
    )

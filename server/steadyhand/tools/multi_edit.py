"""The ``multiEdit`` tool: several replacements in one file, all or nothing.

Edits apply in order, each to the text the earlier ones left, with the same matching
rules as ``edit``. They are planned in memory first: if any edit fails, nothing changes
and the refusal names the edit. The planned steps are then composed into splices on the
original text and sent as ONE change (one WorkspaceEdit, one undo step in an editor).
"""

from __future__ import annotations

import asyncio
import itertools

from steadyhand.context import ToolContext
from steadyhand.documents.snapshot import Snapshot
from steadyhand.protocol.errors import ErrorCode, ToolError
from steadyhand.protocol.params import EditItem, MultiEditParams
from steadyhand.protocol.results import Result
from steadyhand.state.file_state import FileRecord
from steadyhand.text.lines import to_view
from steadyhand.text.matching import EXACT, EditPlan, exact_places
from steadyhand.text.splices import Splice, apply_splices, compose
from steadyhand.tools.create import create_file
from steadyhand.tools.edit_plan import apply_plan, plan_one, shown_lines
from steadyhand.tools.mutation import open_target
from steadyhand.tools.records import note_shown

TOOL = "multiEdit"


def _failed(err: ToolError, index: int, total: int, *, planned: bool = True) -> ToolError:
    """The refusal of edit ``index``, worded for the whole call (``planned``: its line
    numbers count in the text the edits before it leave, not in the file as it is)."""
    where = ""
    if planned and index > 0 and ("lines" in err.fields or "closest_lines" in err.fields):
        where = f" (line numbers count in the text as edits 1-{index} would leave it)"
    message = (
        f"Edit {index + 1} of {total} (edits[{index}]) failed, so none of the edits was "
        f"applied{where}: {err.message}"
    )
    return ToolError(err.code, message, **err.fields, edit_index=index)


def plan_all(
    view: str, path: str, edits: list[EditItem], *, before: int = 0
) -> tuple[str, list[tuple[Splice, ...]], list[EditPlan]]:
    """Plan every edit in turn on ``view``: (final text, splices per step, plans).
    ``before``: how many edits of the call came before these (for a refusal's numbers)."""
    current = view
    steps: list[tuple[Splice, ...]] = []
    plans: list[EditPlan] = []
    for i, item in enumerate(edits):
        try:
            plan = plan_one(
                current,
                path,
                item.old_string,
                item.new_string,
                replace_all=item.replace_all,
                expected_replacements=item.expected_replacements,
            )
        except ToolError as err:
            raise _failed(err, before + i, before + len(edits)) from None
        steps.append(plan.splices)
        plans.append(plan)
        current = apply_splices(current, plan.splices)
    return current, steps, plans


def plan_on_base(
    view: str, path: str, edits: list[EditItem]
) -> tuple[str, tuple[Splice, ...], list[EditPlan]] | None:
    """What :func:`plan_all` gives (final text, the edits as splices on ``view``, plans),
    worked out on ``view`` alone, without building the text after each edit; None when
    that cannot be sure to give the same (then :func:`plan_all` plans edit by edit).

    It is sure when every edit matches exactly one place of ``view``, exactly; the places
    are further apart than the longest ``old_string`` (so no edit can reach into another's
    place); and no edit's new text, with what surrounds it, contains the ``old_string`` of
    an edit after it (so no edit makes a second place for a later one).
    """
    if len(edits) < 2:
        return None
    plans: list[EditPlan] = []
    for item in edits:
        if item.replace_all or item.expected_replacements not in (None, 1):
            return None
        found = exact_places(view, item.old_string) if item.old_string else None
        if found is None or len(found.candidates) != 1 or found.overlap is not None:
            return None
        try:
            plan = plan_one(
                view,
                path,
                item.old_string,
                item.new_string,
                expected_replacements=item.expected_replacements,
                found=found,
            )
        except ToolError:
            return None
        plans.append(plan)
    splices = [plan.splices[0] for plan in plans]
    reach = max(len(item.old_string) for item in edits)
    ordered = sorted(splices, key=lambda sp: sp.start)
    if any(b.start - a.end < reach for a, b in itertools.pairwise(ordered)):
        return None
    for i, item in enumerate(edits):
        old, m = item.old_string, len(item.old_string)
        for sp in splices[:i]:
            around = (
                view[max(0, sp.start - m + 1) : sp.start] + sp.text + view[sp.end : sp.end + m - 1]
            )
            if old in around:
                return None
    return apply_splices(view, ordered), tuple(ordered), plans


def _unseen(
    rec: FileRecord,
    snap: Snapshot,
    plans: list[EditPlan],
    steps: list[tuple[Splice, ...]] | None,
    err: ToolError,
) -> ToolError:
    """``err`` (some edit lies outside the lines shown), naming the first edit that does:
    each edit's places are taken on the file as it is (``steps``: the splices of each
    edit on the text the edits before it left; None when every plan is on the file)."""
    for k in range(len(plans)):
        if steps is None:
            mine = plans[k].splices
        else:
            mine = tuple(compose(len(snap.view), steps[: k + 1]))
        try:
            shown_lines(rec, snap, mine)
        except ToolError as first:
            return _failed(first, k, len(plans), planned=False)
    return err


def _summary(plans: list[EditPlan]) -> str:
    n = sum(p.replacements for p in plans)
    text = f"{len(plans)} edit{'s' if len(plans) != 1 else ''} ({n} replacement"
    text += "s" if n != 1 else ""
    notes = [
        f"edit {i + 1} matched with {p.tier.name} tolerance: {'; '.join(p.tolerated)}"
        for i, p in enumerate(plans)
        if p.tolerated
    ]
    return text + "".join(f"; {note}" for note in notes) + ")"


async def multi_edit(ctx: ToolContext, p: MultiEditParams) -> Result:
    async with open_target(
        ctx,
        p.file_path,
        p.session,
        TOOL,
        dry_run=p.dry_run,
        include_diff=p.include_diff,
        accepts="text",
    ) as target:
        path = target.path
        if not target.exists:
            if p.edits[0].old_string != "":
                raise target.not_found()
            first = p.edits[0].new_string
            content = first
            later: list[EditPlan] = []
            if len(p.edits) > 1:
                content, _, later = await asyncio.to_thread(
                    plan_all, to_view(first), path, p.edits[1:], before=1
                )
            made = await create_file(target, content)
            per_edit = [(1, "exact")] + [(pl.replacements, pl.tier.name) for pl in later]
            made["replacements"] = sum(n for n, _ in per_edit)
            made["matched"] = [tier for _, tier in per_edit]
            made["edits"] = [{"replacements": n, "matched": tier} for n, tier in per_edit]
            return made
        rec = target.require_read()
        snap = target.fresh(rec)
        view = snap.view
        on_base = plan_on_base(view, path, p.edits)
        steps: list[tuple[Splice, ...]] | None = None
        if on_base is not None:
            final, composed, plans = on_base
        else:
            try:
                # edit by edit, in a worker thread: a near-miss search is bounded in
                # time, and the event loop answers other requests meanwhile
                final, each, plans = await asyncio.to_thread(plan_all, view, path, p.edits)
            except ToolError as err:
                if not p.dry_run and err.fields.get("edit_index") == 0:
                    note_shown(target.session, rec, err)
                raise
            steps = each
            composed = compose(len(view), each)
        if final == view:
            raise ToolError(
                ErrorCode.NO_CHANGE,
                f"Together the {len(p.edits)} edits would leave {path} unchanged, so nothing "
                "was applied. Check the new_string values.",
                path=path,
            )
        combined = EditPlan(EXACT, composed)
        try:
            lines = shown_lines(rec, snap, combined.splices)
        except ToolError as err:
            raise _unseen(rec, snap, plans, steps, err) from None
        result = await apply_plan(
            target,
            rec,
            snap,
            combined,
            summary=_summary(plans),
            lines=lines,
            new_view=final,
        )
        result["replacements"] = sum(pl.replacements for pl in plans)
        result["matched"] = [pl.tier.name for pl in plans]
        result["edits"] = [
            {"replacements": pl.replacements, "matched": pl.tier.name} for pl in plans
        ]
        return result

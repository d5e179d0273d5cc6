"""The ``edit`` tool: exact string replacement, guarded by read-before-write."""

from __future__ import annotations

from steadyhand.context import ToolContext
from steadyhand.protocol.errors import ToolError
from steadyhand.protocol.params import EditParams
from steadyhand.protocol.results import Result
from steadyhand.tools.create import create_file
from steadyhand.tools.edit_plan import apply_plan, plan_one_async, shown_lines
from steadyhand.tools.mutation import open_target
from steadyhand.tools.records import note_shown


async def edit(ctx: ToolContext, p: EditParams) -> Result:
    async with open_target(
        ctx,
        p.file_path,
        p.session,
        "edit",
        dry_run=p.dry_run,
        include_diff=p.include_diff,
        accepts="text",
    ) as target:
        if not target.exists:
            if p.old_string == "":
                return await create_file(target, p.new_string)
            raise target.not_found()
        rec = target.require_read()
        snap = target.fresh(rec)
        try:
            plan = await plan_one_async(
                snap.view,
                snap.path,
                p.old_string,
                p.new_string,
                replace_all=p.replace_all,
                expected_replacements=p.expected_replacements,
            )
        except ToolError as err:
            if not p.dry_run:
                note_shown(target.session, rec, err)
            raise
        lines = shown_lines(rec, snap, plan.splices)
        return await apply_plan(target, rec, snap, plan, lines=lines)

"""The ``write`` tool: create a file, or replace one the agent has fully read."""

from __future__ import annotations

from steadyhand.context import ToolContext
from steadyhand.protocol.errors import ErrorCode, ToolError
from steadyhand.protocol.params import WriteParams
from steadyhand.protocol.results import Result, success
from steadyhand.text.diff import stat, whole_diff
from steadyhand.text.lines import ending_stats, line_ending_name, to_view
from steadyhand.tools.create import create_file
from steadyhand.tools.mutation import commit, open_target, preview, reached, told
from steadyhand.tools.records import (
    full_range,
    lines_from,
    omitted_note,
    record_for,
    total_lines,
)


async def write(ctx: ToolContext, p: WriteParams) -> Result:
    async with open_target(
        ctx, p.file_path, p.session, "write", dry_run=p.dry_run, include_diff=p.include_diff
    ) as target:
        if not target.exists:
            return await create_file(target, p.content)
        path = target.path
        rec = target.require_read()
        snap = target.fresh(rec)
        if not rec.full_view:
            ranges = ", ".join(f"{a}-{b}" for a, b in rec.shown) or "none"
            raise ToolError(
                ErrorCode.PARTIAL_VIEW,
                f"You have seen only part of {path} (lines {ranges} of {rec.total_lines}); "
                "write replaces the whole file, so read all of it first (offset and limit "
                "for the rest), or use edit to change just the part you saw.",
                path=path,
            )
        content = p.content
        if snap.encoding.bom and content.startswith("\ufeff"):
            # the file's byte-order mark is written anyway (the text read showed none):
            # one copied into the content would become a stray character after it
            content = content[1:]
        change = target.change(snap, content, snap.encoding)
        new_view = to_view(content)
        diff = whole_diff(snap.view, new_view, name=path)
        ds = stat(diff)
        new_endings = ending_stats(content)
        before_lines, after_lines = total_lines(snap), lines_from(content, new_endings)
        fields: dict[str, object] = {
            "path": path,
            "type": "update",
            "lines_before": before_lines,
            "lines_after": after_lines,
            "added": ds.added,
            "removed": ds.removed,
            **target.diff_fields(diff, after_lines),
        }
        note = " " + omitted_note(fields) if omitted_note(fields) else ""
        if p.dry_run:
            same = " (it already holds exactly this content)" if content == snap.raw else ""
            seen = await preview(ctx, change)
            warning = seen.note()
            return success(
                f"Dry run: writing would update {path}{same}: {before_lines} line(s) before, "
                f"{after_lines} line(s) after (≈ +{ds.added} / -{ds.removed}); nothing was "
                f"written.{warning}{note}",
                **fields,
                dry_run=True,
                **seen.fields(),
            )
        if content == snap.raw:
            target.session.put(record_for(snap, full_range(snap), None))
            return success(
                f"{path} already holds exactly this content; nothing was written.",
                **fields,
                via="none",
                on_disk=True,
            )
        applied = await commit(ctx, change, endings=new_endings)
        message = (
            f"The file {path} has been updated successfully. {before_lines} line(s) before, "
            f"{after_lines} line(s) after (≈ +{ds.added} / -{ds.removed})."
        )
        old_style, new_style = snap.endings.style, new_endings.style
        if old_style not in ("none", new_style) and new_style != "none":
            message += (
                f" Line endings changed from {line_ending_name(old_style)} to "
                f"{line_ending_name(new_style)}, as written."
            )
        return success(told(message, applied, fields), **fields, **reached(applied))

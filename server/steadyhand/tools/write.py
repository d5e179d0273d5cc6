"""The ``write`` tool: create a file, or replace one the agent has fully read."""

from __future__ import annotations

from stat import S_ISDIR

from steadyhand.documents.snapshot import prime_endings
from steadyhand.fs.reader import encode_or_refuse
from steadyhand.guards.protected import check_writable
from steadyhand.guards.syntax import check_syntax
from steadyhand.guards.world import check_secrets, dry_run_fields, dry_run_note, findings_fields
from steadyhand.protocol.errors import ErrorCode, ToolError
from steadyhand.protocol.params import WriteParams
from steadyhand.protocol.results import Result, success
from steadyhand.text.diff import stat, whole_diff
from steadyhand.text.encoding import UTF8, Encoding
from steadyhand.text.lines import count_lines, ending_stats, line_ending_name, to_view
from steadyhand.tools.context import Change, ToolContext
from steadyhand.tools.dry_run import check_fresh
from steadyhand.tools.records import (
    full_range,
    lines_from,
    record_for,
    remember,
    require_read,
    total_lines,
)


def encode_for(ctx: ToolContext, path: str, text: str, enc: Encoding) -> bytes:
    """Bytes to store, or ``too_large`` / ``io_error`` when they cannot be stored."""
    data = encode_or_refuse(path, text, enc)
    cap = ctx.settings.max_write_bytes
    if len(data) > cap:
        raise ToolError(
            ErrorCode.TOO_LARGE,
            f"The new content of {path} would be {len(data):,} bytes, over the {cap:,}-byte "
            "write limit. Split the content into smaller files.",
            path=path,
        )
    return data


async def _notify(ctx: ToolContext, path: str, tool: str) -> None:
    if ctx.on_change is not None:
        r = ctx.on_change(path, tool)
        if r is not None:
            await r


async def create_file(
    ctx: ToolContext,
    path: str,
    content: str,
    session_name: str,
    *,
    tool: str,
    dry_run: bool = False,
) -> Result:
    """Create a new file (and its folders) holding ``content`` (``dry_run``: only say so)."""
    data = encode_for(ctx, path, content, UTF8)
    change = Change(path, None, content, data, UTF8, tool, session=session_name)
    if dry_run:
        findings = await check_secrets(ctx, change)
        syntax = check_syntax(ctx, change)
        n = count_lines(to_view(content))
        diff = whole_diff("", to_view(content), name=path)
        warning = dry_run_note(findings, syntax)
        return success(
            f"Dry run: {path} does not exist; the {tool} would create it with {n} lines "
            f"({len(data)} bytes). Nothing was written.{warning}",
            path=path,
            type="create",
            lines=n,
            bytes=len(data),
            added=n,
            removed=0,
            diff=diff,
            dry_run=True,
            **({"replacements": 1, "matched": "exact"} if tool != "write" else {}),
            **dry_run_fields(findings, syntax),
        )
    applied = await ctx.world.apply(change)
    after = applied.snapshot
    ctx.sessions.get(session_name).put(
        record_for(after, full_range(after), None, remember(ctx, after))
    )
    lines = count_lines(to_view(content))
    message = f"File created successfully at: {path} (wrote {lines} lines, {len(data)} bytes)."
    if applied.note:
        message += " " + applied.note
    await _notify(ctx, path, tool)
    edit_fields: dict[str, object] = {}
    if tool != "write":  # an edit's fields: what it replaced (nothing) and the diff
        edit_fields = {
            "replacements": 1,
            "matched": "exact",
            "diff": whole_diff("", to_view(content), name=path),
        }
    return success(
        message,
        path=path,
        type="create",
        lines=lines,
        bytes=len(data),
        added=lines,
        removed=0,
        via=applied.via,
        on_disk=applied.on_disk,
        **edit_fields,
        **findings_fields(applied),
    )


async def write(ctx: ToolContext, p: WriteParams) -> Result:
    rp = ctx.resolve(p.file_path)
    path = rp.path
    check_writable(ctx, path, p.session)
    if rp.stat is not None and S_ISDIR(rp.stat.st_mode):
        raise ToolError(
            ErrorCode.IS_DIRECTORY,
            f"{path} is a directory, so it cannot be written as a file. Choose a file path "
            "(for example a name inside that folder).",
            path=path,
        )
    async with ctx.locks.hold(path) as held:
        buffer = ctx.world.current(path)
        if buffer is None and rp.status(again=held.waited) is None:
            return await create_file(
                ctx, path, p.content, p.session, tool="write", dry_run=p.dry_run
            )
        session = ctx.sessions.get(p.session)
        rec = require_read(session, path, "write")
        snap = buffer if buffer is not None else ctx.snapshot(path)
        check_fresh(ctx, session, rec, snap, "write", dry_run=p.dry_run)
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
        data = encode_for(ctx, path, content, snap.encoding)
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
            "diff": diff,
        }
        change = Change(path, snap, content, data, snap.encoding, "write", session=p.session)
        if p.dry_run:
            same = " (it already holds exactly this content)" if content == snap.raw else ""
            findings = await check_secrets(ctx, change)
            syntax = check_syntax(ctx, change)
            warning = dry_run_note(findings, syntax)
            return success(
                f"Dry run: writing would update {path}{same}: {before_lines} line(s) before, "
                f"{after_lines} line(s) after (≈ +{ds.added} / -{ds.removed}); nothing was "
                f"written.{warning}",
                **fields,
                dry_run=True,
                **dry_run_fields(findings, syntax),
            )
        if content == snap.raw:
            session.put(record_for(snap, full_range(snap), None))
            return success(
                f"{path} already holds exactly this content; nothing was written.",
                **fields,
                via="none",
                on_disk=True,
            )
        applied = await ctx.world.apply(change)
        after = applied.snapshot
        if after.raw is content:
            prime_endings(after, new_endings)
        session.put(record_for(after, full_range(after), None, remember(ctx, after)))
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
        if applied.note:
            message += " " + applied.note
        await _notify(ctx, path, "write")
        return success(
            message,
            **fields,
            via=applied.via,
            on_disk=applied.on_disk,
            **findings_fields(applied),
        )

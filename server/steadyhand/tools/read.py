"""The ``read`` tool: numbered lines of a file, and a record of what the agent saw."""

from __future__ import annotations

import asyncio
import os

from steadyhand.context import ToolContext
from steadyhand.documents.snapshot import Snapshot, from_raw
from steadyhand.fs.checked_open import Replaced, identity
from steadyhand.fs.reader import stream_window
from steadyhand.guards.secrets import read_note
from steadyhand.guards.syntax import prime_file, prime_read
from steadyhand.paths.resolve import ResolvedPath
from steadyhand.protocol.errors import ErrorCode, ToolError
from steadyhand.protocol.params import ReadParams
from steadyhand.protocol.results import Result, success
from steadyhand.text.render import estimate_tokens, number_lines_within
from steadyhand.tools import read_formats as formats
from steadyhand.tools.records import file_unchanged
from steadyhand.tools.seen import disk_record, seen_bytes, seen_text
from steadyhand.tools.suggest import not_found

#: How many times a read resolves its path again when the file opened was not the one
#: resolved (replaced in between, by another program's save, say) before it gives up.
REPLACED_TRIES = 3


async def read(ctx: ToolContext, p: ReadParams) -> Result:
    """Read ``p.file_path``: every check made on the path holds for the file opened (a
    file replaced between the two is resolved again)."""
    for attempt in range(REPLACED_TRIES):
        try:
            return await _read(ctx, p)
        except Replaced:
            if attempt == REPLACED_TRIES - 1:
                raise
    raise AssertionError("unreachable")


async def _read(ctx: ToolContext, p: ReadParams) -> Result:
    assert p.file_path is not None  # a read of several files goes to read_many
    rp = ctx.resolve(p.file_path)
    resolved = identity(rp.stat)
    if not rp.exists and ctx.world.current(rp.path) is None:
        raise not_found(rp.path)
    if rp.stat is not None and os.path.isdir(rp.path):
        raise ToolError(
            ErrorCode.IS_DIRECTORY,
            f"{rp.path} is a directory, not a file. Read a file inside it instead "
            "(list the folder with your shell or search tool to find one).",
            path=rp.path,
        )
    size = rp.stat.st_size if rp.stat is not None else 0
    buffer = ctx.world.current(rp.path)
    # A file small enough to read whole, with no telling name, is read once: its first
    # bytes say whether it is an image or a PDF, the rest is the text.
    by_content = (
        buffer is None
        and p.pages is None
        and 0 < size <= ctx.settings.max_read_bytes
        and formats.kind_by_name(rp.path) is None
    )
    if not by_content:
        special = await formats.read_special(ctx, p, rp)
        if special is not None:
            return special  # a notebook, image or PDF
    offset = max(1, p.offset) if p.offset is not None else None
    whole = offset is None and p.limit is None
    if buffer is None and size > ctx.settings.max_read_bytes:
        if whole:
            # Refused, but with the file's outline so the model can choose a range.
            raise await formats.outline_large_file(ctx, p, rp)
        return await _read_large(ctx, p, rp, offset or 1)
    async with ctx.locks.hold(rp.path):
        snap = ctx.world.current(rp.path)  # the buffer, if the file was opened meanwhile
        if snap is None:
            raw = ctx.read_raw(rp.path, expect=resolved)
            if not by_content or formats.kind_by_head(raw.data) is None:
                snap = from_raw(rp.path, raw)
        if snap is not None:
            return _read_snapshot(ctx, p, snap, offset, whole)
    special = await formats.read_special(ctx, p, rp)  # an image or PDF by its content
    if special is not None:
        return special
    # Not one after all (a damaged image, say): the text path says what it is.
    async with ctx.locks.hold(rp.path):
        return _read_snapshot(ctx, p, ctx.snapshot(rp.path, expect=resolved), offset, whole)


def _read_snapshot(
    ctx: ToolContext, p: ReadParams, snap: Snapshot, offset: int | None, whole: bool
) -> Result:
    s = ctx.settings
    lines = snap.lines
    total = len(lines)
    prime_read(ctx, snap)  # the syntax tree of what an edit will change, built meanwhile
    start = offset or 1
    limit = p.limit or s.default_read_lines
    key = (p.offset, p.limit)
    seen = seen_text(ctx, p.session, snap)
    fields = _fields(snap, total)

    if seen.again(key):
        return file_unchanged(snap.path, start, fields, what="these lines")

    if total == 0:
        seen.store_text(snap, seen.shown(), key)
        return success(
            f"{snap.path} exists but is empty (0 lines).",
            type="text",
            start_line=1,
            num_lines=0,
            **fields,
        )
    if start > total:
        seen.store_text(snap, seen.shown(), None)
        return success(
            f"{snap.path} has only {total} line(s), so offset {start} is past its end. "
            f"Read with an offset between 1 and {total}.",
            type="text",
            start_line=start,
            num_lines=0,
            **fields,
        )
    end = min(total, start + limit - 1)
    window = lines[start - 1 : end]
    # The window stops at the byte cap of one answer.
    body, cut, fit = number_lines_within(window, start, s.max_line_chars, s.max_read_bytes)
    capped = fit < len(window)
    end = start + fit - 1
    if whole and estimate_tokens(body) > s.max_read_tokens:
        raise formats.outline_snapshot(ctx, p, snap, estimate_tokens(body))
    seen.store_text(snap, seen.shown((start, end)), key)
    notes = _notes(snap, start, end, total, cut, s.max_read_bytes if capped else None)
    message = body + ("\n\n" + " ".join(notes) if notes else "")
    return success(
        message,
        type="text",
        start_line=start,
        num_lines=end - start + 1,
        truncated_lines=cut,
        **fields,
    )


def _fields(snap: Snapshot, total: int) -> dict[str, object]:
    f: dict[str, object] = {
        "path": snap.path,
        "total_lines": total,
        "source": snap.source,
        "encoding": snap.encoding.label,
        "line_ending": snap.endings.style,
    }
    if snap.source == "buffer":
        f["version"] = snap.version
        f["unsaved"] = bool(snap.unsaved)
    return f


def _capped(max_bytes: int | None) -> str:
    """The note's words for a window cut at the byte cap of one answer."""
    if max_bytes is None:
        return ""
    return f" (more lines would pass the {max_bytes:,}-byte limit of one read)"


def _notes(
    snap: Snapshot, start: int, end: int, total: int, cut: bool, capped: int | None = None
) -> list[str]:
    notes: list[str] = []
    if end < total or start > 1:
        more = f" To read more, call read with offset={end + 1}." if end < total else ""
        notes.append(f"(Showing lines {start}-{end} of {total}{_capped(capped)}.{more})")
    if cut:
        notes.append("(Some long lines were cut; the marker shows how much.)")
    if snap.source == "buffer" and snap.unsaved:
        notes.append("(This is the editor's open buffer, which has unsaved changes.)")
    if snap.encoding.codec == "latin-1":
        notes.append("(The file is not valid UTF-8; it was read as Latin-1.)")
    secrets_note = read_note(
        snap.path,
        snap.lines[start - 1 : end],
        start,
        content_key=snap.view_hash,
        all_lines=snap.lines,
    )
    if secrets_note:
        notes.append(secrets_note)
    return notes


async def _read_large(ctx: ToolContext, p: ReadParams, rp: ResolvedPath, start: int) -> Result:
    s = ctx.settings
    limit = p.limit or s.default_read_lines
    async with ctx.locks.hold(rp.path):
        win = await asyncio.to_thread(
            stream_window,
            rp.path,
            start,
            limit,
            s.max_read_bytes,
            links_ok=ctx.roots.allow_hard_links,
            expect=identity(rp.stat),
        )
    total = win.total_lines
    style = "mixed" if (win.crlf and win.cr) else "crlf" if win.crlf else "cr" if win.cr else "lf"
    fields: dict[str, object] = {
        "path": rp.path,
        "total_lines": total,
        "source": "disk",
        "encoding": win.encoding.label,
        "line_ending": style,
    }
    seen = seen_bytes(ctx, p.session, rp.path, win.hash)
    key = (p.offset, p.limit)
    if seen.again(key):
        return file_unchanged(rp.path, start, fields, what="these lines")
    # The window stops at the byte cap of one answer (the reader keeps no more than that).
    body, cut, fit = number_lines_within(win.lines, start, s.max_line_chars, s.max_read_bytes)
    shown_lines = win.lines[:fit]
    capped = fit < len(win.lines) or win.capped
    end = start + len(shown_lines) - 1
    seen.store(
        disk_record(
            rp.path,
            win.hash,
            win.st.st_size,
            win.st.st_mtime_ns,
            encoding=win.encoding.label,
            line_ending=style,
            total=total,
            shown=seen.shown((start, end)) if shown_lines else seen.shown(),
            key=key if shown_lines else None,
        )
    )
    first = win.lines[0] if start == 1 and win.lines else ""
    prime_file(ctx, rp.path, first, win.hash, win.st.st_size)
    if not shown_lines:
        return success(
            f"{rp.path} has only {total} line(s), so offset {start} is past its end. "
            f"Read with an offset between 1 and {total}.",
            type="text",
            start_line=start,
            num_lines=0,
            **fields,
        )
    more = f" To read more, call read with offset={end + 1}." if end < total else ""
    limited = _capped(s.max_read_bytes if capped and end < total else None)
    notes = [
        f"(Showing lines {start}-{end} of {total} of a large file: {win.st.st_size:,} "
        f"bytes{limited}.{more})"
    ]
    if cut:
        notes.append("(Some long lines were cut; the marker shows how much.)")
    return success(
        body + "\n\n" + " ".join(notes),
        type="text",
        start_line=start,
        num_lines=len(shown_lines),
        truncated_lines=cut,
        **fields,
    )

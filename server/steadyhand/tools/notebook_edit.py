"""The ``notebookEdit`` tool: replace, insert or delete one cell of a Jupyter notebook.

The same rules as ``edit``: the notebook must have been read in this session and be
unchanged since (by hash), and the cell concerned must have been shown. Only the spans
the edit changes are rewritten (see :mod:`steadyhand.formats.notebook`); the change goes
to the world like any other, so it is atomic on disk and goes through the editor for an
open document.
"""

from __future__ import annotations

import os

from steadyhand.documents.snapshot import Snapshot, mixed_view
from steadyhand.formats import notebook as nb_fmt
from steadyhand.guards.protected import check_writable
from steadyhand.guards.world import findings_fields
from steadyhand.protocol.errors import ErrorCode, ToolError
from steadyhand.protocol.params import NotebookEditParams
from steadyhand.protocol.results import Result, success
from steadyhand.state.file_state import FileRecord, Range, missing_lines, shift_ranges
from steadyhand.text.diff import stat, whole_diff
from steadyhand.text.matching import apply_splices, raw_splices
from steadyhand.tools.context import Change, ToolContext
from steadyhand.tools.records import record_for, refuse_if_stale, remember, require_read
from steadyhand.tools.suggest import not_found
from steadyhand.tools.write import encode_for

TOOL = "notebookEdit"


def refuse_notebook(ctx: ToolContext, path: str) -> None:
    """Raise ``wrong_tool`` when ``path`` is a notebook: its cells are changed with
    notebookEdit. A ``.ipynb`` that is not valid notebook JSON may be repaired with edit."""
    if not nb_fmt.is_notebook_path(path):
        return
    try:
        nb_fmt.parse(ctx.snapshot(path).view)
    except (nb_fmt.NotebookError, ToolError):
        return
    raise ToolError(
        ErrorCode.WRONG_TOOL,
        f"{path} is a Jupyter notebook; edit does not change notebooks, because their "
        "JSON must stay valid. Use notebookEdit with the cell's id (from read) and "
        "new_source instead.",
        path=path,
        use="steadyhand.notebookEdit",
    )


def _cells_list(nb: nb_fmt.Notebook, limit: int = 12) -> str:
    ids = [f"{c.id} ({c.cell_type})" for c in nb.cells[:limit]]
    more = f", … ({len(nb.cells) - limit} more)" if len(nb.cells) > limit else ""
    return ", ".join(ids) + more if ids else "none"


def _require_shown(rec: FileRecord, path: str, index: int, what: str) -> None:
    if rec.full_view:
        return
    if missing_lines(rec.shown, index, index) is None:
        return
    raise ToolError(
        ErrorCode.PARTIAL_VIEW,
        f"You have not been shown cell {index} of {path} in this session, which this "
        f"{what} concerns. Call read with offset={index} and limit=1, then retry.",
        path=path,
        cell=index,
    )


async def notebook_edit(ctx: ToolContext, p: NotebookEditParams) -> Result:
    rp = ctx.resolve(p.file_path)
    path = rp.path
    check_writable(ctx, path, p.session)
    if not nb_fmt.is_notebook_path(path):
        raise ToolError(
            ErrorCode.WRONG_TOOL,
            f"{path} is not a Jupyter notebook (.ipynb); notebookEdit changes notebook "
            "cells only. Use edit or write for other files.",
            path=path,
            use="steadyhand.edit",
        )
    mode = p.edit_mode
    async with ctx.locks.hold(path):
        buffer = ctx.world.current(path)
        if buffer is None and not os.path.lexists(path):
            raise not_found(path)
        if buffer is None and os.path.isdir(path):
            raise ToolError(
                ErrorCode.IS_DIRECTORY,
                f"{path} is a directory; notebookEdit changes notebook files.",
                path=path,
            )
        session = ctx.sessions.get(p.session)
        rec = require_read(session, path, TOOL)
        snap = buffer if buffer is not None else ctx.snapshot(path)
        refuse_if_stale(ctx, session, rec, snap, "notebook edit")
        try:
            nb = nb_fmt.parse(snap.view)
        except nb_fmt.NotebookError as exc:
            raise ToolError(
                ErrorCode.UNREADABLE,
                f"{path} is not a valid notebook ({exc}), so its cells cannot be located. "
                "Repair its JSON with edit (read shows it as text), then retry.",
                path=path,
                reason="corrupt",
            ) from exc
        cell = nb.find(p.cell_id) if p.cell_id else None
        if p.cell_id and cell is None:
            raise ToolError(
                ErrorCode.NO_MATCH,
                f"{path} has no cell with id {p.cell_id!r}. Its cells are: "
                f"{_cells_list(nb)}. Use an id exactly as read shows it.",
                path=path,
            )
        if mode == "replace":
            assert cell is not None
            _require_shown(rec, path, cell.index, "replace")
            change = nb_fmt.replace_cell(nb, cell, p.new_source, p.cell_type)
            if (
                change.old_source == change.new_source
                and not change.cleared_outputs
                and (p.cell_type in (None, cell.cell_type))
            ):
                raise ToolError(
                    ErrorCode.NO_CHANGE,
                    f"Cell {cell.id} of {path} already has exactly this source; nothing "
                    "was changed.",
                    path=path,
                )
        elif mode == "insert":
            assert p.cell_type is not None
            if cell is not None:
                _require_shown(rec, path, cell.index, "insert")
            change = nb_fmt.insert_cell(nb, cell, p.new_source, p.cell_type)
        else:
            assert cell is not None
            _require_shown(rec, path, cell.index, "delete")
            change = nb_fmt.delete_cell(nb, cell)
        return await _apply(ctx, p, rec, snap, nb, change)


async def _apply(
    ctx: ToolContext,
    p: NotebookEditParams,
    rec: FileRecord,
    snap: Snapshot,
    nb: nb_fmt.Notebook,
    change: nb_fmt.CellEdit,
) -> Result:
    path = snap.path
    rsp = raw_splices(
        snap.newline_map, change.splices, snap.endings.dominant, mixed_view=mixed_view(snap)
    )
    new_raw = apply_splices(snap.raw, rsp)
    try:
        after_nb = nb_fmt.parse(apply_splices(snap.view, list(change.splices)))
    except nb_fmt.NotebookError as exc:  # a bug, never the model's fault: refuse, keep the file
        raise ToolError(
            ErrorCode.IO_ERROR,
            f"The notebook edit would not leave {path} valid ({exc}), so nothing was "
            "written. Retry once; if it fails again, tell the user.",
            path=path,
        ) from exc
    data = encode_for(ctx, path, new_raw, snap.encoding)
    applied = await ctx.world.apply(
        Change(
            path,
            snap,
            new_raw,
            data,
            snap.encoding,
            TOOL,
            splices=change.splices,
            session=p.session,
        )
    )
    after = applied.snapshot
    total = len(after_nb.cells)
    i = change.index
    mode = p.edit_mode
    shown: tuple[Range, ...]
    if rec.full_view:
        shown = ((1, total),) if total else ()
    elif mode == "insert":
        shown = shift_ranges(rec.shown, i, i - 1, 1, i)
    elif mode == "delete":
        shown = shift_ranges(rec.shown, i, i, -1, i - 1)
    else:
        shown = shift_ranges(rec.shown, i, i, 0, i)
    session = ctx.sessions.get(p.session)
    session.put(record_for(after, shown, None, remember(ctx, after)).replace(total_lines=total))

    name = f"{path}#{change.cell_id}"
    diff = whole_diff(change.old_source, change.new_source, name=name.lstrip("/"))
    ds = stat(diff)
    if mode == "replace":
        head = (
            f"Replaced the source of cell {i} (id {change.cell_id}, {change.cell_type}) in {path}"
        )
        if p.cell_type is not None and change.cell_type != nb.cells[i - 1].cell_type:
            head += f", now a {change.cell_type} cell"
        if change.cleared_outputs:
            head += "; its outputs and execution count were cleared"
        head += f" (+{ds.added} / -{ds.removed})."
    elif mode == "insert":
        where = "at the top" if i == 1 else f"after cell {i - 1}"
        head = (
            f"Inserted a new {change.cell_type} cell {where} of {path}: it is cell {i}, "
            f"id {change.cell_id} (+{ds.added} line(s))."
        )
    else:
        head = (
            f"Deleted cell {i} (id {change.cell_id}, {change.cell_type}) from {path} "
            f"(-{ds.removed} line(s))."
        )
    head += f" The notebook now has {total} cell(s)."
    if applied.note:
        head += " " + applied.note
    if ctx.on_change is not None:
        r = ctx.on_change(path, TOOL)
        if r is not None:
            await r
    return success(
        head,
        path=path,
        edit_mode=mode,
        cell_id=change.cell_id,
        cell_index=i,
        cell_type=change.cell_type,
        total_cells=total,
        diff=diff,
        added=ds.added,
        removed=ds.removed,
        via=applied.via,
        on_disk=applied.on_disk,
        **findings_fields(applied),
    )

"""The ``notebookEdit`` tool: replace, insert or delete one cell of a Jupyter notebook.

The same rules as ``edit``: the notebook must have been read in this session and be
unchanged since (by hash), and the cell concerned must have been shown. Only the spans
the edit changes are rewritten (see :mod:`steadyhand.formats.notebook`); the change goes
to the world like any other, so it is atomic on disk and goes through the editor for an
open document.
"""

from __future__ import annotations

import bisect

from steadyhand.context import ToolContext
from steadyhand.documents.snapshot import Snapshot, mixed_view
from steadyhand.formats import notebook as nb_fmt
from steadyhand.protocol.errors import ErrorCode, ToolError
from steadyhand.protocol.lists import list_fields, named
from steadyhand.protocol.params import NotebookEditParams
from steadyhand.protocol.results import Result, success
from steadyhand.state.file_state import (
    FileRecord,
    Range,
    Session,
    covers,
    missing_lines,
    shift_ranges,
)
from steadyhand.text.diff import stat, whole_diff
from steadyhand.text.lines import count_lines, to_view
from steadyhand.text.splices import apply_splices, raw_splices
from steadyhand.tools.fresh import NOTEBOOK_TOOL
from steadyhand.tools.mutation import Target, commit, open_target, reached, told

TOOL = "notebookEdit"


def _cells_list(nb: nb_fmt.Notebook, limit: int = 12) -> str:
    ids = [f"{c.id} ({c.cell_type})" for c in nb.cells[:limit]]
    more = f", … ({len(nb.cells) - limit} more)" if len(nb.cells) > limit else ""
    return ", ".join(ids) + more if ids else "none"


def _named_cell(nb: nb_fmt.Notebook, path: str, name: str) -> nb_fmt.CellSpan:
    """The one cell ``name`` names, or the refusal that says how to name it."""
    ref = nb.lookup(name)
    if len(ref.cells) > 1:
        where = [c.index for c in ref.cells]
        names = named([f"cell-{i}" for i in where], joiner=" or ")
        raise ToolError(
            ErrorCode.AMBIGUOUS,
            f"{len(where)} cells of {path} have the id {name!r} (cells "
            f"{named([str(i) for i in where])}), so it does not say which one to change. "
            f"Name the one you mean by its position instead: {names}.",
            path=path,
            matches=len(where),
            **list_fields("cells", where),
        )
    if not ref.cells:
        raise ToolError(
            ErrorCode.NO_MATCH,
            f"{path} has no cell with id {name!r}. Its cells are: "
            f"{_cells_list(nb)}. Use an id exactly as read shows it.",
            path=path,
        )
    cell = ref.cells[0]
    if ref.by_position and not nb_fmt.named_by_position(cell, nb.duplicate_ids()):
        # A cell with an id of its own is named by it: an id stays with its cell when
        # others are inserted or deleted, a position does not.
        raise ToolError(
            ErrorCode.NO_MATCH,
            f"{name!r} names a cell by its position, but cell {cell.index} of {path} has an "
            f"id of its own: {cell.id!r}. Use that id (if it is the cell you mean).",
            path=path,
            cell=cell.index,
            cell_id=cell.id,
        )
    return cell


def _stale_positions(session: Session, snap: Snapshot, exc: ToolError) -> ToolError:
    """A ``stale`` refusal that moved the agent's record to the current notebook, made
    safe for cells named by position: the change may have inserted or deleted cells
    before them, so they count as not shown until read again."""
    if exc.code is not ErrorCode.STALE or not exc.fields.get("refreshed"):
        return exc
    rec = session.get(snap.path)
    try:
        now = nb_fmt.parse(snap.view)
    except nb_fmt.NotebookError:
        return exc
    dups = now.duplicate_ids()
    positions = [c.index for c in now.cells if nb_fmt.named_by_position(c, dups)]
    if rec is None or not positions:
        return exc
    total = len(now.cells)
    # (the refreshed record may count the text's lines: a notebook's counts cells)
    seen = ((1, total),) if covers(rec.shown, 1, total) else rec.shown
    session.put(rec.replace(shown=_without(seen, positions), total_lines=total))
    return ToolError(
        exc.code,
        exc.message + " But this notebook names cells by their position (cell-N), which "
        "the change may have moved: read the notebook again before changing such a cell.",
        **exc.fields,
    )


def _require_shown(
    rec: FileRecord, path: str, cell: nb_fmt.CellSpan, positional: bool, what: str
) -> None:
    index = cell.index
    if rec.full_view:
        return
    if missing_lines(rec.shown, index, index) is None:
        return
    if positional:
        # Also the refusal after an insert or delete moved the cells named by position.
        message = (
            f"Cell {index} of {path} is named by its position (cell-{index}), and positions "
            "move when cells are inserted or deleted; you have not been shown the cell "
            f"that is cell {index} now, which this {what} concerns. Call read with "
            f"offset={index} and limit=1, check it is the cell you mean, then retry with "
            "the name read shows."
        )
    else:
        message = (
            f"You have not been shown cell {index} of {path} in this session, which this "
            f"{what} concerns. Call read with offset={index} and limit=1, then retry."
        )
    raise ToolError(ErrorCode.PARTIAL_VIEW, message, path=path, cell=index)


async def notebook_edit(ctx: ToolContext, p: NotebookEditParams) -> Result:
    mode = p.edit_mode
    async with open_target(
        ctx, p.file_path, p.session, TOOL, include_diff=p.include_diff, accepts="notebook"
    ) as target:
        path = target.path
        if not target.exists:
            raise target.not_found()
        session = target.session
        rec = target.require_read()
        snap = target.current()
        try:
            target.fresh(rec, snap, stale_as=NOTEBOOK_TOOL)
        except ToolError as exc:
            raise _stale_positions(session, snap, exc) from exc.__cause__
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
        cell = _named_cell(nb, path, p.cell_id) if p.cell_id else None
        dups = nb.duplicate_ids()
        positional = cell is not None and nb_fmt.named_by_position(cell, dups)
        if mode == "replace":
            assert cell is not None
            _require_shown(rec, path, cell, positional, "replace")
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
                _require_shown(rec, path, cell, positional, "insert")
            change = nb_fmt.insert_cell(nb, cell, p.new_source, p.cell_type)
        else:
            assert cell is not None
            _require_shown(rec, path, cell, positional, "delete")
            change = nb_fmt.delete_cell(nb, cell)
        return await _apply(target, p, rec, snap, nb, change)


def _moved(nb: nb_fmt.Notebook, mode: str, index: int) -> list[tuple[int, int]]:
    """(old, new) positions of the cells named by position that an insert or a delete at
    ``index`` (the new cell's index for an insert) moves."""
    dups = nb.duplicate_ids()
    if mode == "delete":
        later, step = nb.cells[index:], -1
    elif mode == "insert":
        later, step = nb.cells[index - 1 :], 1
    else:
        return []
    return [(c.index, c.index + step) for c in later if nb_fmt.named_by_position(c, dups)]


def _without(ranges: tuple[Range, ...], positions: list[int]) -> tuple[Range, ...]:
    """``ranges`` with the ascending ``positions`` taken out."""
    if not positions:
        return ranges
    out: list[Range] = []
    for lo, hi in ranges:
        k = bisect.bisect_left(positions, lo)
        while k < len(positions) and positions[k] <= hi:
            if positions[k] > lo:
                out.append((lo, positions[k] - 1))
            lo = positions[k] + 1
            k += 1
        if lo <= hi:
            out.append((lo, hi))
    return tuple(out)


def _renumbered_note(moved: list[tuple[int, int]], shown_pairs: int = 4) -> str:
    pairs = ", ".join(f"cell-{old} is now cell-{new}" for old, new in moved[:shown_pairs])
    if len(moved) > shown_pairs:
        pairs += f", … ({len(moved) - shown_pairs} more)"
    first = moved[0][1]
    return (
        f"The cells after it are named by their position, so they were renumbered "
        f"({pairs}). Read them again (read with offset={first}) before changing them; "
        "until then an edit naming them is refused."
    )


async def _apply(
    target: Target,
    p: NotebookEditParams,
    rec: FileRecord,
    snap: Snapshot,
    nb: nb_fmt.Notebook,
    change: nb_fmt.CellEdit,
) -> Result:
    path = snap.path
    rsp = raw_splices(
        snap.newline_map,
        change.splices,
        snap.endings.dominant,
        mixed_view=mixed_view(snap),
        raw=snap.raw,
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
    total = len(after_nb.cells)
    i = change.index
    mode = p.edit_mode
    seen = ((1, len(nb.cells)),) if rec.full_view and nb.cells else rec.shown
    shown: tuple[Range, ...]
    if mode == "insert":
        shown = shift_ranges(seen, i, i - 1, 1, i)
    elif mode == "delete":
        shown = shift_ranges(seen, i, i, -1, i - 1)
    else:
        shown = shift_ranges(seen, i, i, 0, i)
    moved = _moved(nb, mode, i)
    # A cell named by its position has a new name now: the model saw it under the old
    # one, so it counts as not shown until read again (an edit by the old name would
    # land on another cell).
    shown = _without(shown, [new for _, new in moved])
    applied = await commit(
        target.ctx,
        target.change(snap, new_raw, snap.encoding, splices=change.splices),
        shown=shown,
        total_lines=total,
    )

    name = f"{path}#{change.cell_id}"
    diff = whole_diff(change.old_source, change.new_source, name=name)
    ds = stat(diff)
    fields = target.diff_fields(diff, count_lines(to_view(change.new_source)))
    if mode == "replace":
        head = (
            f"Replaced the source of cell {i} (id {change.cell_id}, {change.cell_type}) in {path}"
        )
        if p.cell_type is not None and change.cell_type != nb.cells[i - 1].cell_type:
            head += f", now a {change.cell_type} cell"
        if change.cleared_outputs:
            head += "; its outputs and execution count were cleared"
        if change.dropped:
            keys = ", ".join(f"`{k}`" for k in change.dropped)
            head += f"; its {keys} were dropped ({change.cell_type} cells cannot have them)"
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
    if moved:
        head += " " + _renumbered_note(moved)
    return success(
        told(head, applied, fields),
        path=path,
        edit_mode=mode,
        cell_id=change.cell_id,
        cell_index=i,
        cell_type=change.cell_type,
        total_cells=total,
        **fields,
        added=ds.added,
        removed=ds.removed,
        **reached(applied),
    )

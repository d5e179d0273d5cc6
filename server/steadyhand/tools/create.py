"""Creating a file that does not exist yet: by ``write``, or by an edit whose
``old_string`` is empty (``edit``, the first edit of a ``multiEdit``)."""

from __future__ import annotations

from steadyhand.protocol.results import Result, success
from steadyhand.text.diff import whole_diff
from steadyhand.text.encoding import UTF8
from steadyhand.text.lines import count_lines, to_view
from steadyhand.tools.mutation import Target, commit, preview, reached, told
from steadyhand.tools.records import omitted_note


async def create_file(target: Target, content: str) -> Result:
    """Create ``target``'s file (and its folders) holding ``content``; in a dry run, only
    say what would be created."""
    path, tool = target.path, target.tool
    change = target.change(None, content, UTF8)
    view = to_view(content)
    lines = count_lines(view)
    size = len(change.data)
    diff = target.diff_fields(whole_diff("", view, name=path), lines)
    note = " " + omitted_note(diff) if omitted_note(diff) else ""
    made: dict[str, object] = {
        "path": path,
        "type": "create",
        "lines": lines,
        "bytes": size,
        "added": lines,
        "removed": 0,
    }
    # An edit's fields: what it replaced (nothing: one exact insertion) and the diff.
    as_edit: dict[str, object] = {}
    if tool != "write":
        as_edit = {"replacements": 1, "matched": "exact"}
    if target.dry_run:
        seen = await preview(target.ctx, change)
        warning = seen.note()
        return success(
            f"Dry run: {path} does not exist; the {tool} would create it with {lines} lines "
            f"({size} bytes). Nothing was written.{warning}{note}",
            **made,
            **diff,
            dry_run=True,
            **as_edit,
            **seen.fields(),
        )
    applied = await commit(target.ctx, change)
    message = f"File created successfully at: {path} (wrote {lines} lines, {size} bytes)."
    if tool != "write":
        as_edit.update(diff)
    return success(
        told(message, applied, as_edit if tool != "write" else None),
        **made,
        **as_edit,
        **reached(applied),
    )

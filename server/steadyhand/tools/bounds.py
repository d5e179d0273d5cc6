"""Bounds on the bulky parts of a result: a diff holds at most so many bytes (whole hunks
only); for lists see :mod:`steadyhand.protocol.lists`."""

from __future__ import annotations

from steadyhand.text.diff import cut_diff


def diff_fields(diff: str, max_bytes: int) -> tuple[dict[str, object], str]:
    """The ``diff`` field of a result (cut to whole hunks within ``max_bytes``, with
    ``diff_cut``: the hunks left out), and a sentence for the message when it was cut."""
    kept, left_out = cut_diff(diff, max_bytes)
    if not left_out:
        return {"diff": diff}, ""
    note = (
        f"(The diff is cut to what fits in one answer: {left_out:,} more hunk(s) are left "
        "out; read the file to see the rest.)"
    )
    return {"diff": kept, "diff_cut": left_out}, note

"""Keeping the file-state cache true: records from snapshots, what a result carries of a
change's diff, and the ``not_read`` refusal every change gives."""

from __future__ import annotations

from steadyhand.context import ToolContext
from steadyhand.documents.snapshot import Snapshot
from steadyhand.protocol.errors import ErrorCode, ToolError
from steadyhand.protocol.results import Result, success
from steadyhand.state.file_state import FileRecord, Range, Session, merge_ranges
from steadyhand.text.diff import changed_ranges, cut_diff
from steadyhand.text.lines import EndingStats, line_ending_name


def record_for(
    snap: Snapshot,
    shown: tuple[Range, ...],
    last_read: tuple[int | None, int | None] | None,
    stored: int = 0,
) -> FileRecord:
    """The record of ``snap``; ``stored`` is where the content store keeps its text (see
    :func:`remember`)."""
    return FileRecord(
        path=snap.path,
        hash=snap.hash,
        view_hash=snap.view_hash,
        source=snap.source,
        mtime_ns=snap.mtime_ns,
        size=snap.size,
        encoding=snap.encoding.label,
        line_ending=line_ending_name(snap.endings.style),
        total_lines=total_lines(snap),
        shown=_SHARED_RANGES.setdefault(shown, shown) if len(_SHARED_RANGES) < 65536 else shown,
        last_read=_WHOLE_READ if last_read == _WHOLE_READ else last_read,
        version=snap.version,
        stored=stored,
    )


#: Records are many and small: equal range tuples and read keys are shared, not copied.
_SHARED_RANGES: dict[tuple[Range, ...], tuple[Range, ...]] = {}
_WHOLE_READ: tuple[int | None, int | None] = (None, None)


def total_lines(snap: Snapshot) -> int:
    """``count_lines(snap.view)`` from the cached line-ending counts (no extra pass)."""
    return lines_from(snap.raw, snap.endings)


def lines_from(raw: str, e: EndingStats) -> int:
    """How many lines ``raw`` has, given its line-ending counts ``e``."""
    if not raw:
        return 0
    n = e.lf + e.crlf + e.cr
    return n if raw.endswith(("\n", "\r")) else n + 1


def full_range(snap: Snapshot) -> tuple[Range, ...]:
    n = total_lines(snap)
    return ((1, n),) if n else ()


def remember(ctx: ToolContext, snap: Snapshot) -> int:
    """Keep the text in the content store so a later stale refusal can show a diff;
    returns where it is kept, for the record."""
    return ctx.store.put(snap.view_hash, snap.view)


def file_unchanged(path: str, start: int, fields: dict[str, object], *, what: str) -> Result:
    """The answer to a read of ``what`` ("these lines", "this part") the session was
    shown before, of content that has not changed since: not repeated."""
    return success(
        f"{path} is unchanged since you last read {what} in this session; what you saw "
        "then is still current, so it is not repeated here.",
        type="file_unchanged",
        start_line=start,
        num_lines=0,
        **fields,
    )


def require_read(session: Session, path: str, tool: str) -> FileRecord:
    rec = session.get(path)
    if rec is None:
        raise ToolError(
            ErrorCode.NOT_READ,
            f"{path} has not been read in this session. Call read on it first, then "
            f"retry the {tool}.",
            path=path,
        )
    return rec


#: Longest stale diff, in characters, a refusal carries (besides ``staleDiffMaxLines``):
#: a change to one very long line (minified code, a data file) would fill the answer.
STALE_DIFF_MAX_CHARS = 16_000


def short_diff(ctx: ToolContext, diff: str) -> bool:
    """Whether a stale diff is short enough to be put into the refusal."""
    return (
        0 < len(diff) <= STALE_DIFF_MAX_CHARS
        and diff.count("\n") <= ctx.settings.stale_diff_max_lines
    )


#: Most changed line ranges a result carries in place of a diff left out.
CHANGED_RANGES_MAX = 50


def diff_fields(
    ctx: ToolContext, diff: str, new_total: int, *, include_diff: bool = False
) -> dict[str, object]:
    """The ``diff`` of a change's result, whole when it is short (the rule ``stale``
    refusals follow: at most ``staleDiffMaxLines`` lines and 16,000 characters) or when
    ``include_diff`` asks for it. Otherwise it is left out (``diff_omitted``), and the
    result says where the new text changed: ``changed``, its changed line ranges (at most
    :data:`CHANGED_RANGES_MAX`, then ``changed_more``). An agent that made a change knows
    what it wrote; echoing a long diff back would cost its model the same again."""
    if include_diff or not diff or short_diff(ctx, diff):
        # even asked for, a diff holds at most maxReadBytes: its first whole hunks
        kept, left_out = cut_diff(diff, ctx.settings.max_read_bytes)
        return {"diff": kept, "diff_cut": left_out} if left_out else {"diff": diff}
    ranges = changed_ranges(diff, new_total)
    out: dict[str, object] = {
        "diff_omitted": True,
        "changed": [[a, b] for a, b in ranges[:CHANGED_RANGES_MAX]],
    }
    if len(ranges) > CHANGED_RANGES_MAX:
        out["changed_more"] = len(ranges) - CHANGED_RANGES_MAX
    return out


def omitted_note(fields: dict[str, object]) -> str:
    """The sentence a message carries when its diff was left out ("" when it was not)."""
    cut = fields.get("diff_cut")
    if cut:
        return (
            f"(The diff is cut to what fits in one answer: {cut:,} more hunk(s) are left "
            "out; read the file to see the rest.)"
        )
    if not fields.get("diff_omitted"):
        return ""
    return "(The diff is long, so it was left out: pass include_diff: true to get it.)"


def note_shown(session: Session, rec: FileRecord, err: ToolError) -> None:
    """A ``no_match`` refusal showed the closest lines: count them as shown, so an edit
    built on them needs no extra read."""
    lines = err.fields.get("closest_lines")
    if err.code != ErrorCode.NO_MATCH or not isinstance(lines, list) or len(lines) != 2:
        return
    lo, hi = int(lines[0]), int(lines[1])
    if 1 <= lo <= hi:
        session.put(rec.replace(shown=merge_ranges(rec.shown, (lo, hi))))

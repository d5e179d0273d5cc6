"""The ``info`` tool: what a file or folder is, without reading it into the answer.

Confined and deny-checked as a read is; the file is opened as a read opens it. An open
document is described as the editor holds it (lines, line endings), with whether it has
unsaved changes. Nothing is recorded: an edit after ``info`` still needs a read.
"""

from __future__ import annotations

import asyncio
import os
import stat

from steadyhand.context import ToolContext
from steadyhand.documents.snapshot import Snapshot, from_raw
from steadyhand.fs.checked_open import identity
from steadyhand.fs.reader import stream_window
from steadyhand.paths.resolve import ResolvedPath
from steadyhand.protocol.errors import ErrorCode, ToolError
from steadyhand.protocol.params import InfoParams
from steadyhand.protocol.results import Result, success
from steadyhand.tools import tree_scope as ts
from steadyhand.tools.read_formats import kind_by_head, kind_by_name
from steadyhand.tools.suggest import not_found
from steadyhand.tree.walk import NEVER_ENTERED

#: Files up to this size are read whole to describe them.
READ_WHOLE_BYTES = 16 << 20
#: Files up to this size have their lines counted in one streaming pass; larger ones
#: are described by their size alone.
COUNT_MAX_BYTES = 256 << 20
#: Entries of a folder counted at most.
MAX_COUNTED = 100_000

_ENDINGS = {"lf": "LF", "crlf": "CRLF", "cr": "CR", "mixed": "mixed", "none": "no"}


async def info(ctx: ToolContext, p: InfoParams) -> Result:
    rp = ctx.resolve(p.file_path)
    buffer = ctx.world.current(rp.path)
    if rp.stat is None and buffer is None:
        raise not_found(rp.path)
    if rp.stat is not None and stat.S_ISDIR(rp.stat.st_mode):
        return await asyncio.to_thread(_folder, ctx, rp)
    fields: dict[str, object] = {"path": rp.path, "type": "file"}
    if rp.stat is not None:
        fields["size"] = rp.stat.st_size
        fields["modified"] = ts.modified(rp.stat.st_mtime_ns)
    kind = kind_by_name(rp.path)
    if buffer is not None:
        fields.update(_text_fields(buffer))
        fields["kind"] = kind or "text"
        fields["open"] = True
        fields["unsaved"] = bool(buffer.unsaved)
    else:
        fields.update(await asyncio.to_thread(_disk_fields, ctx, rp, kind))
        fields["open"] = False
    return success(_message(ctx, fields), **fields)


def _text_fields(snap: Snapshot) -> dict[str, object]:
    return {
        "lines": len(snap.lines),
        "encoding": snap.encoding.label,
        "line_ending": snap.endings.style,
    }


def _disk_fields(ctx: ToolContext, rp: ResolvedPath, kind: str | None) -> dict[str, object]:
    assert rp.stat is not None
    size = rp.stat.st_size
    links_ok = ctx.roots.allow_hard_links
    expect = identity(rp.stat)
    if size <= READ_WHOLE_BYTES:
        raw = ctx.read_raw(rp.path, expect=expect)
        kind = kind or kind_by_head(raw.data)
        if kind in ("image", "pdf"):
            return {"kind": kind}
        try:
            snap = from_raw(rp.path, raw)
        except ToolError as err:
            if err.code == ErrorCode.BINARY:
                return {"kind": "binary"}
            raise
        return {"kind": kind or "text", **_text_fields(snap)}
    if kind in ("image", "pdf") or size > COUNT_MAX_BYTES:
        return {"kind": kind} if kind else {}
    try:
        win = stream_window(rp.path, 1, 1, 1 << 16, links_ok=links_ok, expect=expect)
    except ToolError as err:
        if err.code == ErrorCode.BINARY:
            return {"kind": "binary"}
        raise
    style = "mixed" if (win.crlf and win.cr) else "crlf" if win.crlf else "cr" if win.cr else "lf"
    return {
        "kind": kind or "text",
        "lines": win.total_lines,
        "encoding": win.encoding.label,
        "line_ending": style,
    }


def _folder(ctx: ToolContext, rp: ResolvedPath) -> Result:
    assert rp.stat is not None
    skip = ts.deny_skip(ctx)
    count = 0
    whole = True
    try:
        with os.scandir(rp.path) as it:
            for entry in it:
                if count >= MAX_COUNTED:
                    whole = False
                    break
                is_dir = entry.is_dir(follow_symlinks=False)
                if is_dir and entry.name in NEVER_ENTERED:
                    continue
                if skip is not None and skip(entry.path, is_dir):
                    continue
                count += 1
    except OSError as exc:
        raise ToolError(
            ErrorCode.IO_ERROR, f"Cannot list {rp.path}: {exc.strerror}.", path=rp.path
        ) from exc
    at_least = "" if whole else "at least "
    noun = "entry" if count == 1 else "entries"
    message = (
        f"{rp.path} is a folder with {at_least}{count:,} {noun}, last changed "
        f"{_when(ts.modified(rp.stat.st_mtime_ns))}. List it to see them."
    )
    fields: dict[str, object] = {
        "path": rp.path,
        "type": "dir",
        "entries": count,
        "modified": ts.modified(rp.stat.st_mtime_ns),
    }
    if not whole:
        fields["entries_counted"] = False
    return success(message, **fields)


def _when(iso: str) -> str:
    return iso.replace("T", " ").rstrip("Z") + " UTC"


def _message(ctx: ToolContext, f: dict[str, object]) -> str:
    kind = f.get("kind")
    what = {
        "text": "a text file",
        "binary": "a binary file",
        "image": "an image",
        "pdf": "a PDF",
        "notebook": "a Jupyter notebook",
    }.get(str(kind), "a file")
    parts = []
    if "size" in f:
        parts.append(f"{f['size']:,} bytes")
    if "lines" in f:
        n = f["lines"]
        parts.append(f"{n:,} line{'s' if n != 1 else ''}")
    text = f"{f['path']} is {what}"
    if parts:
        text += " of " + " and ".join(parts)
    if "encoding" in f:
        ending = _ENDINGS.get(str(f.get("line_ending")), str(f.get("line_ending")))
        text += f" ({str(f['encoding']).upper()}, {ending} line endings)"
    if "modified" in f:
        text += f", last changed {_when(str(f['modified']))}"
    text += "."
    if f.get("open"):
        if f.get("unsaved"):
            if "size" not in f:
                text += " It is open in the editor and not saved yet: read shows the editor's text."
            else:
                text += (
                    " It is open in the editor with unsaved changes: read shows the editor's "
                    "text, and the lines are counted in it."
                )
        else:
            text += " It is open in the editor (no unsaved changes)."
    elif kind == "binary":
        text += " No tool reads or edits a binary file."
    elif "lines" not in f and kind in (None, "text"):
        text += " It is too large to count its lines here; read it with offset and limit."
    return text

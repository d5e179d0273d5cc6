"""``read`` of several files at once (``file_paths``): each file is read as ``read`` of
that one file would read it, with its own ``ok`` and ``error``, and the texts are put one
after the other in the answer's message.

One answer holds at most as much text as one read does (its byte and token caps): a file
that would not fit in what is left is not read (nor recorded as read), and its entry says
so and how to read it. Images count apart, at most :data:`MAX_IMAGES` in one answer.
"""

from __future__ import annotations

import dataclasses
import logging
from typing import Any

from steadyhand.context import ToolContext
from steadyhand.paths.resolve import shown_path
from steadyhand.protocol.errors import ErrorCode, ToolError
from steadyhand.protocol.params import ReadParams
from steadyhand.protocol.results import Result, failure
from steadyhand.tools import read as read_tool
from steadyhand.tools import tree_scope as ts
from steadyhand.tools.read_formats import kind_by_name

log = logging.getLogger("steadyhand")

#: Images one answer delivers at most.
MAX_IMAGES = 8
#: Below this many characters left, no further file is read.
MIN_LEFT = 256


async def read_files(ctx: ToolContext, p: ReadParams) -> Result:
    """``read``: one file (``file_path``) or several (``file_paths``)."""
    if p.file_paths is None:
        return await read_tool.read(ctx, p)
    budget = ts.answer_chars(ctx)
    used = 0
    images: list[dict[str, Any]] = []
    entries: list[Result] = []
    parts: list[str] = []
    for i, path in enumerate(p.file_paths):
        one = dataclasses.replace(p, file_path=path, file_paths=None)
        left = budget - used
        image = kind_by_name(path) == "image"
        size = None if image else _size(ctx, path)
        if i > 0 and image and len(images) >= MAX_IMAGES:
            entry = _left_out(path, f"this answer already holds {MAX_IMAGES} images")
        elif i > 0 and not image and (left < MIN_LEFT or (size is not None and size > left)):
            why = f"it would not fit in what is left of this answer ({left:,} characters)"
            entry = _left_out(path, why)
        else:
            sub = ctx
            if i > 0:
                settings = dataclasses.replace(ctx.settings, max_read_bytes=max(MIN_LEFT, left))
                sub = dataclasses.replace(ctx, settings=settings)
            entry = await _read_one(sub, one)
        text = str(entry.get("message", ""))
        name = str(entry.get("path", path))
        parts.append(f"==> {name} <==\n{text}")
        used += len(parts[-1]) + 2
        entries.append(_entry(entry, images))
    read = sum(1 for e in entries if e.get("ok"))
    refused = len(entries) - read
    summary = f"Read {read} of {len(entries)} files"
    if refused:
        summary += f"; {refused} not read (each says why and what to do)"
    message = "\n\n".join(parts) + f"\n\n({summary}.)"
    out: Result = {"ok": read > 0, "message": message, "files": entries}
    if read == 0:
        out["error"] = next(str(e.get("error")) for e in entries)
    if images:
        out["images"] = images
    return out


def _size(ctx: ToolContext, path: str) -> int | None:
    """The characters a file's text may take (its open buffer's, or its size on disk),
    or None when the path cannot be judged here (its read will say why)."""
    try:
        rp = ctx.resolve(path)
    except ToolError:
        return None
    buffer = ctx.world.current(rp.path)
    if buffer is not None:
        return len(buffer.raw)
    return rp.stat.st_size if rp.stat is not None else None


async def _read_one(ctx: ToolContext, p: ReadParams) -> Result:
    try:
        return await read_tool.read(ctx, p)
    except ToolError as err:
        return failure(err, p.file_path)
    except Exception as exc:  # a bug reading one file must not cost the others
        log.exception("read failed")
        return failure(
            ToolError(
                ErrorCode.IO_ERROR,
                f"Steadyhand failed unexpectedly reading {shown_path(p.file_path or '')} "
                f"({type(exc).__name__}: {exc}). Retry once; if it fails again, tell the user.",
            ),
            p.file_path,
        )


def _left_out(path: str, why: str) -> Result:
    return {
        "ok": False,
        "error": str(ErrorCode.TOO_LARGE),
        "reason": "answer_full",
        "path": path,
        "message": f"Not read: {why}. Read it in another call.",
    }


def _entry(result: Result, images: list[dict[str, Any]]) -> Result:
    """One file's entry: its result, with its text left in the answer's message (a
    success keeps no ``message``) and its images moved to the answer's ``images``."""
    entry = {k: v for k, v in result.items() if not (k == "message" and result.get("ok"))}
    path = result.get("path")
    if entry.get("type") == "image" and isinstance(entry.get("data"), str):
        images.append(
            {
                "path": path,
                "media_type": entry.pop("media_type", None),
                "data": entry.pop("data"),
            }
        )
    nested = entry.get("images")
    if isinstance(nested, list):
        kept = []
        for img in nested:
            if isinstance(img, dict) and "data" in img:
                images.append({"path": path, **img})
                img = {k: v for k, v in img.items() if k != "data"}
            kept.append(img)
        entry["images"] = kept
    return entry

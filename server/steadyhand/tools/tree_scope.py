"""What ``list`` and ``search`` share: the folders they look at, the rules that leave
paths out (ignore files, ``denyGlobs``), how a path is named in their answers, and the
size of one answer."""

from __future__ import annotations

import datetime
import os
import stat
from dataclasses import dataclass

from steadyhand.context import ToolContext
from steadyhand.paths.globs import relative_to, within
from steadyhand.paths.resolve import ResolvedPath, deny_pattern
from steadyhand.protocol.errors import ErrorCode, ToolError
from steadyhand.tools.suggest import similar_names
from steadyhand.tree.ignore import IgnoreStack
from steadyhand.tree.repo import rules_for
from steadyhand.tree.walk import Skip


def answer_chars(ctx: ToolContext) -> int:
    """The most characters one listing or search answers: a read's byte cap, and no more
    than its token cap (about 4 characters a token), which is what MCP hosts hold a
    tool's answer to."""
    s = ctx.settings
    return max(4096, min(s.max_read_bytes, 4 * s.max_read_tokens))


def roots_of(ctx: ToolContext) -> list[str]:
    """Every root (workspace folders, then allowed paths), each once, in order."""
    out: list[str] = []
    for root in (*ctx.roots.workspace, *ctx.roots.allowed):
        if root not in out:
            out.append(root)
    return out


def shown(ctx: ToolContext, path: str) -> str:
    """How an answer names ``path``: relative to the first workspace folder when it lies
    in it (as ``file_path`` takes it), else absolute."""
    first = ctx.roots.workspace[0] if ctx.roots.workspace else None
    if first is not None and within(path, first):
        return relative_to(path, first)
    return path


def root_of(ctx: ToolContext, path: str) -> str:
    """The root ``path`` (a real path inside the roots) lies in."""
    return next((r for r in roots_of(ctx) if within(path, r)), path)


@dataclass(frozen=True, slots=True)
class Place:
    """A folder to look into, and the root it lies in."""

    folder: str
    root: str


def where(ctx: ToolContext, path: str | None) -> tuple[list[Place], ResolvedPath | None]:
    """The folders a listing or a search covers: every root without ``path``; else the
    folder ``path`` names (resolved, confined and deny-checked as a read's path is), or
    no folder and the resolved file when it names a file."""
    if path is None:
        roots = [r for r in roots_of(ctx) if os.path.isdir(r)]
        if not roots:
            raise ToolError(
                ErrorCode.INVALID_PATH,
                "There is no workspace folder to look into. Pass an absolute path, or ask "
                "the user to open a folder.",
            )
        return [Place(r, r) for r in roots], None
    # A trailing slash names a folder: one that does not exist is not_found here.
    trimmed = path.rstrip("/") if path.strip("/") else path
    rp = ctx.resolve(trimmed)
    st = rp.stat
    if st is None:
        if ctx.world.current(rp.path) is not None:
            return [], rp  # a document open in the editor, not saved yet
        near = similar_names(rp.path)
        hint = f" Did you mean {' or '.join(near)}?" if near else ""
        raise ToolError(
            ErrorCode.NOT_FOUND,
            f"{rp.path} does not exist.{hint} List its folder to see what is there.",
            path=rp.path,
        )
    if stat.S_ISDIR(st.st_mode):
        return [Place(rp.path, rp.root or rp.path)], rp
    return [], rp


def deny_skip(ctx: ToolContext) -> Skip | None:
    """The walk's ``skip``: an entry that matches ``denyGlobs`` (as :func:`resolve` would
    find it) is never listed nor searched, nor is anything under it."""
    roots = ctx.roots
    if not roots.deny_globs:
        return None

    def skip(path: str, is_dir: bool) -> bool:
        return deny_pattern(path, roots) is not None

    return skip


@dataclass(frozen=True, slots=True)
class Rules:
    """The ignore rules a walk of one folder goes by (``rules`` None: none)."""

    rules: IgnoreStack | None
    prefix: str = ""
    in_repository: bool = False
    from_parents: bool = False


def rules(place: Place, include_ignored: bool) -> Rules:
    if include_ignored:
        return Rules(None)
    above = rules_for(place.folder, place.root)
    return Rules(above.rules, above.prefix, above.in_repository, above.from_parents)


def modified(mtime_ns: int) -> str:
    """A modification time as an answer gives it: UTC, to the second, ISO 8601."""
    t = datetime.datetime.fromtimestamp(mtime_ns / 1e9, tz=datetime.UTC)
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


def count_lines(data: bytes) -> int | None:
    """Lines in a file's bytes as a read counts them (LF, CRLF and CR end a line; a last
    line without an ending counts), or None for a binary file. UTF-16 is decoded first."""
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        try:
            text = data[2:].decode("utf-16-le" if data[1] == 0xFE else "utf-16-be")
        except UnicodeDecodeError:
            return None
        return text_lines(text)
    if b"\0" in data[:8192]:
        return None
    if not data:
        return 0
    breaks = data.count(b"\n") + data.count(b"\r") - data.count(b"\r\n")
    return breaks + (0 if data.endswith((b"\n", b"\r")) else 1)


def text_lines(text: str) -> int:
    """Lines in a text, counted as :func:`count_lines` counts them."""
    if not text:
        return 0
    breaks = text.count("\n") + text.count("\r") - text.count("\r\n")
    return breaks + (0 if text.endswith(("\n", "\r")) else 1)

"""The ``search`` tool: a regular expression or a text across the files under a path.

The files on disk are searched by ripgrep or by Python (:mod:`steadyhand.tree.search`,
the ``searchEngine`` setting), in a worker thread and within a time bound. Documents the
editor has open are searched as the editor holds them, unsaved typing included: their
disk hits are replaced by the buffer's. A search reads, but records nothing: an edit after
a search still needs a read.
"""

from __future__ import annotations

import asyncio
import re
import time
from dataclasses import dataclass, field

from steadyhand.context import ToolContext
from steadyhand.paths.globs import GlobError, compile_glob, relative_to, within
from steadyhand.protocol.errors import ErrorCode, ToolError
from steadyhand.protocol.params import MAX_LIST_LIMIT, SearchParams
from steadyhand.protocol.results import Result, success
from steadyhand.tools import tree_scope as ts
from steadyhand.tree import search as engine
from steadyhand.tree.filetypes import TYPES, type_globs
from steadyhand.tree.grep import Line, PatternError, Query, compile_query
from steadyhand.tree.walk import ignored_within

#: Files (files and count modes) or lines (content mode) answered without ``limit``.
DEFAULT_LIMIT = 200
#: How long one search may run.
SEARCH_SECONDS = 10.0
#: A longer line is shown around its first match, cut on both sides.
LINE_CHARS = 400


@dataclass(slots=True)
class Hits:
    """The hits of one file: its absolute path, the lines of the answer, the count."""

    path: str
    lines: list[Line]
    count: int


@dataclass(slots=True)
class Outcome:
    files: list[Hits] = field(default_factory=list)
    engines: set[str] = field(default_factory=set)
    #: Why the search itself stopped early: "time", "results" or "entries".
    stopped: str | None = None


def _query(p: SearchParams) -> Query:
    before = p.before if p.before is not None else (p.context or 0)
    after = p.after if p.after is not None else (p.context or 0)
    if p.output_mode != "content":
        before = after = 0
    # Which files match is told by their first matching line.
    first = 1 if p.output_mode == "files" else None
    return Query(p.pattern, p.literal, p.case_insensitive, p.multiline, before, after, first)


def _compiled(query: Query) -> re.Pattern[str]:
    try:
        return compile_query(query)
    except PatternError as exc:
        raise ToolError(
            ErrorCode.INVALID_PATTERN,
            f"The pattern {query.pattern!r} is not a valid regular expression ({exc}; "
            "Python's syntax). Escape the special characters ( ) [ ] { } . * + ? ^ $ | \\ "
            "with a backslash, or pass literal: true to search for the text as written.",
            pattern=query.pattern,
        ) from exc


def _globs(p: SearchParams) -> tuple[tuple[str, ...], tuple[str, ...]]:
    globs: tuple[str, ...] = ()
    if p.glob is not None:
        globs = (p.glob,)
        try:
            compile_glob(p.glob.removeprefix("!"), exact=True)
        except GlobError as exc:
            raise ToolError(
                ErrorCode.INVALID_PATTERN,
                f"The glob {p.glob!r} is not usable ({exc}). Use `*` for any name, `**` for "
                "any folders, `{a,b}` for either, a leading `!` to leave files out: for "
                "example *.py, src/**/*.{ts,tsx} or !*.min.js.",
                glob=p.glob,
            ) from exc
    kinds: tuple[str, ...] = ()
    if p.type is not None:
        found = type_globs(p.type)
        if found is None:
            raise ToolError(
                ErrorCode.INVALID_PATTERN,
                f"Unknown file type {p.type!r}. Known types: {', '.join(sorted(TYPES))}. "
                "Pass one of them, or a glob such as *.ext instead.",
                type=p.type,
            )
        kinds = found
    return globs, kinds


async def search(ctx: ToolContext, p: SearchParams) -> Result:
    query = _query(p)
    rx = _compiled(query)
    globs, kinds = _globs(p)
    places, rp = ts.where(ctx, p.path)
    deadline = time.monotonic() + SEARCH_SECONDS
    if not places:
        assert rp is not None
        out = _search_file(ctx, rp.path, query)
    else:
        scopes = [_scope(ctx, place, p, globs, kinds) for place in places]
        mode = ctx.settings.search_engine
        out = await asyncio.to_thread(_search_disk, scopes, query, deadline, mode)
        _search_buffers(ctx, scopes, query, out)
    return _answer(ctx, p, query, rx, places, rp.path if rp is not None else None, out)


def _scope(
    ctx: ToolContext,
    place: ts.Place,
    p: SearchParams,
    globs: tuple[str, ...],
    kinds: tuple[str, ...],
) -> engine.Scope:
    r = ts.rules(place, p.include_ignored)
    return engine.Scope(
        place.folder,
        r.rules,
        r.prefix,
        skip=ts.deny_skip(ctx),
        globs=globs,
        type_globs=kinds,
        in_repository=r.in_repository,
        from_parents=r.from_parents,
        hard_links=ctx.roots.allow_hard_links,
    )


def _search_disk(scopes: list[engine.Scope], query: Query, deadline: float, mode: str) -> Outcome:
    out = Outcome()
    for scope in scopes:
        if time.monotonic() > deadline:
            out.stopped = "time"
            break
        found = engine.search(scope, query, deadline=deadline, engine=mode)
        out.engines.add(found.engine)
        out.files.extend(Hits(f.path, f.lines, f.count) for f in found.files)
        if found.cut is not None:
            out.stopped = found.cut
            break
    return out


def _search_buffers(
    ctx: ToolContext, scopes: list[engine.Scope], query: Query, out: Outcome
) -> None:
    """Search the open documents under the folders searched as the editor holds them:
    each replaces what the disk search found in its file."""
    by_path = {h.path: i for i, h in enumerate(out.files)}
    changed = False
    for path in ctx.open_paths():
        scope = next((s for s in scopes if within(path, s.folder) and path != s.folder), None)
        if scope is None:
            continue
        rel = relative_to(path, scope.folder)
        if scope.skip is not None and scope.skip(path, False):
            continue
        keep = engine.scope_filter(scope)
        if (keep is not None and not keep(rel)) or ignored_within(
            scope.folder, rel, scope.rules, scope.prefix
        ):
            continue
        snap = ctx.world.current(path)
        if snap is None:
            continue
        lines, count = engine.search_text(snap.raw, query)
        at = by_path.get(path)
        if count:
            hits = Hits(path, lines, count)
            if at is None:
                out.files.append(hits)
            else:
                out.files[at] = hits
        elif at is not None:
            out.files[at] = Hits(path, [], 0)
        changed = True
    if changed:
        order = {s.folder: i for i, s in enumerate(scopes)}
        out.files = [h for h in out.files if h.count]
        out.files.sort(key=lambda h: (_place_index(h.path, order), h.path))


def _place_index(path: str, order: dict[str, int]) -> int:
    return next((i for folder, i in order.items() if within(path, folder)), len(order))


def _search_file(ctx: ToolContext, path: str, query: Query) -> Outcome:
    """One file, named as ``path``: its buffer when the editor has it open."""
    out = Outcome()
    snap = ctx.world.current(path)
    if snap is not None:
        text: str | None = snap.raw
    else:
        raw = ctx.read_raw(path)
        text = engine.decode_for_search(raw.data)
    if text is None:
        raise ToolError(
            ErrorCode.BINARY,
            f"{path} is a binary file; search does not look into binary files. Search a "
            "folder or a text file instead.",
            path=path,
        )
    lines, count = engine.search_text(text, query)
    if count:
        out.files.append(Hits(path, lines, count))
    out.engines.add("python")
    return out


def clip(text: str, rx: re.Pattern[str] | None, most: int = LINE_CHARS) -> str:
    """``text`` (one line) cut to about ``most`` characters around its first match, with
    a note of what was cut on each side."""
    text = text.removesuffix("\r")
    if len(text) <= most:
        return text
    m = rx.search(text) if rx is not None else None
    start = max(0, (m.start() if m is not None else 0) - most // 4)
    end = min(len(text), start + most)
    start = max(0, end - most)
    head = f"[{start:,} characters cut] " if start else ""
    tail = f" [{len(text) - end:,} more characters cut]" if end < len(text) else ""
    return head + text[start:end] + tail


def _answer(
    ctx: ToolContext,
    p: SearchParams,
    query: Query,
    rx: re.Pattern[str],
    places: list[ts.Place],
    file: str | None,
    out: Outcome,
) -> Result:
    limit = min(p.limit or DEFAULT_LIMIT, MAX_LIST_LIMIT)
    budget = ts.answer_chars(ctx) - 600
    total_files = len(out.files)
    total_matches = sum(h.count for h in out.files)
    body: list[str] = []
    used = 0
    fields: dict[str, object] = {}
    cut: str | None = None
    mode = p.output_mode

    def add(line: str) -> bool:
        nonlocal used
        if used + len(line) + 1 > budget and body:
            return False
        body.append(line)
        used += len(line) + 1
        return True

    if mode == "files":
        names: list[str] = []
        for h in out.files:
            if len(names) >= limit:
                cut = "limit"
                break
            name = ts.shown(ctx, h.path)
            if not add(name):
                cut = "bytes"
                break
            names.append(name)
        fields["files"] = names
        if len(names) < total_files:
            fields["files_more"] = total_files - len(names)
        shown = len(names)
    elif mode == "count":
        counts: list[dict[str, object]] = []
        for h in out.files:
            if len(counts) >= limit:
                cut = "limit"
                break
            name = ts.shown(ctx, h.path)
            if not add(f"{name}:{h.count}"):
                cut = "bytes"
                break
            counts.append({"path": name, "count": h.count})
        fields["counts"] = counts
        if len(counts) < total_files:
            fields["counts_more"] = total_files - len(counts)
        shown = len(counts)
    else:
        matches: list[dict[str, object]] = []
        grouped = query.before > 0 or query.after > 0
        emitted = 0
        line_rx = None if query.multiline else rx
        for h in out.files:
            name = ts.shown(ctx, h.path)
            prev: int | None = None
            for line in h.lines:
                if emitted >= limit:
                    cut = "limit"
                    break
                apart = prev is None or line.number != prev + 1
                if grouped and body and apart and not add("--"):
                    cut = "bytes"
                    break
                text = clip(line.text, line_rx if line.match else None)
                sep = ":" if line.match else "-"
                if not add(f"{name}{sep}{line.number}{sep}{text}"):
                    cut = "bytes"
                    break
                emitted += 1
                prev = line.number
                if line.match:
                    matches.append({"path": name, "line": line.number, "text": text})
            if cut is not None:
                break
        fields["matches"] = matches
        if len(matches) < total_matches:
            fields["matches_more"] = total_matches - len(matches)
        shown = emitted

    where = file or (" and ".join(pl.folder for pl in places) if len(places) <= 3 else "the roots")
    filters = []
    if p.glob:
        filters.append(f"glob {p.glob}")
    if p.type:
        filters.append(f"type {p.type}")
    narrowed = f" ({', '.join(filters)})" if filters else ""
    what = f"{p.pattern!r}" + (" (literal)" if p.literal else "")
    stopped = out.stopped
    if total_files == 0:
        head = f"No matches for {what} in {where}{narrowed}."
        if stopped is None and not p.include_ignored and file is None:
            head += " Ignored files were not searched (include_ignored: true searches them)."
    else:
        file_word = "file" if total_files == 1 else "files"
        line_word = "line" if total_matches == 1 else "lines"
        lower = "at least " if stopped else ""
        if mode == "files":
            head = f"Found {lower}{total_files:,} {file_word} matching {what} in {where}{narrowed}"
        else:
            head = (
                f"Found {lower}{total_matches:,} matching {line_word} in {total_files:,} "
                f"{file_word} for {what} in {where}{narrowed}"
            )
        unit = {"files": "files", "count": "files", "content": "lines"}[mode]
        head += f" (showing the first {shown:,} {unit}):" if cut else ":"
    notes: list[str] = []
    if cut == "limit":
        notes.append(
            f"(More not shown: raise limit (at most {MAX_LIST_LIMIT}), or narrow the search "
            "with path, glob or type.)"
        )
    elif cut == "bytes":
        notes.append(
            "(More not shown: the answer is full. Narrow the search with path, glob or "
            "type, or use output_mode files or count.)"
        )
    if stopped == "time":
        notes.append(
            f"(The search stopped after {SEARCH_SECONDS:g} s, so files it did not reach were "
            "not searched. Search a subfolder, or narrow with glob or type.)"
        )
    elif stopped is not None:
        notes.append(
            "(The search stopped early: too many results. Narrow it with a more specific "
            "pattern, path, glob or type.)"
        )
    message = head + ("\n" + "\n".join(body) if body else "")
    if notes:
        message += "\n" + " ".join(notes)
    if mode != "files":
        fields["total_matches"] = total_matches
    fields.update(
        total_files=total_files,
        engine="+".join(sorted(out.engines)) or "none",
    )
    if file is not None:
        fields["path"] = file
    elif p.path is not None:
        fields["path"] = places[0].folder
    if cut is not None or stopped is not None:
        fields["truncated"] = True
        fields["cut"] = stopped or cut
    return success(message, **fields)

"""The ``list`` tool: the files and folders under a path, as a flat list or a tree.

Entries come from a walk of the folder in name order (:mod:`steadyhand.tree.walk`): the
ignore files as git reads them, ``denyGlobs``, ``.git`` never entered, no link followed.
Sorted by name, the listing stops once it has ``limit`` entries and counts the rest for
a moment; sorted by last change, it walks the whole folder within a time bound, keeping
the newest ``limit``. Nothing is read but what line counts need; nothing is recorded.
"""

from __future__ import annotations

import asyncio
import heapq
import os
import stat
import time
from collections.abc import Iterator
from dataclasses import dataclass, field

from steadyhand.context import ToolContext
from steadyhand.paths.globs import GlobError, compile_glob, within
from steadyhand.protocol.errors import ErrorCode, ToolError
from steadyhand.protocol.params import MAX_LIST_LIMIT, ListParams
from steadyhand.protocol.results import Result, success
from steadyhand.tools import tree_scope as ts
from steadyhand.tree.search import read_file
from steadyhand.tree.walk import Walk, descend, walk

#: Entries a listing answers without ``limit``.
DEFAULT_LIMIT = 200
#: How long one walk may run (sorted by last change, or looking for a rare pattern).
WALK_SECONDS = 5.0
#: How long a listing sorted by name goes on counting what lies past ``limit``.
COUNT_SECONDS = 0.05
#: How long counting lines may take, for all entries together.
LINES_SECONDS = 2.0
#: Files larger than this get no line count.
LINE_COUNT_MAX_BYTES = 8 << 20

_WILD = frozenset("*?[]{}\\")


@dataclass(slots=True)
class Item:
    """One entry of the answer."""

    path: str  # absolute
    rel: str  # below the folder listed
    kind: str  # "file", "dir", "link" or "other"
    size: int
    mtime_ns: int
    depth: int  # 1 for an entry of the folder listed
    lines: int | None = None


@dataclass(slots=True)
class Collected:
    items: list[Item] = field(default_factory=list)
    #: Matching entries seen past the limit.
    more: int = 0
    #: Whether every entry was looked at (then ``more`` is exact).
    whole: bool = True
    #: Why the walk stopped early: "time" or "entries".
    stopped: str | None = None
    #: Whether the limit left entries out (what stopped the listing, whatever happened
    #: to the counting after it).
    limited: bool = False


def _kind_wanted(kind: str, wanted: str) -> bool:
    if wanted == "all":
        return True
    if wanted == "folders":
        return kind == "dir"
    return kind in ("file", "link")


def literal_folder(pattern: str) -> str | None:
    """The folder a path pattern names before its first wildcard (``src/lib`` of
    ``src/lib/**/*.py``), where a walk can start; None when it names none."""
    pat = pattern
    while pat.startswith("./"):
        pat = pat[2:]
    pat = pat.strip("/")
    parts = pat.split("/")
    lead: list[str] = []
    for part in parts[:-1]:
        if not part or part in (".", "..") or _WILD & set(part):
            break
        lead.append(part)
    return "/".join(lead) or None


def _relative_pattern(pattern: str, folder: str) -> str:
    """An absolute pattern inside the folder listed, made relative to it."""
    if pattern.startswith("/") and within(pattern, folder):
        rest = pattern[len(folder.rstrip("/")) + 1 :]
        return rest or "*"
    return pattern


class _Lister:
    def __init__(self, ctx: ToolContext, p: ListParams, deadline: float) -> None:
        self.ctx = ctx
        self.p = p
        self.deadline = deadline
        self.wanted = p.type or ("files" if p.pattern else "all")
        self.skip = ts.deny_skip(ctx)
        self.walks: list[Walk] = []

    def entries(self, place: ts.Place) -> Iterator[Item]:
        """The entries of one folder that the listing wants, in name order."""
        p = self.p
        pattern = _relative_pattern(p.pattern, place.folder) if p.pattern else None
        rx = None
        if pattern is not None:
            try:
                rx = compile_glob(pattern, exact=True)
            except GlobError as exc:
                raise _bad_glob(p.pattern or "", str(exc)) from exc
        rules = ts.rules(place, p.include_ignored)
        start, lead, depth = place.folder, "", p.depth
        folder = literal_folder(pattern) if pattern else None
        if folder is not None:
            # Only what lies under the pattern's own folder can match: walk that alone.
            sub = os.path.join(place.folder, folder)
            if not _plain_folder(sub) or (self.skip is not None and self.skip(sub, True)):
                return
            enters, above = descend(place.folder, folder, rules.rules, rules.prefix)
            if not enters:
                return
            start, lead = sub, folder + "/"
            rules = ts.Rules(above, rules.prefix + lead if above is not None else "")
            if depth is not None:
                depth -= folder.count("/") + 1
                if depth < 1:
                    return
        w = walk(
            start,
            rules=rules.rules,
            prefix=rules.prefix,
            skip=self.skip,
            max_depth=depth,
            deadline=self.deadline,
            stats=p.sizes or p.line_counts or p.sort == "modified",
        )
        self.walks.append(w)
        extra = lead.count("/")
        for e in w:
            if not _kind_wanted(e.kind, self.wanted):
                continue
            rel = lead + e.rel
            if rx is not None and not (rx.fullmatch(rel) or rx.fullmatch(e.path[1:])):
                continue
            yield Item(e.path, rel, e.kind, e.size, e.mtime_ns, e.depth + extra)

    def stopped(self) -> str | None:
        return next((w.cut for w in self.walks if w.cut is not None), None)


def _plain_folder(path: str) -> bool:
    """Whether ``path`` (below a real folder) is a folder reached through no symbolic
    link: neither it nor a folder on the way is one."""
    try:
        return stat.S_ISDIR(os.lstat(path).st_mode) and os.path.realpath(path) == path
    except (OSError, ValueError):
        return False


def _bad_glob(pattern: str, why: str) -> ToolError:
    return ToolError(
        ErrorCode.INVALID_PATTERN,
        f"The pattern {pattern!r} is not a usable glob ({why}). Use `*` for any name, `**` "
        "for any folders, `{a,b}` for either: for example **/*.py or src/**/*.{ts,tsx}.",
        pattern=pattern,
    )


def _by_name(lister: _Lister, places: list[ts.Place], limit: int) -> Collected:
    out = Collected()
    sources = (item for place in places for item in lister.entries(place))
    for item in sources:
        out.items.append(item)
        if len(out.items) >= limit:
            break
    else:
        out.stopped = lister.stopped()
        out.whole = out.stopped is None
        return out
    # Past the limit: count what else would be listed, for a moment.
    out.limited = True
    lister.deadline = min(lister.deadline, time.monotonic() + COUNT_SECONDS)
    for w in lister.walks:
        w.deadline = lister.deadline
    for _ in sources:
        out.more += 1
    out.stopped = lister.stopped()
    out.whole = out.stopped is None
    return out


def _by_modified(lister: _Lister, places: list[ts.Place], limit: int) -> Collected:
    out = Collected()
    heap: list[tuple[int, int, Item]] = []
    seen = 0
    for place in places:
        for item in lister.entries(place):
            seen += 1
            key = (item.mtime_ns, -seen, item)
            if len(heap) < limit:
                heapq.heappush(heap, key)
            elif key[:2] > heap[0][:2]:
                heapq.heapreplace(heap, key)
    ranked = sorted(heap, key=lambda k: (-k[0], -k[1]))
    out.items = [k[2] for k in ranked]
    out.more = seen - len(out.items)
    out.limited = out.more > 0
    out.stopped = lister.stopped()
    out.whole = out.stopped is None
    return out


def _count_lines(ctx: ToolContext, items: list[Item], buffers: dict[str, int]) -> bool:
    """Give each file its line count (an open document's from its buffer); False when
    the time bound left some without."""
    stop = time.monotonic() + LINES_SECONDS
    links_ok = ctx.roots.allow_hard_links
    for item in items:
        if item.kind != "file":
            continue
        if item.path in buffers:
            item.lines = buffers[item.path]
            continue
        if item.size > LINE_COUNT_MAX_BYTES:
            continue
        if time.monotonic() > stop:
            return False
        data = read_file(item.path, hard_links=links_ok)
        if data is not None:
            item.lines = ts.count_lines(data)
    return True


def _details(item: Item, p: ListParams) -> str:
    parts: list[str] = []
    if item.kind == "link":
        parts.append("symbolic link")
    elif item.kind == "other":
        parts.append("special file")
    if p.sizes and item.kind == "file":
        parts.append(f"{item.size:,} bytes")
    if p.line_counts and item.lines is not None:
        parts.append(f"{item.lines:,} line{'s' if item.lines != 1 else ''}")
    if p.sizes or p.sort == "modified":
        parts.append(ts.modified(item.mtime_ns).replace("T", " ").rstrip("Z") + " UTC")
    return f"  ({', '.join(parts)})" if parts else ""


def _entry(ctx: ToolContext, item: Item, p: ListParams) -> dict[str, object]:
    e: dict[str, object] = {"path": ts.shown(ctx, item.path), "type": item.kind}
    if p.sizes and item.kind == "file":
        e["size"] = item.size
    if p.line_counts and item.lines is not None:
        e["lines"] = item.lines
    if p.sizes or p.sort == "modified":
        e["modified"] = ts.modified(item.mtime_ns)
    return e


def _tree_line(item: Item, p: ListParams) -> str:
    name = os.path.basename(item.path) + ("/" if item.kind == "dir" else "")
    return "  " * item.depth + name + _details(item, p)


def _flat_line(ctx: ToolContext, item: Item, p: ListParams) -> str:
    name = ts.shown(ctx, item.path) + ("/" if item.kind == "dir" else "")
    return name + _details(item, p)


def _noun(n: int, wanted: str) -> str:
    word = {"files": "file", "folders": "folder"}.get(wanted, "entr")
    if word == "entr":
        return "entry" if n == 1 else "entries"
    return word if n == 1 else word + "s"


async def list_entries(ctx: ToolContext, p: ListParams) -> Result:
    places, rp = ts.where(ctx, p.path)
    if not places:
        assert rp is not None
        return _one_file(ctx, p, rp.path)
    limit = min(p.limit or DEFAULT_LIMIT, MAX_LIST_LIMIT)
    buffers: dict[str, int] = {}
    if p.line_counts:  # open documents count as the editor holds them (in this thread)
        for path in ctx.open_paths():
            if any(within(path, pl.folder) for pl in places):
                snap = ctx.world.current(path)
                if snap is not None:
                    buffers[path] = ts.text_lines(snap.raw)
    deadline = time.monotonic() + WALK_SECONDS
    lister = _Lister(ctx, p, deadline)
    collect = _by_modified if p.sort == "modified" else _by_name
    got = await asyncio.to_thread(collect, lister, places, limit)
    lines_cut = False
    if p.line_counts:
        lines_cut = not await asyncio.to_thread(_count_lines, ctx, got.items, buffers)
    return _answer(ctx, p, places, got, limit, lines_cut, asked=rp is not None)


def _answer(
    ctx: ToolContext,
    p: ListParams,
    places: list[ts.Place],
    got: Collected,
    limit: int,
    lines_cut: bool,
    *,
    asked: bool,
) -> Result:
    tree = p.depth is not None and p.pattern is None and p.sort == "name"
    budget = ts.answer_chars(ctx) - 600
    body: list[str] = []
    used = 0
    shown_items: list[Item] = []
    by_bytes = False
    place_of = {pl.folder: pl for pl in places}
    current: str | None = None
    for item in got.items:
        line = ""
        if tree:
            folder = next(f for f in place_of if within(item.path, f))
            if folder != current:
                current = folder
                line = folder + "/\n"
            line += _tree_line(item, p)
        else:
            line = _flat_line(ctx, item, p)
        if used + len(line) + 1 > budget and shown_items:
            by_bytes = True
            break
        body.append(line)
        used += len(line) + 1
        shown_items.append(item)
    left = len(got.items) - len(shown_items) + got.more
    wanted = p.type or ("files" if p.pattern else "all")
    n = len(shown_items)
    total = n + left
    what = " and ".join(pl.folder for pl in places) if len(places) <= 3 else "the workspace roots"
    order = "newest first" if p.sort == "modified" else "sorted by name"
    if p.pattern:
        what += f" matching {p.pattern}"
    if n == 0:
        head = f"No {_noun(0, wanted)} in {what}."
        if got.whole and not p.include_ignored:
            head += " (Ignored files are left out: pass include_ignored: true to list them.)"
    elif left == 0 and got.whole:
        head = f"{n:,} {_noun(n, wanted)} in {what} ({order}):"
    elif got.whole:
        head = f"The first {n:,} of {total:,} {_noun(total, wanted)} in {what} ({order}):"
    elif p.sort == "modified":
        head = (
            f"The {n:,} most recently changed of the {total:,} {_noun(total, wanted)} looked "
            f"at in {what}:"
        )
    else:
        head = f"The first {n:,} of at least {total:,} {_noun(total, wanted)} in {what} ({order}):"
    notes: list[str] = []
    if left and got.whole:
        notes.append(f"({left:,} more not shown{_why(by_bytes)}. {_narrow(p)})")
    elif not got.whole:
        stop = f"{WALK_SECONDS:g} s"
        if got.stopped != "time":
            stop = "the most entries one walk looks at"
        if p.sort == "modified":
            notes.append(
                f"(The walk stopped after {stop}, so newer files may lie in folders it did not "
                f"reach. {_narrow(p)})"
            )
        elif left:
            notes.append(f"(At least {left:,} more not shown{_why(by_bytes)}. {_narrow(p)})")
        else:
            notes.append(f"(The walk stopped after {stop}; there may be more. {_narrow(p)})")
    if lines_cut:
        notes.append(f"(Counting lines stopped after {LINES_SECONDS:g} s; some files have none.)")
    message = head + ("\n" + "\n".join(body) if body else "")
    if notes:
        message += "\n" + " ".join(notes)
    fields: dict[str, object] = {"entries": [_entry(ctx, i, p) for i in shown_items]}
    if left:
        fields["entries_more"] = left
    if got.whole:
        fields["total"] = total
    if left or not got.whole:
        # Newest first, a walk out of time may have missed newer entries: that is said
        # first; by name, the limit is what stopped the listing.
        cut = got.stopped if p.sort == "modified" else None
        fields["cut"] = "bytes" if by_bytes else cut or ("limit" if got.limited else got.stopped)
    if asked:
        fields["path"] = places[0].folder
    else:
        fields["roots"] = [pl.folder for pl in places]
    return success(message, **fields)


def _why(by_bytes: bool) -> str:
    return " (the answer is full)" if by_bytes else ""


def _narrow(p: ListParams) -> str:
    more = ""
    if (p.limit or DEFAULT_LIMIT) < MAX_LIST_LIMIT:
        more = f"raise limit (at most {MAX_LIST_LIMIT})"
    ways = ["list a subfolder", "pass a pattern" if not p.pattern else "a narrower pattern"]
    if p.depth is None:
        ways.append("a depth")
    if more:
        ways.append(more)
    return "To see more: " + ", ".join(ways[:-1]) + " or " + ways[-1] + "."


def _one_file(ctx: ToolContext, p: ListParams, path: str) -> Result:
    """The answer for a ``path`` that names a file: its own entry."""
    try:
        st = os.lstat(path)
    except OSError:
        st = None
    snap = ctx.world.current(path)
    size = st.st_size if st is not None else 0
    mtime = st.st_mtime_ns if st is not None else time.time_ns()
    item = Item(path, os.path.basename(path), "file", size, mtime, 1)
    if p.line_counts:
        if snap is not None:
            item.lines = ts.text_lines(snap.raw)
        elif size <= LINE_COUNT_MAX_BYTES:
            data = read_file(path, hard_links=ctx.roots.allow_hard_links)
            item.lines = ts.count_lines(data) if data is not None else None
    wanted = p.type or ("files" if p.pattern else "all")
    if not _kind_wanted("file", wanted) or (
        p.pattern is not None and not _matches_name(p.pattern, item.rel)
    ):
        return success(
            f"{path} is a file, which does not match the listing's filters.",
            entries=[],
            total=0,
            path=path,
        )
    line = _flat_line(ctx, item, p)
    return success(f"{path} is a file:\n{line}", entries=[_entry(ctx, item, p)], total=1, path=path)


def _matches_name(pattern: str, name: str) -> bool:
    try:
        return compile_glob(pattern, exact=True).fullmatch(name) is not None
    except GlobError as exc:
        raise _bad_glob(pattern, str(exc)) from exc

"""Walking a folder of the workspace: every entry once, in name order, bounded.

The walk goes depth first with the entries of each folder sorted by name, so its first
``n`` entries are the first ``n`` of the whole sorted listing and a bounded listing can
stop early. It never follows a symbolic link (a link is an entry of kind ``link``, never
entered), never enters ``.git``, reads each folder's ignore files as it enters it
(:mod:`steadyhand.tree.ignore`) unless told to include ignored paths, and asks ``skip``
about every entry (the deny rules). It keeps no recursion: an explicit stack, whatever
the depth of the tree. It stops at a deadline or after a number of entries looked at,
and says which (``Walk.cut``).
"""

from __future__ import annotations

import contextlib
import os
import stat
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from steadyhand.tree.ignore import FOLDER_FILES, MAX_IGNORE_BYTES, IgnoreFile, IgnoreStack, parse

#: Folders never entered (the repository's own database).
NEVER_ENTERED = frozenset({".git"})

#: Entries looked at, at most, by one walk (a bound on time and memory whatever the tree).
MAX_SCANNED = 2_000_000

#: ``skip(absolute_path, is_dir)``: True for an entry the walk must leave out.
Skip = Callable[[str, bool], bool]


@dataclass(frozen=True, slots=True)
class Entry:
    """One entry of the walk."""

    rel: str  # relative to the folder walked, "/"-separated
    path: str  # absolute
    kind: str  # "file", "dir", "link" or "other"
    size: int
    mtime_ns: int
    depth: int  # 1 for an entry of the folder walked


def kind_of(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "dir"
    if stat.S_ISREG(mode):
        return "file"
    if stat.S_ISLNK(mode):
        return "link"
    return "other"


def read_ignore_file(path: str) -> str | None:
    """The text of an ignore file, or None where there is none or it is not a regular
    file (a link in its place is not followed, as git does not)."""
    try:
        st = os.lstat(path)
    except OSError:
        return None
    if not stat.S_ISREG(st.st_mode):
        return None
    try:
        with open(path, "rb") as fh:
            if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
                return None
            data = fh.read(MAX_IGNORE_BYTES)
    except OSError:
        return None
    return data.decode("utf-8", errors="replace")


def folder_rules(folder: str, base: str) -> list[IgnoreFile | None]:
    """The ignore files of ``folder`` (``base`` is its path below the stack's top)."""
    out: list[IgnoreFile | None] = []
    for name in FOLDER_FILES:
        text = read_ignore_file(os.path.join(folder, name))
        out.append(parse(text, base) if text is not None else None)
    return out


@dataclass(slots=True)
class Walk:
    """A walk under way: iterate it for entries; ``cut`` says why it stopped early."""

    root: str
    rules: IgnoreStack | None
    prefix: str = ""
    skip: Skip | None = None
    max_depth: int | None = None
    deadline: float | None = None
    max_scanned: int = MAX_SCANNED
    cut: str | None = None
    scanned: int = 0

    def __iter__(self) -> Iterator[Entry]:
        rules = self.rules
        if rules is not None:
            rules = rules.with_files(folder_rules(self.root, self.prefix.rstrip("/")))
        # A stack of folders being listed; a folder's entries come right after it
        # (pre-order), each folder's sorted by name.
        pending = [self._entries(self.root, "", 0, rules)]
        while pending:
            try:
                entry, held = next(pending[-1])
            except StopIteration:
                pending.pop()
                continue
            yield entry
            if self.cut is not None:
                return
            if entry.kind == "dir" and (self.max_depth is None or entry.depth < self.max_depth):
                pending.append(self._entries(entry.path, entry.rel, entry.depth, held))

    def _entries(
        self, folder: str, rel: str, depth: int, rules: IgnoreStack | None
    ) -> Iterator[tuple[Entry, IgnoreStack | None]]:
        """The entries of one folder, each with the rules that hold inside the folder."""
        if depth > 0 and rules is not None:
            rules = rules.with_files(folder_rules(folder, self.prefix + rel))
        try:
            with os.scandir(folder) as it:
                items = sorted(it, key=lambda e: e.name)
        except OSError:
            return
        for item in items:
            self.scanned += 1
            if self.scanned > self.max_scanned:
                self.cut = "entries"
                return
            if (
                self.deadline is not None
                and self.scanned % 256 == 0
                and time.monotonic() > self.deadline
            ):
                self.cut = "time"
                return
            try:
                st = item.stat(follow_symlinks=False)
            except OSError:
                continue
            kind = kind_of(st.st_mode)
            is_dir = kind == "dir"
            if is_dir and item.name in NEVER_ENTERED:
                continue
            child = f"{rel}/{item.name}" if rel else item.name
            if rules is not None and rules.ignored(self.prefix + child, is_dir=is_dir):
                continue
            if self.skip is not None and self.skip(item.path, is_dir):
                continue
            entry = Entry(child, item.path, kind, st.st_size, st.st_mtime_ns, depth + 1)
            yield entry, rules


def walk(
    root: str,
    *,
    rules: IgnoreStack | None,
    prefix: str = "",
    skip: Skip | None = None,
    max_depth: int | None = None,
    deadline: float | None = None,
    max_scanned: int = MAX_SCANNED,
) -> Walk:
    """A walk of the folder ``root``. ``rules`` are the ignore files that hold above it
    (an empty stack for none; None to include ignored paths), ``prefix`` its path below
    their top (``"sub/"``), ``skip`` leaves out more (deny rules)."""
    return Walk(root, rules, prefix, skip, max_depth, deadline, max_scanned)


def count_lines(path: str, limit: int = 64 << 20) -> int | None:
    """Lines in a regular file (the last one counted without a final newline), or None
    when it cannot be read or is larger than ``limit``."""
    with contextlib.suppress(OSError):
        st = os.lstat(path)
        if not stat.S_ISREG(st.st_mode) or st.st_size > limit:
            return None
        with open(path, "rb") as fh:
            data = fh.read(limit + 1)
        if not data:
            return 0
        return data.count(b"\n") + (0 if data.endswith(b"\n") else 1)
    return None

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
    size: int  # 0 when the walk does not ``stat`` its entries
    mtime_ns: int  # 0 when the walk does not ``stat`` its entries
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
    #: Whether each entry's size and modification time are wanted (one ``lstat`` each);
    #: without, the kind comes from the folder listing itself where the system gives it.
    stats: bool = True
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
            size = mtime = 0
            try:
                if self.stats:
                    st = item.stat(follow_symlinks=False)
                    kind = kind_of(st.st_mode)
                    size, mtime = st.st_size, st.st_mtime_ns
                else:
                    kind = _kind_of_entry(item)
            except OSError:
                continue
            is_dir = kind == "dir"
            if is_dir and item.name in NEVER_ENTERED:
                continue
            child = f"{rel}/{item.name}" if rel else item.name
            if rules is not None and rules.ignored(self.prefix + child, is_dir=is_dir):
                continue
            if self.skip is not None and self.skip(item.path, is_dir):
                continue
            entry = Entry(child, item.path, kind, size, mtime, depth + 1)
            yield entry, rules


def descend(
    root: str, rel_dir: str, rules: IgnoreStack | None, prefix: str = ""
) -> tuple[bool, IgnoreStack | None]:
    """Whether a walk of ``root`` (with ``rules`` and ``prefix`` as :func:`walk` takes
    them) would enter the folder ``rel_dir`` below it (no folder on the way, itself
    included, is ``.git`` or ignored), and the rules that hold above that folder, as
    :func:`walk` takes them to walk it. The deny rules are not asked (the caller does)."""
    parts = rel_dir.split("/")
    if any(part in NEVER_ENTERED for part in parts):
        return False, None
    if rules is None:
        return True, None
    stack = rules.with_files(folder_rules(root, prefix.rstrip("/")))
    here = root
    for i, part in enumerate(parts):
        sub = "/".join(parts[: i + 1])
        if stack.ignored(prefix + sub, is_dir=True):
            return False, None
        if i < len(parts) - 1:
            here = os.path.join(here, part)
            stack = stack.with_files(folder_rules(here, prefix + sub))
    return True, stack


def ignored_within(root: str, rel: str, rules: IgnoreStack | None, prefix: str = "") -> bool:
    """Whether a walk of ``root`` would leave out the file ``rel`` below it: a folder on
    the way is ``.git`` or ignored, or the file is. The deny rules are not asked."""
    parent, _, _ = rel.rpartition("/")
    if parent:
        enters, stack = descend(root, parent, rules, prefix)
        if not enters:
            return True
        if stack is None:
            return False
        stack = stack.with_files(folder_rules(os.path.join(root, parent), prefix + parent))
    else:
        if rules is None:
            return False
        stack = rules.with_files(folder_rules(root, prefix.rstrip("/")))
    return stack.ignored(prefix + rel, is_dir=False)


def _kind_of_entry(item: os.DirEntry[str]) -> str:
    """An entry's kind from the folder listing (no system call where the file system
    gives the type there)."""
    if item.is_symlink():
        return "link"
    if item.is_dir(follow_symlinks=False):
        return "dir"
    if item.is_file(follow_symlinks=False):
        return "file"
    return "other"


def walk(
    root: str,
    *,
    rules: IgnoreStack | None,
    prefix: str = "",
    skip: Skip | None = None,
    max_depth: int | None = None,
    deadline: float | None = None,
    max_scanned: int = MAX_SCANNED,
    stats: bool = True,
) -> Walk:
    """A walk of the folder ``root``. ``rules`` are the ignore files that hold above it
    (an empty stack for none; None to include ignored paths), ``prefix`` its path below
    their top (``"sub/"``), ``skip`` leaves out more (deny rules); without ``stats`` the
    entries' sizes and times are 0."""
    return Walk(root, rules, prefix, skip, max_depth, deadline, max_scanned, stats)


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

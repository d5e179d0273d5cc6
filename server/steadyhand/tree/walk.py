"""Walking a folder of the workspace: every entry once, in name order, bounded.

The walk goes depth first with the entries of each folder sorted by name, so its first
``n`` entries are the first ``n`` of the whole sorted listing and a bounded listing can
stop early. It never follows a symbolic link (a link is an entry of kind ``link``, never
entered), never enters ``.git``, reads each folder's ignore files as it enters it
(:mod:`steadyhand.tree.ignore`) unless told to include ignored paths, and asks ``skip``
about every entry (the deny rules). It keeps no recursion: an explicit stack, whatever
the depth of the tree. It stops at a deadline or after a number of entries looked at,
and says which (``Walk.cut``).

Each folder is listed, sorted and judged at once when the walk enters it (one tight loop
per folder rather than a generator step per entry); its ignore files are read only when
the listing shows them, and the ignore rules are asked by name
(:meth:`steadyhand.tree.ignore.IgnoreStack.folder`).
"""

from __future__ import annotations

import bisect
import contextlib
import operator
import os
import stat
import time
from collections.abc import Callable, Collection, Iterator
from dataclasses import dataclass

from steadyhand.tree.ignore import (
    FOLDER_FILES,
    MAX_IGNORE_BYTES,
    FolderRules,
    IgnoreFile,
    IgnoreStack,
    parse,
)

#: Folders never entered (the repository's own database).
NEVER_ENTERED = frozenset({".git"})

#: Entries looked at, at most, by one walk (a bound on time and memory whatever the tree).
MAX_SCANNED = 2_000_000

#: ``skip(absolute_path, is_dir)``: True for an entry the walk must leave out.
Skip = Callable[[str, bool], bool]


@dataclass(slots=True)
class Entry:
    """One entry of the walk (not to be changed: made by the walk, read by the rest;
    not frozen, which would make each one several times slower to make)."""

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


#: What a file was when it was read (:func:`mark`): kind, identity, size, times.
Mark = tuple[int, int, int, int, int, int] | None
#: The files a computation read or looked for, each with its :data:`Mark` then.
Marks = list[tuple[str, Mark]]


def mark(st: os.stat_result | None) -> Mark:
    """A file's :data:`Mark` from its ``lstat`` (None: it is not there)."""
    if st is None:
        return None
    return (st.st_mode, st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def read_ignore_file(path: str, marks: Marks | None = None) -> str | None:
    """The text of an ignore file, or None where there is none or it is not a regular
    file (a link in its place is not followed, as git does not); what the file was is
    added to ``marks``, if given."""
    try:
        st = os.lstat(path)
    except OSError:
        if marks is not None:
            marks.append((path, None))
        return None
    if marks is not None:
        marks.append((path, mark(st)))
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


def folder_rules(
    folder: str, base: str, present: Collection[str] | None = None, marks: Marks | None = None
) -> list[IgnoreFile | None]:
    """The ignore files of ``folder`` (``base`` is its path below the stack's top);
    ``present``: the names the folder holds, when it was just listed (the others are
    not looked for); ``marks``: as :func:`read_ignore_file` takes it."""
    out: list[IgnoreFile | None] = []
    for name in FOLDER_FILES:
        if present is not None and name not in present:
            continue
        text = read_ignore_file(os.path.join(folder, name), marks)
        out.append(parse(text, base) if text is not None else None)
    return out


_name_of = operator.attrgetter("name")


def _dot_names(items: list[os.DirEntry[str]]) -> list[str]:
    """The names starting with a dot among ``items`` (sorted by name), where every ignore
    file's name is."""
    i = bisect.bisect_left(items, ".", key=_name_of)
    out: list[str] = []
    for item in items[i:]:
        if not item.name.startswith("."):
            break
        out.append(item.name)
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
        # A stack of the folders being gone through, each folder's entries listed (and
        # judged) when it is entered; an entry's folder comes right before it
        # (pre-order), each folder's entries sorted by name.
        stack = [iter(self._entries(self.root, "", 0, self.rules))]
        max_depth = self.max_depth
        while stack:
            for entry, held in stack[-1]:
                yield entry
                if self.cut is not None:
                    # The folder being listed was cut: its entries looked at are the
                    # first by name; none after its first folder is given, whose own
                    # entries were not looked at.
                    if entry.kind == "dir":
                        return
                    continue
                if entry.kind == "dir" and (max_depth is None or entry.depth < max_depth):
                    stack.append(iter(self._entries(entry.path, entry.rel, entry.depth, held)))
                    break
            else:
                stack.pop()
                if self.cut is not None:
                    return

    def _entries(
        self, folder: str, rel: str, depth: int, rules: IgnoreStack | None
    ) -> list[tuple[Entry, IgnoreStack | None]]:
        """The entries of one folder the walk keeps, each with the rules that hold
        inside the folder (where it is a folder)."""
        try:
            with os.scandir(folder) as it:
                items = sorted(it, key=_name_of)
        except OSError:
            return []
        view: FolderRules | None = None
        if rules is not None:
            here = (self.prefix + rel).rstrip("/")
            rules = rules.with_files(folder_rules(folder, here, _dot_names(items)))
            view = rules.folder(here)
        out: list[tuple[Entry, IgnoreStack | None]] = []
        scanned = self.scanned
        most = self.max_scanned
        deadline = self.deadline
        skip = self.skip
        stats = self.stats
        ignored = view.ignored if view is not None else None
        lead = rel + "/" if rel else ""
        depth += 1
        for item in items:
            scanned += 1
            if scanned > most:
                self.cut = "entries"
                break
            if deadline is not None and not scanned & 255 and time.monotonic() > deadline:
                self.cut = "time"
                break
            size = mtime = 0
            try:
                if stats:
                    st = item.stat(follow_symlinks=False)
                    kind = kind_of(st.st_mode)
                    size, mtime = st.st_size, st.st_mtime_ns
                # the kind from the listing itself, where the system gives it there
                elif item.is_file(follow_symlinks=False):
                    kind = "file"
                elif item.is_dir(follow_symlinks=False):
                    kind = "dir"
                else:
                    kind = "link" if item.is_symlink() else "other"
            except OSError:
                continue
            is_dir = kind == "dir"
            name = item.name
            if is_dir and name in NEVER_ENTERED:
                continue
            if ignored is not None and ignored(name, is_dir=is_dir):
                continue
            path = item.path
            if skip is not None and skip(path, is_dir):
                continue
            out.append((Entry(lead + name, path, kind, size, mtime, depth), rules))
        self.scanned = scanned
        return out


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

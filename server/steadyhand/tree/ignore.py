"""Which paths the ignore files leave out, as git and ripgrep read them (pure).

The rules of one ignore file (``.gitignore``, ``.ignore``, ``.git/info/exclude``, the
global excludes file) hold for the paths under the folder it sits in, relative to that
folder. Several files are stacked from the top down: a file deeper in the tree wins over
one above it, ``.ignore`` wins over ``.gitignore`` in the same folder, and within a file
the last pattern that matches wins, so ``!keep.log`` re-includes what ``*.log`` left
out. A folder that is left out is not entered, so nothing under it can be included again,
as git says. Patterns are gitignore's, through ``pathspec``'s ``GitIgnoreSpec``.

Every path here is relative to the top of the stack and uses ``/``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

import pathspec

#: Ignore files read in each folder, lowest precedence first (ripgrep's order).
FOLDER_FILES = (".gitignore", ".ignore", ".rgignore")

#: Longest ignore file read, in bytes; a larger one is read up to here.
MAX_IGNORE_BYTES = 1 << 20


@dataclass(frozen=True, slots=True)
class IgnoreFile:
    """The rules of one ignore file and the folder they hold under (``""`` for the top)."""

    base: str
    spec: pathspec.GitIgnoreSpec
    #: One regex that matches where any of the patterns does: a path it does not match
    #: gets no verdict from this file, without asking each pattern (None: ask them).
    quick: re.Pattern[str] | None = field(default=None, compare=False)


def parse(text: str, base: str) -> IgnoreFile | None:
    """The rules in ``text`` for the folder ``base``, or None when it holds none."""
    lines = [line for line in text.splitlines() if line.strip() and not line.startswith("#")]
    if not lines:
        return None
    try:
        spec = pathspec.GitIgnoreSpec.from_lines(lines)
    except (ValueError, TypeError):
        # One bad line must not cost the rest: keep the lines that compile on their own.
        kept = [line for line in lines if _compiles(line)]
        if not kept:
            return None
        spec = pathspec.GitIgnoreSpec.from_lines(kept)
    return IgnoreFile(base.strip("/"), spec, _quick(spec))


_NAMED_GROUP = re.compile(r"\(\?P<\w+>")


def _quick(spec: pathspec.GitIgnoreSpec) -> re.Pattern[str] | None:
    """The union of the spec's patterns (their groups unnamed, as several patterns name
    the same group), or None when a pattern is not a plain regex."""
    sources: list[str] = []
    for pattern in spec.patterns:
        if pattern.include is None:
            continue
        rx = getattr(pattern, "regex", None)
        if not isinstance(rx, re.Pattern):
            return None
        sources.append(_NAMED_GROUP.sub("(?:", rx.pattern))
    if not sources:
        return None
    try:
        return re.compile("|".join(f"(?:{s})" for s in sources))
    except re.error:
        return None


def _compiles(line: str) -> bool:
    try:
        pathspec.GitIgnoreSpec.from_lines([line])
    except (ValueError, TypeError):
        return False
    return True


def _under(rel: str, base: str) -> str | None:
    if not base:
        return rel
    if rel.startswith(base + "/"):
        return rel[len(base) + 1 :]
    return None


@dataclass(frozen=True, slots=True)
class IgnoreStack:
    """The ignore files that hold at one folder, lowest precedence first."""

    files: tuple[IgnoreFile, ...] = ()

    def with_files(self, files: Iterable[IgnoreFile | None]) -> IgnoreStack:
        """This stack with ``files`` (read in one folder, lowest precedence first) on top."""
        added = tuple(f for f in files if f is not None)
        return IgnoreStack(self.files + added) if added else self

    def ignored(self, rel: str, *, is_dir: bool) -> bool:
        """Whether the path ``rel`` (below the top, ``/``-separated) is left out."""
        for rules in reversed(self.files):
            sub = _under(rel, rules.base)
            if sub is None or not sub:
                continue
            if is_dir:
                sub += "/"
            if rules.quick is not None and rules.quick.match(sub) is None:
                continue  # no pattern of this file matches: no verdict from it
            verdict = rules.spec.check_file(sub).include
            if verdict is not None:
                return verdict
        return False

"""Which paths the ignore files leave out, as git and ripgrep read them (pure).

The rules of one ignore file (``.gitignore``, ``.ignore``, ``.git/info/exclude``, the
global excludes file) hold for the paths under the folder it sits in, relative to that
folder. Several files are stacked from the top down: a file deeper in the tree wins over
one above it, ``.ignore`` wins over ``.gitignore`` in the same folder, and within a file
the last pattern that matches wins, so ``!keep.log`` re-includes what ``*.log`` left
out. A folder that is left out is not entered, so nothing under it can be included again,
as git says. Patterns are gitignore's, through ``pathspec``'s ``GitIgnoreSpec``.

Every path here is relative to the top of the stack and uses ``/``.

A walk asks about every entry, so the question is made cheap there: each file's patterns
are sorted once into those that hold for a name at any depth (``*.log``, ``build/``),
asked of the entry's name alone (a set, a suffix, a prefix, one regex), and those that
name a path (``docs/*.md``), asked of the path; :meth:`IgnoreStack.folder` gives the
rules of one folder in that form. Parsing is kept by text, so a folder's ignore file is
compiled once however often it is read.
"""

from __future__ import annotations

import re
import threading
from collections import OrderedDict
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
    #: The patterns sorted for asking names (:func:`_sorted`); None when some pattern
    #: could not be sorted (then every path is asked with ``quick``).
    names: NameRules | None = field(default=None, compare=False)


@dataclass(frozen=True, slots=True)
class NameRules:
    """An ignore file's patterns as a walk asks them. A pattern without a ``/`` but a
    trailing one holds for a name at any depth; it can match a path below the file's
    folder only where it matches one of the path's names, so an entry whose folders
    match none of them (:meth:`hits`) is asked about its own name alone: in ``exact``
    (``build``), ``suffixes`` (``*.log``), ``prefixes`` (``tmp*``) or ``name_rx`` (the
    rest, as a regex of the name, with a ``/`` after a folder's). Patterns that name a
    path are asked of the path below the file's folder (``path_rx``)."""

    exact: frozenset[str]
    suffixes: tuple[str, ...]
    prefixes: tuple[str, ...]
    name_rx: re.Pattern[str] | None
    path_rx: re.Pattern[str] | None

    def hits(self, name: str, *, is_dir: bool) -> bool:
        """Whether a pattern for names may match ``name`` (a superset: the spec decides)."""
        if name in self.exact or name.endswith(self.suffixes) or name.startswith(self.prefixes):
            return True
        rx = self.name_rx
        return rx is not None and rx.match(name + "/" if is_dir else name) is not None


def parse(text: str, base: str) -> IgnoreFile | None:
    """The rules in ``text`` for the folder ``base``, or None when it holds none."""
    return _parsed(text, base.strip("/"))


#: Texts of ignore files parsed, most recently used last, and how many characters they
#: hold together (bounded: :data:`_PARSED_CHARS`).
_parsed_cache: OrderedDict[tuple[str, str], IgnoreFile | None] = OrderedDict()
_parsed_chars = 0
_parsed_lock = threading.Lock()
_PARSED_CHARS = 4 << 20


def _parsed(text: str, base: str) -> IgnoreFile | None:
    """:func:`parse` of ``text``, compiled once while it is kept."""
    global _parsed_chars
    key = (text, base)
    with _parsed_lock:
        if key in _parsed_cache:
            _parsed_cache.move_to_end(key)
            return _parsed_cache[key]
    made = _compile(text, base)
    with _parsed_lock:
        if key not in _parsed_cache:
            _parsed_cache[key] = made
            _parsed_chars += len(text) + len(base) + 64
        while _parsed_chars > _PARSED_CHARS and len(_parsed_cache) > 1:
            (old_text, old_base), _ = _parsed_cache.popitem(last=False)
            _parsed_chars -= len(old_text) + len(old_base) + 64
    return made


def _compile(text: str, base: str) -> IgnoreFile | None:
    lines = [line for line in text.splitlines() if line.strip() and not line.startswith("#")]
    if not lines:
        return None
    spec: pathspec.GitIgnoreSpec | None
    try:
        spec = pathspec.GitIgnoreSpec.from_lines(lines)
    except (ValueError, TypeError):
        # One bad line must not cost the rest: keep the lines that compile on their own.
        kept = [line for line in lines if _compiles(line)]
        spec = pathspec.GitIgnoreSpec.from_lines(kept) if kept else None
    return None if spec is None else IgnoreFile(base, spec, _quick(spec), _sorted(spec))


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


#: How pathspec begins the regex of a pattern that holds at any depth.
_ANY_DEPTH = "^(?:.+/)?"
#: How it ends one: a folder only, or a file or a folder.
_ENDINGS = ("(?P<ps_d>/)", "(?:(?P<ps_d>/)|$)")
#: The regex of a name that no part of can match a ``/``: escaped or plain characters,
#: ``[^/]`` (``?``), ``[^/]*`` (``*``) and classes that are not negated.
_ONE_NAME = re.compile(r"(?:\\[^/]|[^\\\[\]().*+?{}|^$/]|\[\^/\]\*?|\[[^\]^/\\][^\]/\\]*\])+")
#: A literal name, as pathspec escapes one.
_LITERAL = re.compile(r"(?:\\[^/]|[^\\\[\]().*+?{}|^$/])+")
_ANY_NAME = "[^/]*"


def _unescaped(literal: str) -> str:
    return re.sub(r"\\(.)", r"\1", literal)


def _sorted(spec: pathspec.GitIgnoreSpec) -> NameRules | None:
    """The spec's patterns sorted for asking names (:class:`NameRules`), or None when a
    pattern's regex is not of a form known here (then nothing is sorted)."""
    exact: set[str] = set()
    suffixes: list[str] = []
    prefixes: list[str] = []
    by_name: list[str] = []
    by_path: list[str] = []
    for pattern in spec.patterns:
        if pattern.include is None:
            continue
        rx = getattr(pattern, "regex", None)
        if not isinstance(rx, re.Pattern):
            return None
        source = _NAMED_GROUP.sub("(?:", rx.pattern)
        ending = next((e for e in _ENDINGS if rx.pattern.endswith(e)), None)
        middle = rx.pattern[len(_ANY_DEPTH) : -len(ending)] if ending else ""
        if not (rx.pattern.startswith(_ANY_DEPTH) and _ONE_NAME.fullmatch(middle)):
            by_path.append(source)
        elif _LITERAL.fullmatch(middle):
            exact.add(_unescaped(middle))
        elif middle.startswith(_ANY_NAME) and _LITERAL.fullmatch(middle[len(_ANY_NAME) :]):
            suffixes.append(_unescaped(middle[len(_ANY_NAME) :]))
        elif middle.endswith(_ANY_NAME) and _LITERAL.fullmatch(middle[: -len(_ANY_NAME)]):
            prefixes.append(_unescaped(middle[: -len(_ANY_NAME)]))
        else:
            by_name.append(source)
    try:
        name_rx = re.compile("|".join(f"(?:{s})" for s in by_name)) if by_name else None
        path_rx = re.compile("|".join(f"(?:{s})" for s in by_path)) if by_path else None
    except re.error:
        return None
    return NameRules(frozenset(exact), tuple(suffixes), tuple(prefixes), name_rx, path_rx)


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

    def folder(self, rel: str) -> FolderRules:
        """The rules for the entries of the folder ``rel`` (below the top; ``""`` for
        the top), asked by name (:meth:`FolderRules.ignored`)."""
        levels: list[tuple[IgnoreFile, str, bool]] = []
        for rules in reversed(self.files):
            if not rules.base:
                below = rel
            elif rel == rules.base:
                below = ""
            elif rel.startswith(rules.base + "/"):
                below = rel[len(rules.base) + 1 :]
            else:
                continue
            names = rules.names
            # by name only where no folder on the way matches a pattern for names
            by_name = names is not None and not any(
                names.hits(part, is_dir=True) for part in below.split("/") if part
            )
            levels.append((rules, below + "/" if below else "", by_name))
        return FolderRules(tuple(levels))


@dataclass(frozen=True, slots=True)
class FolderRules:
    """The ignore rules that hold for the entries of one folder, highest precedence
    first: each file, the folder's path below the file's folder (``""`` or ``a/b/``),
    and whether the file's patterns may be asked by name (:class:`NameRules`)."""

    levels: tuple[tuple[IgnoreFile, str, bool], ...]

    def ignored(self, name: str, *, is_dir: bool) -> bool:
        """Whether the entry ``name`` of the folder is left out: what
        :meth:`IgnoreStack.ignored` says of its path."""
        for rules, below, by_name in self.levels:
            sub = below + name + "/" if is_dir else below + name
            names = rules.names
            if by_name and names is not None:
                if not (
                    name in names.exact
                    or name.endswith(names.suffixes)
                    or name.startswith(names.prefixes)
                    or (
                        names.name_rx is not None
                        and names.name_rx.match(name + "/" if is_dir else name)
                    )
                    or (names.path_rx is not None and names.path_rx.match(sub))
                ):
                    continue
            elif rules.quick is not None and rules.quick.match(sub) is None:
                continue
            verdict = rules.spec.check_file(sub).include
            if verdict is not None:
                return verdict
        return False

"""Parameters of each command, and their strict validation.

Parameter names are snake_case on purpose: they are the names models already use for
file tools. Anything that does not fit (a missing field, a wrong type, an unknown key)
raises :class:`ParamsError`, which the server turns into a JSON-RPC InvalidParams error
naming the field.
"""

from __future__ import annotations

import dataclasses
import difflib
import functools
import math
import re
import types
import typing
from collections.abc import Hashable
from dataclasses import dataclass, field
from typing import Any, ClassVar, TypeVar, cast, get_type_hints

from steadyhand.protocol.commands import DEFAULT_SESSION


class ParamsError(ValueError):
    """The arguments of a command do not fit its parameters."""

    def __init__(self, message: str, field_name: str | None = None) -> None:
        super().__init__(message)
        self.field_name = field_name


#: Files one read of several answers, at most.
MAX_READ_FILES = 20


@dataclass(frozen=True, slots=True)
class ReadParams:
    #: The file to read (required unless ``file_paths`` is given).
    file_path: str | None = None
    offset: int | None = None
    limit: int | None = None
    session: str = DEFAULT_SESSION
    #: PDF pages to read: "3", "1-5", "7-" or a comma list of those.
    pages: str | None = None
    #: Notebooks: deliver image outputs (base64, downscaled) instead of summarizing them.
    include_images: bool = False
    #: Several files to read in one call, each as ``file_path`` would be.
    file_paths: list[str] | None = None

    def __post_init__(self) -> None:
        if self.file_paths is None and self.file_path is None:
            raise ParamsError(
                "Missing required parameter: `file_path` must be a string (the file to read), "
                "or `file_paths` a list of paths (to read several files at once).",
                "file_path",
            )
        if self.file_paths is not None and self.file_path is not None:
            raise ParamsError(
                "Pass `file_path` (one file) or `file_paths` (several), not both.", "file_paths"
            )


#: Kinds of entries ``list`` answers: ``type`` names one of these.
LIST_TYPES = ("files", "folders", "all")
LIST_SORTS = ("name", "modified")
SEARCH_MODES = ("files", "content", "count")
#: The most entries, files or lines one ``list`` or ``search`` answers.
MAX_LIST_LIMIT = 5000


def _one_of(name: str, value: str | None, allowed: tuple[str, ...]) -> None:
    if value is not None and value not in allowed:
        shown = ", ".join(f'"{a}"' for a in allowed)
        raise ParamsError(f"`{name}` must be one of {shown}.", name)


@dataclass(frozen=True, slots=True)
class ListParams:
    #: The folder to list (or one file); default: every workspace root.
    path: str | None = None
    #: A glob the listed paths must match (relative to ``path``): ``**/*.py``.
    pattern: str | None = None
    #: How deep to go (1: the folder's own entries); default: all the way down.
    depth: int | None = None
    #: "files", "folders" or "all" (default: "files" with a pattern, else "all").
    type: str | None = None
    #: "name" (tree order) or "modified" (newest first).
    sort: str = "name"
    limit: int | None = None
    #: Each file's size in bytes (and when it last changed).
    sizes: bool = False
    #: Each text file's number of lines.
    line_counts: bool = False
    #: List what ``.gitignore``, ``.ignore`` and the global excludes leave out as well.
    include_ignored: bool = False
    session: str = DEFAULT_SESSION

    ALIASES: ClassVar[dict[str, str]] = {"file_path": "path", "glob": "pattern"}

    def __post_init__(self) -> None:
        _one_of("type", self.type, LIST_TYPES)
        _one_of("sort", self.sort, LIST_SORTS)


@dataclass(frozen=True, slots=True)
class SearchParams:
    #: A regular expression (Python's syntax), or the text itself with ``literal``.
    pattern: str
    #: The folder (or file) to search; default: every workspace root.
    path: str | None = None
    #: Only files whose path matches this glob (``*.py``, ``src/**/*.ts``, ``!*.min.js``).
    glob: str | None = None
    #: Only files of this type: ``py``, ``js``, ``ts``, ``go``, ``rust``...
    type: str | None = None
    literal: bool = False
    case_insensitive: bool = False
    #: Let a match span lines (``.`` does not match a line break either way).
    multiline: bool = False
    #: "files" (the files that match), "content" (the matching lines) or "count".
    output_mode: str = "files"
    #: Lines of context around each match (``before`` and ``after`` at once).
    context: int | None = None
    before: int | None = None
    after: int | None = None
    limit: int | None = None
    include_ignored: bool = False
    session: str = DEFAULT_SESSION

    #: Grep's spellings.
    ALIASES: ClassVar[dict[str, str]] = {
        "file_path": "path",
        "head_limit": "limit",
        "-i": "case_insensitive",
        "-A": "after",
        "-B": "before",
        "-C": "context",
    }

    def __post_init__(self) -> None:
        if self.output_mode == "files_with_matches":  # Grep's name for it
            object.__setattr__(self, "output_mode", "files")
        _one_of("output_mode", self.output_mode, SEARCH_MODES)


@dataclass(frozen=True, slots=True)
class InfoParams:
    file_path: str

    ALIASES: ClassVar[dict[str, str]] = {"path": "file_path"}


@dataclass(frozen=True, slots=True)
class CreateDirectoryParams:
    path: str
    session: str = DEFAULT_SESSION

    ALIASES: ClassVar[dict[str, str]] = {"file_path": "path"}


@dataclass(frozen=True, slots=True)
class NotebookEditParams:
    file_path: str
    #: The cell to replace or delete, or to insert after (insert without it: at the top).
    cell_id: str | None = None
    new_source: str = ""
    edit_mode: str = "replace"
    #: "code", "markdown" or "raw": required for inserts, changes the type on replace.
    cell_type: str | None = None
    session: str = DEFAULT_SESSION
    #: The whole diff in the result even when it is long (by default a long diff is
    #: left out and the result says which lines changed).
    include_diff: bool = False

    #: ``notebook_path`` is the name models know from other notebook tools.
    ALIASES: ClassVar[dict[str, str]] = {"notebook_path": "file_path"}

    def __post_init__(self) -> None:
        if self.edit_mode == "insert" and self.cell_type is None:
            raise ParamsError(
                'An insert needs `cell_type` ("code", "markdown" or "raw").', "cell_type"
            )
        if self.edit_mode != "insert" and not self.cell_id:
            raise ParamsError(
                f"A {self.edit_mode} needs `cell_id` (the cell's id as read shows it).", "cell_id"
            )


@dataclass(frozen=True, slots=True)
class EditParams:
    file_path: str
    old_string: str
    new_string: str
    replace_all: bool = False
    session: str = DEFAULT_SESSION
    expected_replacements: int | None = None
    dry_run: bool = False
    #: The whole diff in the result even when it is long (by default a long diff is
    #: left out and the result says which lines changed).
    include_diff: bool = False


@dataclass(frozen=True, slots=True)
class EditItem:
    """One edit of ``steadyhand.multiEdit``."""

    old_string: str
    new_string: str
    replace_all: bool = False
    expected_replacements: int | None = None


@dataclass(frozen=True, slots=True)
class MultiEditParams:
    file_path: str
    edits: list[EditItem]
    session: str = DEFAULT_SESSION
    dry_run: bool = False
    #: The whole diff in the result even when it is long (by default a long diff is
    #: left out and the result says which lines changed).
    include_diff: bool = False


@dataclass(frozen=True, slots=True)
class WriteParams:
    file_path: str
    content: str
    session: str = DEFAULT_SESSION
    dry_run: bool = False
    #: The whole diff in the result even when it is long (by default a long diff is
    #: left out and the result says which lines changed).
    include_diff: bool = False


@dataclass(frozen=True, slots=True)
class ForkParams:
    session: str
    parent: str = DEFAULT_SESSION
    #: The new session may read but every change it asks for is refused (``read_only``).
    read_only: bool = False

    #: Other spellings accepted for a parameter (the snake_case name is canonical).
    ALIASES: ClassVar[dict[str, str]] = {"readOnly": "read_only"}


@dataclass(frozen=True, slots=True)
class CloseParams:
    session: str


@dataclass(frozen=True, slots=True)
class PingParams:
    pass


@dataclass(frozen=True, slots=True)
class HistoryParams:
    file_path: str
    #: Only this session's changes (default: every session's).
    session: str | None = None
    #: The newest this many versions.
    limit: int | None = None


@dataclass(frozen=True, slots=True)
class UndoParams:
    #: Undo the last change to this file (needed unless ``id`` is given).
    file_path: str | None = None
    #: Undo this session's last change to the file (default: the last change by anyone).
    #: With ``id``: the session the undo is made as (default: the change's own).
    session: str | None = None
    #: Restore even though the file changed since Steadyhand wrote it.
    force: bool = False
    #: The whole diff in the result even when it is long (by default a long diff is
    #: left out and the result says which lines changed).
    include_diff: bool = False
    #: Take back this one change (an id from ``changes`` or ``history``, or its first 6
    #: characters or more).
    id: str | None = None

    def __post_init__(self) -> None:
        if self.file_path is None and self.id is None:
            raise ParamsError(
                "`file_path` must be given (a string: the file whose last change to undo), "
                "or `id` (one change to take back, as changes lists it).",
                "file_path",
            )


@dataclass(frozen=True, slots=True)
class ChangesParams:
    #: Only this session's changes (default: every session's).
    session: str | None = None
    #: Only changes to this file, or to files in this folder.
    path: str | None = None
    #: Only changes made after this checkpoint (an id, or a label).
    since: str | None = None
    #: The newest this many changes (default 50).
    limit: int | None = None

    ALIASES: ClassVar[dict[str, str]] = {"file_path": "path"}


@dataclass(frozen=True, slots=True)
class ChangeParams:
    #: The change's id (from ``changes`` or ``history``), or its first 6 characters or more.
    id: str
    #: The file the change was made to: tells apart changes an id names more than one of.
    file_path: str | None = None


@dataclass(frozen=True, slots=True)
class CheckpointParams:
    session: str = DEFAULT_SESSION
    label: str | None = None


@dataclass(frozen=True, slots=True)
class RewindParams:
    #: A checkpoint id (``cp-…``) or label of this session.
    checkpoint: str
    session: str = DEFAULT_SESSION
    #: The whole diff in the result even when it is long (by default a long diff is
    #: left out and the result says which lines changed).
    include_diff: bool = False


_PAGES = re.compile(r"^\s*\d+\s*(?:-\s*\d*\s*)?(?:,\s*\d+\s*(?:-\s*\d*\s*)?)*$")
_LONG_NUMBER = re.compile(r"\d{10}")


def _short_numbers(v: str) -> bool:
    """Whether every number in ``v`` has at most 9 digits (a page, not a parser's load)."""
    return _LONG_NUMBER.search(v) is None


#: Keys models commonly send by mistake, mapped to the parameter they meant.
_KNOWN_SLIPS: dict[str, str] = {
    "path": "file_path",
    "filename": "file_path",
    "file": "file_path",
    "uri": "file_path",
    "text": "content",
    "contents": "content",
    "old": "old_string",
    "new": "new_string",
    "old_str": "old_string",
    "new_str": "new_string",
    "start_line": "offset",
    "line": "offset",
    "count": "limit",
    # session.fork: where the new session's records come from
    "parent_session": "parent",
    "parent_name": "parent",
    "parent_id": "parent",
    "from_session": "parent",
    "source_session": "parent",
    "base_session": "parent",
    "from": "parent",
}

#: Extra checks on values, by field name: (predicate, what it must be).
_VALUE_RULES: dict[str, tuple[typing.Callable[[Any], bool], str]] = {
    "offset": (lambda v: v >= 0, "a line number (1 is the first line; 0 counts as 1)"),
    "limit": (lambda v: v >= 1, "a positive line count"),
    "session": (lambda v: 0 < len(v) <= 256, "a non-empty name of at most 256 characters"),
    "parent": (lambda v: 0 < len(v) <= 256, "a non-empty name of at most 256 characters"),
    "expected_replacements": (lambda v: v >= 1, "a positive number of replacements"),
    "edits": (lambda v: len(v) >= 1, "a non-empty list of {old_string, new_string} objects"),
    "checkpoint": (lambda v: 0 < len(v) <= 256, "a non-empty name of at most 256 characters"),
    "since": (lambda v: 0 < len(v) <= 256, "a checkpoint id or label (at most 256 characters)"),
    "id": (lambda v: 0 < len(v) <= 64, "a change id as changes or history lists it"),
    "label": (lambda v: len(v) <= 256, "a label of at most 256 characters"),
    "pages": (
        lambda v: _PAGES.match(v) is not None and _short_numbers(v),
        'page numbers such as "3", "1-5", "7-" or "1,4-6" (each of at most 9 digits)',
    ),
    "cell_id": (
        lambda v: 0 < len(v) <= 256,
        "a cell id as read shows it (at most 256 characters)",
    ),
    "edit_mode": (
        lambda v: v in ("replace", "insert", "delete"),
        '"replace", "insert" or "delete"',
    ),
    "cell_type": (lambda v: v in ("code", "markdown", "raw"), '"code", "markdown" or "raw"'),
    "file_paths": (
        lambda v: 1 <= len(v) <= MAX_READ_FILES,
        f"a list of 1 to {MAX_READ_FILES} paths (read more in further calls)",
    ),
    "depth": (lambda v: v >= 1, "a positive depth (1: the folder's own entries)"),
    "pattern": (lambda v: 0 < len(v) <= 10_000, "a non-empty pattern of at most 10,000 characters"),
    "glob": (lambda v: 0 < len(v) <= 4096, "a non-empty glob such as *.py or src/**/*.ts"),
    "context": (lambda v: 0 <= v <= 100, "a number of lines from 0 to 100"),
    "before": (lambda v: 0 <= v <= 100, "a number of lines from 0 to 100"),
    "after": (lambda v: 0 <= v <= 100, "a number of lines from 0 to 100"),
}

P = TypeVar("P")


def _snake(name: str) -> str:
    return re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", name).lower().replace("-", "_")


def suggest(key: str, known: typing.Iterable[str]) -> str | None:
    """The parameter an unknown key most likely meant, if any."""
    known = list(known)
    for candidate in (_snake(key), _KNOWN_SLIPS.get(key), _KNOWN_SLIPS.get(_snake(key))):
        if candidate in known:
            return candidate
    snake = _snake(key)
    # A longer name that starts with a known one (``parent_session`` for ``parent``) means
    # that one, not another it merely resembles more closely letter by letter.
    for candidate in sorted(known, key=len, reverse=True):
        if snake.startswith(candidate + "_"):
            return candidate
    close = difflib.get_close_matches(_snake(key), known, n=1, cutoff=0.6)
    return close[0] if close else None


def _type_name(tp: Any) -> str:
    if tp is bool:
        return "a boolean"
    if tp is int:
        return "an integer"
    if tp is str:
        return "a string"
    origin = typing.get_origin(tp)
    if origin is list:
        return "a list"
    if origin is dict:
        return "an object"
    return str(tp)


def _check_type(name: str, value: Any, tp: Any) -> Any:
    if isinstance(value, float) and math.isinf(value):  # 1e999, or 5,000 digits
        raise ParamsError(f"`{name}` is a number far too large for any parameter.", name)
    origin = typing.get_origin(tp)
    if origin in (types.UnionType, typing.Union):
        args = [a for a in typing.get_args(tp) if a is not type(None)]
        if value is None:
            return None
        return _check_type(name, value, args[0])
    if tp is bool:
        if not isinstance(value, bool):
            raise ParamsError(f"`{name}` must be a boolean (true or false).", name)
        return value
    if tp is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise ParamsError(f"`{name}` must be an integer.", name)
        return value
    if tp is str:
        if not isinstance(value, str):
            raise ParamsError(f"`{name}` must be a string.", name)
        return value
    if origin is list:
        if not isinstance(value, list):
            raise ParamsError(f"`{name}` must be a list.", name)
        (item_tp,) = typing.get_args(tp)
        return [_check_type(f"{name}[{i}]", v, item_tp) for i, v in enumerate(value)]
    if origin is dict or tp is dict:
        if not isinstance(value, dict):
            raise ParamsError(f"`{name}` must be an object.", name)
        return value
    if dataclasses.is_dataclass(tp) and isinstance(tp, type):
        return structure(tp, value, where=f"`{name}`")
    return value


class _Field(typing.NamedTuple):
    name: str
    hint: Any
    #: The one type a plain value has (``str`` for ``str | None``), checked by identity
    #: before the full check; None when there is no such type.
    plain: type | None
    required: bool
    rule: tuple[typing.Callable[[Any], bool], str] | None


class _Shape(typing.NamedTuple):
    fields: tuple[_Field, ...]
    names: frozenset[str]
    aliases: dict[str, str]


_PLAIN_TYPES = (bool, int, str)


def _plain_type(tp: Any) -> type | None:
    if typing.get_origin(tp) in (types.UnionType, typing.Union):
        args = [a for a in typing.get_args(tp) if a is not type(None)]
        tp = args[0] if len(args) == 1 else None
    return tp if tp in _PLAIN_TYPES else None


@functools.cache
def _shape(cls: Hashable) -> _Shape:
    """What validating a params class needs, worked out once per class."""
    hints = get_type_hints(cls)
    fields = tuple(
        _Field(
            f.name,
            hints[f.name],
            _plain_type(hints[f.name]),
            f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING,
            _VALUE_RULES.get(f.name),
        )
        for f in dataclasses.fields(cls)  # type: ignore[arg-type]
    )
    aliases: dict[str, str] = getattr(cls, "ALIASES", {})
    return _Shape(fields, frozenset(f.name for f in fields), aliases)


def structure(cls: type[P], raw: Any, *, where: str = "the arguments") -> P:
    """Validate ``raw`` (one JSON object) against the dataclass ``cls``."""
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        raise ParamsError(f"{where} must be one JSON object with named fields.")
    shape = _shape(cast(Hashable, cls))
    for alias, name in shape.aliases.items():
        if alias in raw:
            if name in raw:
                raise ParamsError(f"Pass `{name}` or `{alias}`, not both.", alias)
            raw = {(name if k == alias else k): v for k, v in raw.items()}
    for key in raw:
        if key not in shape.names:
            names = [f.name for f in shape.fields]
            hint = suggest(str(key), names)
            extra = f" Did you mean `{hint}`?" if hint else ""
            allowed = ", ".join(f"`{n}`" for n in names) or "none"
            raise ParamsError(
                f"Unknown parameter `{key}` in {where}.{extra} Allowed: {allowed}.", str(key)
            )
    values: dict[str, Any] = {}
    for f in shape.fields:
        value = raw.get(f.name)
        if value is None:
            if f.required:
                inside = "" if where == "the arguments" else f" in {where}"
                raise ParamsError(
                    f"Missing required parameter `{f.name}` ({_type_name(f.hint)}){inside}.",
                    f.name,
                )
            continue
        if type(value) is not f.plain:
            value = _check_type(f.name, value, f.hint)
        if f.rule is not None and value is not None and not f.rule[0](value):
            raise ParamsError(f"`{f.name}` must be {f.rule[1]}.", f.name)
        values[f.name] = value
    return cls(**values)


def parse_arguments(cls: type[P], arguments: tuple[Any, ...]) -> P:
    """Structure the ``arguments`` array of ``workspace/executeCommand``: one object."""
    if len(arguments) == 0:
        return structure(cls, {})
    if len(arguments) > 1:
        raise ParamsError(
            f"Expected one JSON object as the only argument, got {len(arguments)} arguments."
        )
    if not isinstance(arguments[0], dict | None):
        raise ParamsError(
            "The arguments must be a list holding one JSON object with named fields, as in "
            '"arguments": [{"file_path": "src/app.py"}].'
        )
    return structure(cls, arguments[0])


__all__ = [
    "ChangeParams",
    "ChangesParams",
    "CheckpointParams",
    "CloseParams",
    "CreateDirectoryParams",
    "EditItem",
    "EditParams",
    "ForkParams",
    "HistoryParams",
    "InfoParams",
    "ListParams",
    "MultiEditParams",
    "NotebookEditParams",
    "ParamsError",
    "PingParams",
    "ReadParams",
    "RewindParams",
    "SearchParams",
    "UndoParams",
    "WriteParams",
    "field",
    "parse_arguments",
    "structure",
    "suggest",
]

"""Parameters of each command, and their strict validation.

Parameter names are snake_case on purpose: they are the names models already use for
file tools. Anything that does not fit (a missing field, a wrong type, an unknown key)
raises :class:`ParamsError`, which the server turns into a JSON-RPC InvalidParams error
naming the field.

Each parameter is written once, here: its type and default (the dataclass field), and in
an :class:`Arg` beside it, what it means to a model and the bound on its value. The same
:class:`Arg` is the check :func:`structure` runs and the JSON Schema every face states
(``protocol/spec``), so the faces cannot drift from what the server accepts.
"""

from __future__ import annotations

import dataclasses
import difflib
import functools
import math
import re
import types
import typing
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from typing import Annotated, Any, ClassVar, TypeVar, cast, get_type_hints

from steadyhand.protocol.commands import DEFAULT_SESSION


class ParamsError(ValueError):
    """The arguments of a command do not fit its parameters."""

    def __init__(self, message: str, field_name: str | None = None) -> None:
        super().__init__(message)
        self.field_name = field_name


#: Files one read of several answers, at most.
MAX_READ_FILES = 20


@dataclass(frozen=True, slots=True)
class Arg:
    """One parameter as a model is told of it, and the bound on its value.

    ``doc`` is the description for the model; ``{name}`` in it is filled in per face
    (another tool's name as that face calls it, or a sentence only that face needs; see
    ``protocol/spec``). A bound (``minimum``, lengths, ``values``, ``pattern``) is checked
    by :func:`structure`, which refuses a value outside it with "`name` must be
    ``what``.", and stated in the JSON Schema of every face.
    """

    doc: str
    minimum: int | None = None
    maximum: int | None = None
    min_length: int | None = None
    max_length: int | None = None
    min_items: int | None = None
    max_items: int | None = None
    values: tuple[str, ...] = ()
    #: A regular expression the whole value must match (``re`` syntax; JSON Schema's
    #: ``pattern``, anchored with ``^`` and ``$``).
    pattern: str | None = None
    #: What a value must be, for the refusal of one outside the bound.
    what: str = ""
    #: The value names a file or folder (a face that runs in another folder than the
    #: server makes a relative one absolute).
    path: bool = False

    def __post_init__(self) -> None:
        if self.bounded and not self.what:
            raise ValueError(f"a bounded parameter says what its value must be: {self.doc!r}")

    @property
    def bounded(self) -> bool:
        numbers = (self.minimum, self.maximum, self.min_length, self.max_length)
        counts = (self.min_items, self.max_items)
        bounds = (*numbers, *counts, self.pattern)
        return any(b is not None for b in bounds) or bool(self.values)

    def holds(self, value: Any) -> bool:
        """Whether ``value`` (of the parameter's type) is inside the bound."""
        if self.minimum is not None and value < self.minimum:
            return False
        if self.maximum is not None and value > self.maximum:
            return False
        if self.min_length is not None and len(value) < self.min_length:
            return False
        if self.max_length is not None and len(value) > self.max_length:
            return False
        if self.min_items is not None and len(value) < self.min_items:
            return False
        if self.max_items is not None and len(value) > self.max_items:
            return False
        if self.values and value not in self.values:
            return False
        return self.pattern is None or _regex(self.pattern).match(value) is not None

    def schema(self) -> dict[str, Any]:
        """The bound as JSON Schema keywords."""
        out: dict[str, Any] = {}
        if self.minimum is not None:
            out["minimum"] = self.minimum
        if self.maximum is not None:
            out["maximum"] = self.maximum
        if self.min_length is not None:
            out["minLength"] = self.min_length
        if self.max_length is not None:
            out["maxLength"] = self.max_length
        if self.min_items is not None:
            out["minItems"] = self.min_items
        if self.max_items is not None:
            out["maxItems"] = self.max_items
        if self.values:
            out["enum"] = list(self.values)
        if self.pattern is not None:
            out["pattern"] = self.pattern
        return out


@functools.cache
def _regex(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern)


@dataclass(frozen=True, slots=True)
class Rule:
    """A condition across parameters, checked once each has its type and bound: when
    ``broken`` holds for the parsed parameters, the call is refused with ``message``,
    naming ``field``. JSON Schema could state some of these only with ``anyOf`` or ``if``
    at the top of a tool's schema, which several hosts refuse: descriptions state them."""

    field: str
    broken: Callable[[Any], bool]
    message: Callable[[Any], str]
    #: The case in words, for a model ("unless id is given").
    case: str = ""


def needs(
    field: str,
    when: Callable[[Any], bool],
    message: str | Callable[[Any], str],
    *,
    empty_counts: bool = False,
    case: str = "",
) -> Rule:
    """``field`` must be given when ``when`` holds: missing is None (or, with
    ``empty_counts``, empty too)."""

    def broken(p: Any) -> bool:
        value = getattr(p, field)
        return (value is None or (empty_counts and not value)) and when(p)

    say = message if callable(message) else (lambda p: message)
    return Rule(field, broken, say, case)


def check_rules(params: Any) -> None:
    """Refuse ``params`` if a condition its class states (``RULES``) is broken."""
    for rule in getattr(type(params), "RULES", ()):
        if rule.broken(params):
            raise ParamsError(rule.message(params), rule.field)


def _path(doc: str, **bounds: Any) -> Arg:
    return Arg(doc, path=True, **bounds)


def _file(what: str = "the file") -> Arg:
    return _path(f"Absolute path of {what} (or relative to the first workspace folder).")


_NAME = "a non-empty name of at most 256 characters"
#: The session a call runs in: what it has read, and so may change.
_OWN_SESSION = Arg("{own_session}", min_length=1, max_length=256, what=_NAME)
_FILTER_SESSION = Arg(
    "Only this session's changes (default: every session's).",
    min_length=1,
    max_length=256,
    what=_NAME,
)
_DRY_RUN = Arg("Run every check and return the diff without changing the file.")
_INCLUDE_DIFF = Arg(
    "Return the whole diff even when it is long (by default a long diff is left out and "
    "the result says which lines changed)."
)
_EXPECTED = Arg(
    "How many places old_string must match; the edit is refused (count_mismatch) unless "
    "exactly this many do. Above 1, all of them are replaced.",
    minimum=1,
    what="a positive number of replacements",
)
_REPLACE_ALL = Arg("Replace every occurrence of old_string.")
_OLD = Arg(
    "The exact text to replace, as the file holds it (indentation included, without the "
    "line-number prefixes of the read output). It must occur exactly once unless "
    "replace_all is true."
)
_CHANGE_ID = Arg(
    "The change's id (from {changes} or {history}), or its first 6 characters or more.",
    min_length=1,
    max_length=64,
    what="a change id as changes or history lists it",
)
_LIMIT = "a positive line count"
#: Page lists: "3", "1-5", "7-" or a comma list of those, each number of at most 9
#: digits (a page, not a parser's load).
_PAGES = r"^\s*\d{1,9}\s*(?:-\s*\d{0,9}\s*)?(?:,\s*\d{1,9}\s*(?:-\s*\d{0,9}\s*)?)*$"


@dataclass(frozen=True, slots=True)
class ReadParams:
    #: The file to read (required unless ``file_paths`` is given).
    file_path: Annotated[str | None, _file("the file to read")] = None
    offset: Annotated[
        int | None,
        Arg(
            "The first line to read, 1-based (0 counts as 1); in a notebook, the first cell. "
            "Give it only for a file too large to read at once.",
            minimum=0,
            what="a line number (1 is the first line; 0 counts as 1)",
        ),
    ] = None
    limit: Annotated[
        int | None,
        Arg(
            "How many lines to read (in a notebook: cells). Give it only for a file too "
            "large to read at once.",
            minimum=1,
            what=_LIMIT,
        ),
    ] = None
    session: Annotated[str, _OWN_SESSION] = DEFAULT_SESSION
    #: PDF pages to read: "3", "1-5", "7-" or a comma list of those.
    pages: Annotated[
        str | None,
        Arg(
            'PDFs only: the pages to read, such as "3", "1-5", "7-" or "1,4-6". Needed for '
            "a PDF of more than 20 pages.",
            pattern=_PAGES,
            what='page numbers such as "3", "1-5", "7-" or "1,4-6" (each of at most 9 digits)',
        ),
    ] = None
    #: Notebooks: deliver image outputs (base64, downscaled) instead of summarizing them.
    include_images: Annotated[bool, Arg("Notebooks only: {notebook_images}.")] = False
    #: Several files to read in one call, each as ``file_path`` would be.
    file_paths: Annotated[
        list[str] | None,
        _path(
            "The files to read, absolute or relative to the first workspace folder, each as "
            "file_path would be.",
            min_items=1,
            max_items=MAX_READ_FILES,
            what=f"a list of 1 to {MAX_READ_FILES} paths (read more in further calls)",
        ),
    ] = None

    RULES: ClassVar[tuple[Rule, ...]] = (
        needs(
            "file_path",
            lambda p: p.file_paths is None,
            "Missing required parameter: `file_path` must be a string (the file to read), "
            "or `file_paths` a list of paths (to read several files at once).",
            case="unless file_paths is given",
        ),
        Rule(
            "file_paths",
            lambda p: p.file_paths is not None and p.file_path is not None,
            lambda p: "Pass `file_path` (one file) or `file_paths` (several), not both.",
            case="not with file_path",
        ),
    )

    def __post_init__(self) -> None:
        check_rules(self)


#: Kinds of entries ``list`` answers: ``type`` names one of these.
LIST_TYPES = ("files", "folders", "all")
LIST_SORTS = ("name", "modified")
SEARCH_MODES = ("files", "content", "count")
#: The most entries, files or lines one ``list`` or ``search`` answers.
MAX_LIST_LIMIT = 5000


def _one_of(values: tuple[str, ...]) -> str:
    return "one of " + ", ".join(f'"{v}"' for v in values)


_PATTERN = "a non-empty pattern of at most 10,000 characters"
_CONTEXT = "a number of lines from 0 to 100"
_INCLUDE_IGNORED = Arg("Also what .gitignore, .ignore and git's global excludes leave out.")


def _tree_path(what: str) -> Arg:
    return _path(
        f"{what}, absolute or relative to the first workspace folder. Leave it out for every "
        "workspace root."
    )


def _limit(what: str) -> Arg:
    return Arg(
        f"The most {what} to answer (default 200, at most {MAX_LIST_LIMIT:,}).",
        minimum=1,
        what=_LIMIT,
    )


@dataclass(frozen=True, slots=True)
class ListParams:
    #: The folder to list (or one file); default: every workspace root.
    path: Annotated[str | None, _tree_path("The folder to list (or one file)")] = None
    #: A glob the listed paths must match (relative to ``path``): ``**/*.py``.
    pattern: Annotated[
        str | None,
        Arg(
            "A glob the paths must match, relative to path: `**/*.py`, `src/**/*.{{ts,tsx}}`; "
            "one without `/` matches names at any depth.",
            min_length=1,
            max_length=10_000,
            what=_PATTERN,
        ),
    ] = None
    #: How deep to go (1: the folder's own entries); default: all the way down.
    depth: Annotated[
        int | None,
        Arg(
            "How many folder levels to go down (1: the folder's own entries; default: all).",
            minimum=1,
            what="a positive depth (1: the folder's own entries)",
        ),
    ] = None
    #: "files", "folders" or "all" (default: "files" with a pattern, else "all").
    type: Annotated[
        str | None,
        Arg(
            "Which entries: files, folders or all (default: files with a pattern, else all).",
            values=LIST_TYPES,
            what=_one_of(LIST_TYPES),
        ),
    ] = None
    #: "name" (tree order) or "modified" (newest first).
    sort: Annotated[
        str,
        Arg(
            "name (tree order, the default) or modified (newest first).",
            values=LIST_SORTS,
            what=_one_of(LIST_SORTS),
        ),
    ] = "name"
    limit: Annotated[int | None, _limit("entries")] = None
    #: Each file's size in bytes (and when it last changed).
    sizes: Annotated[bool, Arg("Give each file's size in bytes and when it last changed.")] = False
    #: Each text file's number of lines.
    line_counts: Annotated[bool, Arg("Give each text file's number of lines.")] = False
    #: List what ``.gitignore``, ``.ignore`` and the global excludes leave out as well.
    include_ignored: Annotated[bool, _INCLUDE_IGNORED] = False
    session: Annotated[str, _OWN_SESSION] = DEFAULT_SESSION

    ALIASES: ClassVar[dict[str, str]] = {"file_path": "path", "glob": "pattern"}


@dataclass(frozen=True, slots=True)
class SearchParams:
    #: A regular expression (Python's syntax), or the text itself with ``literal``.
    pattern: Annotated[
        str,
        Arg(
            "The regular expression (Python's syntax), or the text itself with literal.",
            min_length=1,
            max_length=10_000,
            what=_PATTERN,
        ),
    ]
    #: The folder (or file) to search; default: every workspace root.
    path: Annotated[str | None, _tree_path("The folder (or one file) to search")] = None
    #: Only files whose path matches this glob (``*.py``, ``src/**/*.ts``, ``!*.min.js``).
    glob: Annotated[
        str | None,
        Arg(
            "Only files whose path matches this glob: `*.py`, `src/**/*.ts`; `!*.min.js` "
            "leaves files out.",
            min_length=1,
            max_length=4096,
            what="a non-empty glob such as *.py or src/**/*.ts",
        ),
    ] = None
    #: Only files of this type: ``py``, ``js``, ``ts``, ``go``, ``rust``...
    type: Annotated[
        str | None,
        Arg("Only files of this type: py, js, ts, go, rust, java, c, cpp, md, json, yaml, sh..."),
    ] = None
    literal: Annotated[
        bool, Arg("Search for the pattern as plain text, not a regular expression.")
    ] = False
    case_insensitive: Annotated[bool, Arg("Ignore case.")] = False
    #: Let a match span lines (``.`` does not match a line break either way).
    multiline: Annotated[bool, Arg("Let a match span lines (`.` still matches no line break).")] = (
        False
    )
    #: "files" (the files that match), "content" (the matching lines) or "count".
    output_mode: Annotated[
        str,
        Arg(
            "files (the default: the paths of the files that match), content (the matching "
            "lines) or count (matching lines per file).",
            values=(*SEARCH_MODES, "files_with_matches"),
            what=_one_of(SEARCH_MODES),
        ),
    ] = "files"
    #: Lines of context around each match (``before`` and ``after`` at once).
    context: Annotated[
        int | None,
        Arg(
            "Lines of context before and after each match (content).",
            minimum=0,
            maximum=100,
            what=_CONTEXT,
        ),
    ] = None
    before: Annotated[
        int | None,
        Arg("Lines of context before each match (content).", minimum=0, maximum=100, what=_CONTEXT),
    ] = None
    after: Annotated[
        int | None,
        Arg("Lines of context after each match (content).", minimum=0, maximum=100, what=_CONTEXT),
    ] = None
    limit: Annotated[int | None, _limit("files or lines")] = None
    include_ignored: Annotated[bool, _INCLUDE_IGNORED] = False
    session: Annotated[str, _OWN_SESSION] = DEFAULT_SESSION

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


@dataclass(frozen=True, slots=True)
class InfoParams:
    file_path: Annotated[
        str,
        _path(
            "Absolute path of the file or folder (a path relative to the first workspace "
            "folder also works)."
        ),
    ]

    ALIASES: ClassVar[dict[str, str]] = {"path": "file_path"}


@dataclass(frozen=True, slots=True)
class CreateDirectoryParams:
    path: Annotated[
        str, _path("The folder to create, absolute or relative to the first workspace folder.")
    ]
    session: Annotated[str, _OWN_SESSION] = DEFAULT_SESSION

    ALIASES: ClassVar[dict[str, str]] = {"file_path": "path"}


@dataclass(frozen=True, slots=True)
class NotebookEditParams:
    file_path: Annotated[str, _path("Absolute path of the notebook (.ipynb).")]
    #: The cell to replace or delete, or to insert after (insert without it: at the top).
    cell_id: Annotated[
        str | None,
        Arg(
            "Id of the cell to replace or delete, or to insert after (without it, insert "
            "puts the cell at the top), as {read} shows it.",
            min_length=1,
            max_length=256,
            what="a cell id as read shows it (at most 256 characters)",
        ),
    ] = None
    new_source: Annotated[str, Arg("The cell's new source (replace, insert).")] = ""
    edit_mode: Annotated[
        str,
        Arg(
            "replace (the default), insert or delete.",
            values=("replace", "insert", "delete"),
            what='"replace", "insert" or "delete"',
        ),
    ] = "replace"
    #: "code", "markdown" or "raw": required for inserts, changes the type on replace.
    cell_type: Annotated[
        str | None,
        Arg(
            "The cell's type: required to insert; on replace it changes the cell's type.",
            values=("code", "markdown", "raw"),
            what='"code", "markdown" or "raw"',
        ),
    ] = None
    session: Annotated[str, _OWN_SESSION] = DEFAULT_SESSION
    #: The whole diff in the result even when it is long (by default a long diff is
    #: left out and the result says which lines changed).
    include_diff: Annotated[bool, _INCLUDE_DIFF] = False

    #: ``notebook_path`` is the name models know from other notebook tools.
    ALIASES: ClassVar[dict[str, str]] = {"notebook_path": "file_path"}
    RULES: ClassVar[tuple[Rule, ...]] = (
        needs(
            "cell_type",
            lambda p: p.edit_mode == "insert",
            'An insert needs `cell_type` ("code", "markdown" or "raw").',
            case="to insert",
        ),
        needs(
            "cell_id",
            lambda p: p.edit_mode != "insert",
            lambda p: f"A {p.edit_mode} needs `cell_id` (the cell's id as read shows it).",
            empty_counts=True,
            case="to replace or delete",
        ),
    )

    def __post_init__(self) -> None:
        check_rules(self)


@dataclass(frozen=True, slots=True)
class EditParams:
    file_path: Annotated[
        str,
        _file("the file to change"),
    ]
    old_string: Annotated[str, _OLD]
    new_string: Annotated[
        str, Arg("The text to put in its place (it must differ from old_string).")
    ]
    replace_all: Annotated[bool, _REPLACE_ALL] = False
    session: Annotated[str, _OWN_SESSION] = DEFAULT_SESSION
    expected_replacements: Annotated[int | None, _EXPECTED] = None
    dry_run: Annotated[bool, _DRY_RUN] = False
    #: The whole diff in the result even when it is long (by default a long diff is
    #: left out and the result says which lines changed).
    include_diff: Annotated[bool, _INCLUDE_DIFF] = False


@dataclass(frozen=True, slots=True)
class EditItem:
    """One edit of ``steadyhand.multiEdit``."""

    old_string: Annotated[str, _OLD]
    new_string: Annotated[str, Arg("The text to put in its place.")]
    replace_all: Annotated[bool, _REPLACE_ALL] = False
    expected_replacements: Annotated[int | None, _EXPECTED] = None


@dataclass(frozen=True, slots=True)
class MultiEditParams:
    file_path: Annotated[
        str,
        _file("the file to change"),
    ]
    edits: Annotated[
        list[EditItem],
        Arg(
            "The replacements, applied in order, each to the text the earlier ones left.",
            min_items=1,
            what="a non-empty list of {old_string, new_string} objects",
        ),
    ]
    session: Annotated[str, _OWN_SESSION] = DEFAULT_SESSION
    dry_run: Annotated[bool, _DRY_RUN] = False
    #: The whole diff in the result even when it is long (by default a long diff is
    #: left out and the result says which lines changed).
    include_diff: Annotated[bool, _INCLUDE_DIFF] = False


@dataclass(frozen=True, slots=True)
class WriteParams:
    file_path: Annotated[
        str,
        _file("the file to create or overwrite"),
    ]
    content: Annotated[str, Arg("The complete new content of the file, written exactly as given.")]
    session: Annotated[str, _OWN_SESSION] = DEFAULT_SESSION
    dry_run: Annotated[
        bool, Arg("Run every check and report what would change without writing.")
    ] = False
    #: The whole diff in the result even when it is long (by default a long diff is
    #: left out and the result says which lines changed).
    include_diff: Annotated[bool, _INCLUDE_DIFF] = False


@dataclass(frozen=True, slots=True)
class ForkParams:
    session: Annotated[
        str,
        Arg(
            "The new session's name (not in use yet).",
            min_length=1,
            max_length=256,
            what=_NAME,
        ),
    ]
    parent: Annotated[
        str,
        Arg(
            'The session whose records the new one starts with (default "default").',
            min_length=1,
            max_length=256,
            what=_NAME,
        ),
    ] = DEFAULT_SESSION
    #: The new session may read but every change it asks for is refused (``read_only``).
    read_only: Annotated[
        bool,
        Arg("The new session may read, and every change it asks for is refused with read_only."),
    ] = False

    #: Other spellings accepted for a parameter (the snake_case name is canonical).
    ALIASES: ClassVar[dict[str, str]] = {"readOnly": "read_only"}


@dataclass(frozen=True, slots=True)
class CloseParams:
    session: Annotated[
        str,
        Arg(
            "The session to close: its records are dropped.",
            min_length=1,
            max_length=256,
            what=_NAME,
        ),
    ]


@dataclass(frozen=True, slots=True)
class PingParams:
    pass


@dataclass(frozen=True, slots=True)
class HistoryParams:
    file_path: Annotated[str, _file()]
    #: Only this session's changes (default: every session's).
    session: Annotated[str | None, _FILTER_SESSION] = None
    #: The newest this many versions.
    limit: Annotated[
        int | None,
        Arg(
            "The newest this many versions (default 20; at most 100 are listed).",
            minimum=1,
            what=_LIMIT,
        ),
    ] = None


@dataclass(frozen=True, slots=True)
class UndoParams:
    #: Undo the last change to this file (needed unless ``id`` is given).
    file_path: Annotated[
        str | None,
        _path(
            "The file whose last change to undo (needed unless id is given; with id, it "
            "must be that change's file)."
        ),
    ] = None
    #: Undo this session's last change to the file (default: the last change by anyone).
    #: With ``id``: the session the undo is made as (default: the change's own).
    session: Annotated[
        str | None,
        Arg(
            "Undo only this session's last change (default: the last change by anyone); "
            "with id, the session the undo is made as (default: the change's own).",
            min_length=1,
            max_length=256,
            what=_NAME,
        ),
    ] = None
    #: Restore even though the file changed since Steadyhand wrote it.
    force: Annotated[
        bool,
        Arg(
            "Restore even though the file changed since Steadyhand wrote it (that newer "
            "content is kept in history too)."
        ),
    ] = False
    #: The whole diff in the result even when it is long (by default a long diff is
    #: left out and the result says which lines changed).
    include_diff: Annotated[bool, _INCLUDE_DIFF] = False
    #: Take back this one change (an id from ``changes`` or ``history``, or its first 6
    #: characters or more).
    id: Annotated[
        str | None,
        Arg(
            "Take back this one change, even an earlier one: an id from {changes} or "
            "{history}, or its first 6 characters or more.",
            min_length=1,
            max_length=64,
            what="a change id as changes or history lists it",
        ),
    ] = None

    RULES: ClassVar[tuple[Rule, ...]] = (
        needs(
            "file_path",
            lambda p: p.id is None,
            "`file_path` must be given (a string: the file whose last change to undo), "
            "or `id` (one change to take back, as changes lists it).",
            case="unless id is given",
        ),
    )

    def __post_init__(self) -> None:
        check_rules(self)


@dataclass(frozen=True, slots=True)
class ChangesParams:
    #: Only this session's changes (default: every session's).
    session: Annotated[str | None, _FILTER_SESSION] = None
    #: Only changes to this file, or to files in this folder.
    path: Annotated[
        str | None, _path("Only changes to this file, or to the files in this folder.")
    ] = None
    #: Only changes made after this checkpoint (an id, or a label).
    since: Annotated[
        str | None,
        Arg(
            "Only changes made after this checkpoint (its id or label).",
            min_length=1,
            max_length=256,
            what="a checkpoint id or label (at most 256 characters)",
        ),
    ] = None
    #: The newest this many changes (default 50).
    limit: Annotated[
        int | None,
        Arg(
            "The newest this many changes (default 50; at most 100 are listed).",
            minimum=1,
            what=_LIMIT,
        ),
    ] = None

    ALIASES: ClassVar[dict[str, str]] = {"file_path": "path"}


@dataclass(frozen=True, slots=True)
class ChangeParams:
    #: The change's id (from ``changes`` or ``history``), or its first 6 characters or more.
    id: Annotated[str, _CHANGE_ID]
    #: The file the change was made to: tells apart changes an id names more than one of.
    file_path: Annotated[
        str | None,
        _path(
            "The file the change was made to: tells apart changes one id names more than one of."
        ),
    ] = None


@dataclass(frozen=True, slots=True)
class CheckpointParams:
    session: Annotated[str, _OWN_SESSION] = DEFAULT_SESSION
    label: Annotated[
        str | None,
        Arg(
            "A name for the checkpoint, to rewind to it by.",
            max_length=256,
            what="a label of at most 256 characters",
        ),
    ] = None


@dataclass(frozen=True, slots=True)
class RewindParams:
    #: A checkpoint id (``cp-…``) or label of this session.
    checkpoint: Annotated[
        str,
        Arg(
            "The checkpoint's id (cp-…) or label.",
            min_length=1,
            max_length=256,
            what=_NAME,
        ),
    ]
    session: Annotated[str, _OWN_SESSION] = DEFAULT_SESSION
    #: The whole diff in the result even when it is long (by default a long diff is
    #: left out and the result says which lines changed).
    include_diff: Annotated[bool, _INCLUDE_DIFF] = False


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
    #: The bound on its value (None: any value of its type).
    rule: Arg | None


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


def _bound(arg: Arg | None) -> Arg | None:
    return arg if arg is not None and arg.bounded else None


@functools.cache
def _args(cls: Hashable) -> dict[str, Arg]:
    hints = get_type_hints(cls, include_extras=True)
    out: dict[str, Arg] = {}
    for f in dataclasses.fields(cls):  # type: ignore[arg-type]
        for meta in getattr(hints[f.name], "__metadata__", ()):
            if isinstance(meta, Arg):
                out[f.name] = meta
    return out


def arg_of(cls: Any, name: str) -> Arg | None:
    """The :class:`Arg` a parameter of ``cls`` is annotated with (None: not annotated)."""
    return _args(cast(Hashable, cls)).get(name)


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
            _bound(arg_of(cls, f.name)),
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
        if f.rule is not None and value is not None and not f.rule.holds(value):
            raise ParamsError(f"`{f.name}` must be {f.rule.what}.", f.name)
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
    "Arg",
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
    "Rule",
    "SearchParams",
    "UndoParams",
    "WriteParams",
    "arg_of",
    "check_rules",
    "field",
    "needs",
    "parse_arguments",
    "structure",
    "suggest",
]

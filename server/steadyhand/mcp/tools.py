"""The MCP tools: their names, schemas, descriptions and hints, and how one call runs.

Every tool is one of Steadyhand's commands (``tools/table.py``) under the name MCP hosts
know, with the same snake_case arguments; :func:`call_tool` runs it through the one
command table and shapes its result as an MCP ``CallToolResult``: ``content`` is the
result's ``message`` (images as image content), ``structuredContent`` the result object,
``isError`` set on every refusal. The same function serves ``steadyhand mcp`` standalone
and the socket of a running ``steadyhand serve`` (``rendezvous.py``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from steadyhand.context import ToolContext
from steadyhand.paths.resolve import Roots, expand
from steadyhand.protocol import commands as names
from steadyhand.protocol.errors import ErrorCode, ToolError
from steadyhand.protocol.params import ParamsError
from steadyhand.tools.table import COMMANDS, parse, run

#: Error codes only the MCP face gives: arguments that do not fit, and (attached) an
#: editor's server that is gone.
INVALID_PARAMS = "invalid_params"
NOT_ATTACHED = "not_attached"


@dataclass(frozen=True, slots=True)
class McpTool:
    name: str
    command: str
    title: str
    description: str
    properties: dict[str, Any]
    required: tuple[str, ...]
    #: readOnlyHint, destructiveHint, idempotentHint (openWorldHint is always false).
    hints: tuple[bool, bool, bool]
    #: Result fields beyond ``ok``/``message``/``error``/``path`` (for ``outputSchema``).
    output: dict[str, Any]
    #: Whether a missing ``session`` means the connection's own session (else: any).
    own_session: bool = True


_STR = {"type": "string"}
_INT = {"type": "integer"}
_BOOL = {"type": "boolean"}


def _p(schema: dict[str, Any], description: str, **extra: Any) -> dict[str, Any]:
    return {**schema, "description": description, **extra}


_FILE = _p(_STR, "Absolute path of the file (a path relative to the workspace root also works).")
_SESSION = _p(
    _STR,
    "Optional. Leave it out: each connection has its own session, which remembers what you "
    "read. A host that runs sub-agents may give each one a name here, so that each keeps "
    "its own view of the files.",
    minLength=1,
    maxLength=200,
)
_DRY_RUN = _p(_BOOL, "Run every check and return the diff without changing the file.")

_EDIT_ERRORS = (
    "Errors and what to do: not_read (read the file first), stale (the file changed since "
    "you read it, perhaps the user typed in it: when the refusal shows a diff, your view is "
    "already refreshed, so rebuild the edit from it without reading again; otherwise read "
    "again), partial_view (read the lines the message names first), no_match (copy the text "
    "exactly from the read output; the message shows the closest text), ambiguous (add "
    "surrounding lines or set replace_all), count_mismatch, no_change, edit_rejected (the "
    "editor refused because the user was typing: read again), wrong_tool (use the tool the "
    "message names), protected, secret_detected, syntax_error (the change would leave a "
    "syntax error where the message says: correct the new text), read_only, "
    "outside_workspace and denied (do not retry), io_error. A change that leaves a syntax "
    "error is made, and the result names it (syntax_errors): fix it with another edit."
)

_TOOLS: tuple[McpTool, ...] = (
    McpTool(
        "read_file",
        names.READ,
        "Read file",
        "Reads a file and returns its lines numbered like `cat -n` (line number, a tab, the "
        "line). Read a file before you edit or overwrite it: the edit tools refuse files "
        "you have not read in this conversation, and edits only to lines you were shown. "
        "Without offset and limit it returns up to 2000 lines; for a larger file, page "
        "with offset (first line, 1-based) and limit (number of lines). A whole read of a "
        "very large file is refused with an outline of it, so you can choose the lines to "
        "read. Reading the same lines again while the file is unchanged answers "
        "`file_unchanged` without repeating them. Also reads Jupyter notebooks (cells with "
        "their ids and outputs), images (returned as images) and PDFs (pages). If the file "
        "is open in the user's editor, you see the editor's text, unsaved changes included. "
        "Never copy the line-number prefix into an edit.",
        {
            "file_path": _FILE,
            "offset": _p(_INT, "First line to read, 1-based.", minimum=0),
            "limit": _p(_INT, "Number of lines to read.", minimum=1),
            "pages": _p(_STR, 'PDFs only: pages such as "3", "1-5", "7-" or "1,4-6".'),
            "include_images": _p(_BOOL, "Notebooks only: return image outputs as images."),
            "session": _SESSION,
        },
        ("file_path",),
        (True, False, True),
        {
            "type": _STR,
            "start_line": _INT,
            "num_lines": _INT,
            "total_lines": _INT,
            "source": _STR,
        },
    ),
    McpTool(
        "edit_file",
        names.EDIT,
        "Edit file",
        "Replaces exact text in a file you have read. Rules: read the file first with "
        "read_file, and the text you replace must lie in lines you were shown; old_string "
        "must match the file exactly (indentation included, without the line-number "
        "prefix) and occur exactly once: add surrounding lines to make it unique, or set "
        "replace_all to change every occurrence. new_string must differ. Small slips such "
        "as curly quotes or trailing spaces are forgiven when only one place can be meant. "
        "After a successful edit you may edit the same file again without reading it. To "
        "create a file use write_file; for several changes to one file use multi_edit. If "
        "the file is open in the user's editor, the edit lands in the editor as one undo "
        "step. " + _EDIT_ERRORS,
        {
            "file_path": _FILE,
            "old_string": _p(_STR, "The exact text to replace (no line-number prefixes)."),
            "new_string": _p(_STR, "The text to put in its place."),
            "replace_all": _p(_BOOL, "Replace every occurrence of old_string."),
            "expected_replacements": _p(
                _INT,
                "Refuse unless exactly this many places match (all of them are replaced).",
                minimum=1,
            ),
            "dry_run": _DRY_RUN,
            "session": _SESSION,
        },
        ("file_path", "old_string", "new_string"),
        (False, True, False),
        {
            "replacements": _INT,
            "diff": _STR,
            "added": _INT,
            "removed": _INT,
            "via": _STR,
            "on_disk": _BOOL,
        },
    ),
    McpTool(
        "multi_edit",
        names.MULTI_EDIT,
        "Edit file in several places",
        "Makes several exact replacements in one file you have read, in order, all or "
        "nothing (one undo step in the editor). Each edit follows the rules of edit_file and "
        "applies to the text the earlier ones left; if one fails, none is applied and the "
        "message says which (`edits[K]`). On a missing file, a first edit with an empty "
        "old_string creates it. " + _EDIT_ERRORS,
        {
            "file_path": _FILE,
            "edits": {
                "type": "array",
                "minItems": 1,
                "description": "The replacements, applied in order.",
                "items": {
                    "type": "object",
                    "properties": {
                        "old_string": _p(_STR, "The exact text to replace."),
                        "new_string": _p(_STR, "The text to put in its place."),
                        "replace_all": _p(_BOOL, "Replace every occurrence of old_string."),
                        "expected_replacements": _p(
                            _INT, "Refuse unless exactly this many places match.", minimum=1
                        ),
                    },
                    "required": ["old_string", "new_string"],
                    "additionalProperties": False,
                },
            },
            "dry_run": _DRY_RUN,
            "session": _SESSION,
        },
        ("file_path", "edits"),
        (False, True, False),
        {"replacements": _INT, "diff": _STR, "via": _STR, "on_disk": _BOOL},
    ),
    McpTool(
        "write_file",
        names.WRITE,
        "Write file",
        "Writes a whole file: creates it (with missing parent folders) or replaces its "
        "entire content. To change part of an existing file use edit_file, which is "
        "cheaper and safer. Replacing an existing file needs a full read of it first "
        "(not_read, partial_view) and refuses if it changed since (stale: read it again). "
        "The content is written exactly as given; the file keeps its encoding. The result "
        "says how many lines were added and removed. Errors: not_read, partial_view, stale, "
        "is_directory, too_large, protected, secret_detected, syntax_error, read_only, "
        "edit_rejected, outside_workspace and denied (do not retry), io_error.",
        {
            "file_path": _FILE,
            "content": _p(_STR, "The complete new content of the file."),
            "dry_run": _DRY_RUN,
            "session": _SESSION,
        },
        ("file_path", "content"),
        (False, True, True),
        {"type": _STR, "added": _INT, "removed": _INT, "via": _STR, "on_disk": _BOOL},
    ),
    McpTool(
        "notebook_edit",
        names.NOTEBOOK_EDIT,
        "Edit notebook cell",
        "Replaces, inserts or deletes one cell of a Jupyter notebook (.ipynb) you have "
        "read; edit_file does not work on notebooks. read_file shows each cell's id. "
        "edit_mode replace (default) needs cell_id and new_source (cell_type changes the "
        "cell's type); insert needs cell_type and new_source and puts the cell after cell_id "
        "(at the top without it); delete needs cell_id. Replacing a code cell clears its "
        "outputs; the rest of the file is kept byte for byte. Errors: not_read, stale (read "
        "again), partial_view, no_match (use a cell id exactly as read shows it), no_change, "
        "unreadable (broken JSON: repair it with edit_file), wrong_tool, protected, "
        "read_only, outside_workspace, denied, io_error.",
        {
            "file_path": _p(_STR, "Absolute path of the notebook (.ipynb)."),
            "cell_id": _p(_STR, "Id of the cell to replace or delete, or to insert after."),
            "new_source": _p(_STR, "The cell's new source (replace, insert)."),
            "edit_mode": _p(
                _STR, "replace (default), insert or delete.", enum=["replace", "insert", "delete"]
            ),
            "cell_type": _p(
                _STR,
                "code, markdown or raw: required to insert; changes the type on replace.",
                enum=["code", "markdown", "raw"],
            ),
            "session": _SESSION,
        },
        ("file_path",),
        (False, True, False),
        {"via": _STR, "on_disk": _BOOL},
    ),
    McpTool(
        "history",
        names.HISTORY,
        "File history",
        "Lists the versions of a file that Steadyhand replaced (newest first): when, by "
        "which session and tool, lines added and removed, and whether each can still be "
        "restored. Use it before undo to see what an undo would take back.",
        {
            "file_path": _FILE,
            "session": _p(_STR, "Only this session's changes (default: everyone's).", minLength=1),
            "limit": _p(_INT, "The newest this many versions (default 20).", minimum=1),
        },
        ("file_path",),
        (True, False, True),
        {"versions": {"type": "array"}},
        own_session=False,
    ),
    McpTool(
        "undo",
        names.UNDO,
        "Undo the last change to a file",
        "Takes back the last change Steadyhand made to a file: restores the content from "
        "before it, or deletes the file if that change created it. Without session it "
        "undoes the last change by anyone; give session to undo only that session's. The "
        "file must still be what that change left, else stale (nothing is changed) unless "
        "force is true, which overwrites newer work (that work is kept in history too). "
        "Undoing again redoes.",
        {
            "file_path": _FILE,
            "session": _p(
                _STR, "Undo this session's last change (default: anyone's).", minLength=1
            ),
            "force": _p(_BOOL, "Restore even though the file changed since."),
        },
        ("file_path",),
        (False, True, False),
        {"type": _STR, "undone": _STR},
        own_session=False,
    ),
    McpTool(
        "checkpoint",
        names.CHECKPOINT,
        "Mark a checkpoint",
        "Marks a point in this session's work, to go back to later with rewind (before a "
        "risky series of changes, say). Answers the checkpoint's id; a label makes it easy "
        "to name.",
        {
            "label": _p(_STR, "A name for the checkpoint.", maxLength=256),
            "session": _SESSION,
        },
        (),
        (False, False, False),
        {"checkpoint": _STR},
    ),
    McpTool(
        "rewind",
        names.REWIND,
        "Rewind to a checkpoint",
        "Restores every file this session changed since a checkpoint, as one operation "
        "(files it created are deleted). Files someone else changed since are skipped and "
        "listed, never overwritten. Read files again before editing them afterwards.",
        {
            "checkpoint": _p(_STR, "The checkpoint's id (cp-…) or label.", minLength=1),
            "session": _SESSION,
        },
        ("checkpoint",),
        (False, True, False),
        {"restored": {"type": "array"}, "skipped": {"type": "array"}},
    ),
)

_ARRAY = {"type": "array"}
_PATH = _p(
    _STR,
    "A folder (or file) of the workspace, absolute or relative to the first root. Leave it "
    "out for every workspace root.",
)
_LIMIT = _p(_INT, "The most entries (or lines) to answer (default 200, at most 5000).", minimum=1)
_INCLUDE_IGNORED = _p(
    _BOOL, "Also what .gitignore, .ignore and git's global excludes leave out (default false)."
)

#: Tools that look at the workspace beyond one file: listing, searching, describing, and
#: making folders; and reading several files at once.
_TREE_TOOLS: tuple[McpTool, ...] = (
    McpTool(
        "list_files",
        names.LIST,
        "List files and folders",
        "Lists the files and folders of the workspace: a folder's entries, a directory tree, "
        "the files whose path matches a glob, or the most recently changed files. Without "
        "path it lists every workspace root (the `roots` field names them: the folders you "
        "may work in). pattern is a glob: `**/*.py`, `src/**/*.{ts,tsx}`; one without `/` "
        "matches names at any depth. depth limits how deep it goes (1: the folder's own "
        "entries); with depth and no pattern the message is an indented tree, a good "
        "overview at depth 2 or 3. sort `modified` lists the newest first. type: `files`, "
        "`folders` or `all` (default: files with a pattern, else all). sizes adds byte sizes "
        "and modification times, line_counts the lines of each text file. It follows "
        ".gitignore, .ignore and git's global excludes (include_ignored lists those entries "
        "too), never lists denied paths or inside .git, and never follows symbolic links. "
        "Paths are relative to the first workspace root: pass them to read_file as they "
        "are. At most `limit` entries (default 200); the answer says how many more there "
        "are. Errors: not_found (the message suggests close names), invalid_pattern, "
        "outside_workspace and denied (do not retry).",
        {
            "path": _PATH,
            "pattern": _p(_STR, "A glob the paths must match: **/*.py, src/*.md, *.{js,ts}."),
            "depth": _p(_INT, "How many folder levels to go down (1: just the folder).", minimum=1),
            "type": _p(
                _STR, "Which entries: files, folders or all.", enum=["files", "folders", "all"]
            ),
            "sort": _p(
                _STR,
                "name (tree order, default) or modified (newest first).",
                enum=["name", "modified"],
            ),
            "limit": _LIMIT,
            "sizes": _p(_BOOL, "Give each file's size in bytes and when it last changed."),
            "line_counts": _p(_BOOL, "Give each text file's number of lines."),
            "include_ignored": _INCLUDE_IGNORED,
            "session": _SESSION,
        },
        (),
        (True, False, True),
        {
            "entries": _p(
                _ARRAY,
                "The entries: {path, type (file, dir, link, other), size?, lines?, modified?}.",
            ),
            "entries_more": _p(_INT, "Entries found past the limit, not listed."),
            "total": _p(
                _INT, "All the entries that match (only when the whole folder was looked at)."
            ),
            "cut": _p(_STR, "Why entries were left out: limit, bytes, time or entries."),
            "roots": _p(_ARRAY, "The workspace roots (when no path was given)."),
        },
    ),
    McpTool(
        "grep",
        names.SEARCH,
        "Search file contents",
        "Searches the contents of files for a regular expression (Python syntax, run by "
        "ripgrep where it is installed), or for the text as written with literal: true. It "
        "follows .gitignore as ripgrep does and skips binary files and .git. Files open in "
        "the user's editor are searched as the editor holds them, unsaved changes included. "
        "output_mode: `files` (default: the paths of the files that match), `content` (the "
        "matching lines as `path:line:text`; with context, before or after, the lines around "
        "them as `path-line-text` and `--` between groups), or `count` (matching lines per "
        "file). Narrow it with path (a folder or one file), glob (`*.py`, `src/**/*.ts`, "
        "`!*.min.js` to leave files out) or type (py, js, ts, go, rust, java, c, cpp, md, "
        "json, yaml, sh, ...). multiline: true lets a match span lines. At most `limit` "
        "files or lines (default 200); a search runs at most 10 seconds, and the answer says "
        "what was left out. A search is not a read: read a file before you edit it. "
        "Errors: invalid_pattern (fix the regular expression, or pass literal: true), "
        "not_found, outside_workspace and denied (do not retry).",
        {
            "pattern": _p(_STR, "The regular expression (or the text, with literal).", minLength=1),
            "path": _PATH,
            "glob": _p(_STR, "Only files whose path matches: *.py, src/**/*.ts, !*.min.js."),
            "type": _p(_STR, "Only files of this type: py, js, ts, go, rust, java, md, json..."),
            "literal": _p(_BOOL, "Search for the pattern as plain text, not a regular expression."),
            "case_insensitive": _p(_BOOL, "Ignore case."),
            "multiline": _p(_BOOL, "Let a match span several lines."),
            "output_mode": _p(
                _STR,
                "files (default), content or count.",
                enum=["files", "content", "count", "files_with_matches"],
            ),
            "context": _p(
                _INT,
                "Lines of context before and after each match (content).",
                minimum=0,
                maximum=100,
            ),
            "before": _p(
                _INT, "Lines of context before each match (content).", minimum=0, maximum=100
            ),
            "after": _p(
                _INT, "Lines of context after each match (content).", minimum=0, maximum=100
            ),
            "limit": _LIMIT,
            "include_ignored": _INCLUDE_IGNORED,
            "session": _SESSION,
        },
        ("pattern",),
        (True, False, True),
        {
            "files": _p(_ARRAY, "output_mode files: the paths of the files that match."),
            "matches": _p(
                _ARRAY, "output_mode content: the matching lines shown, {path, line, text}."
            ),
            "counts": _p(_ARRAY, "output_mode count: {path, count} per file."),
            "total_files": _p(_INT, "Files that match."),
            "total_matches": _p(_INT, "Matching lines (content and count modes)."),
            "engine": _p(_STR, "What searched the files on disk: ripgrep or python."),
            "truncated": _p(_BOOL, "Whether something was left out (see cut)."),
            "cut": _p(_STR, "Why: limit, bytes, time, results or entries."),
        },
    ),
    McpTool(
        "get_file_info",
        names.INFO,
        "Get file info",
        "Describes a file or folder without reading its content into the conversation. A "
        "file: its kind (text, binary, image, pdf, notebook), size in bytes, number of "
        "lines, encoding, line endings, when it last changed, and whether it is open in the "
        "user's editor and has unsaved changes there (the lines are then counted in the "
        "editor's text). A folder: its number of entries. It does not count as a read: read "
        "the file before editing it. Errors: not_found, outside_workspace and denied (do not "
        "retry).",
        {
            "file_path": _p(
                _STR,
                "Absolute path of the file or folder (relative to the workspace root also works).",
            )
        },
        ("file_path",),
        (True, False, True),
        {
            "type": _p(_STR, "file or dir."),
            "kind": _p(_STR, "text, binary, image, pdf or notebook."),
            "size": _INT,
            "lines": _INT,
            "encoding": _STR,
            "line_ending": _STR,
            "modified": _p(_STR, "When it last changed (UTC, ISO 8601)."),
            "open": _p(_BOOL, "Whether the editor has it open."),
            "unsaved": _p(_BOOL, "Whether the editor's text differs from the disk."),
            "entries": _p(_INT, "A folder's number of entries."),
        },
        own_session=False,
    ),
    McpTool(
        "create_directory",
        names.CREATE_DIRECTORY,
        "Create folder",
        "Creates a folder and any missing folders above it (as `mkdir -p`). A folder that "
        "already exists is fine: nothing changes. write_file creates missing folders by "
        "itself, so this is for a folder meant to stay empty for now. Errors: invalid_path "
        "(a file is in the way: pick another name), protected (such as inside .git), "
        "read_only, outside_workspace and denied (do not retry), io_error.",
        {
            "path": _p(_STR, "The folder to create, absolute or relative to the workspace root."),
            "session": _SESSION,
        },
        ("path",),
        (False, False, True),
        {
            "created": _p(_ARRAY, "The folders made, the outermost first."),
            "existed": _p(_BOOL, "Whether the folder was already there."),
        },
    ),
    McpTool(
        "read_multiple_files",
        names.READ,
        "Read several files",
        "Reads several files in one call (at most 20), each as read_file reads it, so each "
        "counts as read for editing. The message shows each file under a `==> path <==` "
        "line; `files` holds each file's own result, with its own ok and error (a missing "
        "file does not stop the others). offset and limit apply to every file. One answer "
        "holds at most as much text as one read_file: a file that does not fit is not read "
        "and says so; read it with read_file.",
        {
            "file_paths": {
                "type": "array",
                "items": _STR,
                "minItems": 1,
                "maxItems": 20,
                "description": "The files to read, absolute or relative to the workspace root.",
            },
            "offset": _p(_INT, "First line to read in each file, 1-based.", minimum=0),
            "limit": _p(_INT, "Number of lines to read in each file.", minimum=1),
            "session": _SESSION,
        },
        ("file_paths",),
        (True, False, True),
        {
            "files": _p(_ARRAY, "Each file's result: {ok, path, error?, message?, ...}."),
            "images": _p(_ARRAY, "Images read (also given as image content)."),
        },
    ),
)

_TOOLS = _TOOLS + _TREE_TOOLS

TOOLS: dict[str, McpTool] = {t.name: t for t in _TOOLS}

_ERRORS = sorted([str(c) for c in ErrorCode] + [INVALID_PARAMS, NOT_ATTACHED])


def output_schema(tool: McpTool) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {
            "ok": _p(_BOOL, "Whether the call did what was asked."),
            "message": _p(_STR, "What happened, or why not and what to do next."),
            "error": _p(_STR, "Why not, as a stable code (only when ok is false).", enum=_ERRORS),
            "path": _p(_STR, "The file's absolute real path."),
            **tool.output,
        },
        "required": ["ok", "message"],
    }


#: Protocol revisions that know ``outputSchema``/``structuredContent``/``title``, and
#: tool annotations.
_STRUCTURED_SINCE = "2025-06-18"
_ANNOTATIONS_SINCE = "2025-03-26"


def structured_for(protocol: str) -> bool:
    """Whether a connection of this revision takes ``structuredContent`` (and knows the
    ``outputSchema`` it follows)."""
    return protocol >= _STRUCTURED_SINCE


def for_revision(answer: dict[str, Any], protocol: str) -> dict[str, Any]:
    """A ``CallToolResult`` as a connection of this revision knows it: before 2025-06-18
    there is no ``structuredContent``; the text carries the message alone."""
    if structured_for(protocol) or "structuredContent" not in answer:
        return answer
    return {k: v for k, v in answer.items() if k != "structuredContent"}


#: Arguments that name a file.
PATH_ARGUMENTS = ("file_path",)


def absolute_path(value: str, base: str) -> str | None:
    """``value`` made absolute against ``base`` when the path resolver would take it as
    relative to the first root (a plain relative path, or a ``file:`` URI holding one);
    None when it is to be passed on as it is: it needs no root (absolute, ``~``), or the
    resolver refuses it whatever the root (the server says why)."""
    try:
        expand(value, _NO_ROOTS)
    except ToolError:
        pass  # relative (it needs a root), or refused in any case
    else:
        return None
    try:
        return expand(value, Roots((base,)))
    except ToolError:
        return None


_NO_ROOTS = Roots(())


def absolute_paths(params: Any, base: str) -> dict[str, Any] | None:
    """A ``tools/call``'s params with each relative file path made absolute against
    ``base`` (this side's first root), for a server whose own first root may be another;
    None when nothing needs to change."""
    if not isinstance(params, dict):
        return None
    args = params.get("arguments")
    if not isinstance(args, dict):
        return None
    changed = {}
    for key in PATH_ARGUMENTS:
        value = args.get(key)
        if isinstance(value, str):
            joined = absolute_path(value, base)
            if joined is not None:
                changed[key] = joined
    if not changed:
        return None
    return {**params, "arguments": {**args, **changed}}


def listed(protocol: str) -> list[dict[str, Any]]:
    """The ``tools/list`` entries for a connection of this protocol revision."""
    out = []
    for t in _TOOLS:
        entry: dict[str, Any] = {
            "name": t.name,
            "description": t.description,
            "inputSchema": {
                "type": "object",
                "properties": t.properties,
                "required": list(t.required),
                "additionalProperties": False,
            },
        }
        if protocol >= _ANNOTATIONS_SINCE:
            read_only, destructive, idempotent = t.hints
            entry["annotations"] = {
                "title": t.title,
                "readOnlyHint": read_only,
                "destructiveHint": destructive,
                "idempotentHint": idempotent,
                "openWorldHint": False,
            }
        if protocol >= _STRUCTURED_SINCE:
            entry["title"] = t.title
            entry["outputSchema"] = output_schema(t)
        out.append(entry)
    return out


class UnknownTool(Exception):
    """A ``tools/call`` names no tool: a protocol error (-32602), not a tool result."""

    def __init__(self, name: object) -> None:
        known = ", ".join(TOOLS)
        super().__init__(f"Unknown tool: {name!r}. The tools are: {known}.")


def session_name(base: str, given: object) -> object:
    """The session a call runs in: ``base`` (the connection's), or a sub-agent's session
    namespaced under it, so that two connections never share one. A name that is the
    connection's own already (as results show it) is kept."""
    if not isinstance(given, str) or not given:
        return given  # left for the parameter check to refuse
    if given == base or given.startswith(base + "/"):
        return given
    return f"{base}/{given}"


def arguments_for(tool: McpTool, raw: Any, base: str) -> Any:
    """The command's arguments: the tool's, with the session made the connection's."""
    if not isinstance(raw, dict):
        return raw
    if "session" in raw:
        return {**raw, "session": session_name(base, raw["session"])}
    if tool.own_session:
        return {**raw, "session": base}
    return raw


async def call_tool(ctx: ToolContext, params: Any, base_session: str) -> dict[str, Any]:
    """Run one ``tools/call`` (its ``params``) in ``ctx``; the ``CallToolResult``.
    Raises :class:`UnknownTool` when ``params`` names no tool."""
    name = params.get("name") if isinstance(params, dict) else None
    tool = TOOLS.get(name) if isinstance(name, str) else None
    if tool is None:
        raise UnknownTool(name)
    command = COMMANDS[tool.command]
    raw = params.get("arguments")
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        return params_error(tool.name, ParamsError("`arguments` must be one JSON object."))
    try:
        parsed = parse(command, arguments_for(tool, raw, base_session))
    except ParamsError as exc:
        return params_error(tool.name, exc)
    return shaped(await run(ctx, command, parsed))


def params_error(tool: str, exc: ParamsError) -> dict[str, Any]:
    """A tool error for arguments that do not fit: it names the field and the fix."""
    text = f"{exc} Fix the arguments and call {tool} again."
    fields = {"field": exc.field_name} if exc.field_name is not None else {}
    return tool_error(INVALID_PARAMS, text, **fields)


def tool_error(error: str, text: str, **fields: Any) -> dict[str, Any]:
    """The ``CallToolResult`` of a call refused before any command ran: ``error`` its
    code, ``text`` the sentence for the model."""
    return shaped({"ok": False, "error": error, "message": text, **fields})


def shaped(result: dict[str, Any]) -> dict[str, Any]:
    """A command's result as a ``CallToolResult``."""
    content: list[dict[str, Any]] = [{"type": "text", "text": result.get("message", "")}]
    if result.get("type") == "image" and isinstance(result.get("data"), str):
        content.append(
            {"type": "image", "data": result["data"], "mimeType": result.get("media_type")}
        )
        result = {k: v for k, v in result.items() if k != "data"}  # delivered once, above
    images = result.get("images")
    if isinstance(images, list) and images:
        kept = []
        for img in images:
            if isinstance(img, dict) and isinstance(img.get("data"), str):
                content.append(
                    {"type": "image", "data": img["data"], "mimeType": img.get("media_type")}
                )
                img = {k: v for k, v in img.items() if k != "data"}
            kept.append(img)
        result = {**result, "images": kept}
    return {"content": content, "structuredContent": result, "isError": not result.get("ok")}


def with_note(answer: dict[str, Any], note: str) -> dict[str, Any]:
    """``answer`` (a ``CallToolResult``) with ``note`` put before its text."""
    content = list(answer.get("content") or [])
    if content and content[0].get("type") == "text":
        content[0] = {**content[0], "text": f"{note}\n\n{content[0].get('text', '')}"}
    else:
        content.insert(0, {"type": "text", "text": note})
    out = {**answer, "content": content}
    structured = answer.get("structuredContent")
    if isinstance(structured, dict):
        out["structuredContent"] = {
            **structured,
            "message": f"{note}\n\n{structured.get('message', '')}",
        }
    return out

"""Every command Steadyhand answers, described once for every face.

Each entry names the command, its parameter class (``protocol/params.py``: the
parameters' types, defaults, bounds and descriptions), its names on the MCP and VS Code
faces (or why it is not there), its title, the description a model reads, its hints and
its result fields. In a description, ``{read}``, ``{edit}``... stand for another tool's
name on the face being described, and ``{diagnostics}``, ``{image_read}``... for a
sentence only some faces need (``faces.py``); ``{aka}`` says what the server's messages
call a tool whose name differs.
"""

from __future__ import annotations

from typing import Any

from steadyhand.protocol import commands as names
from steadyhand.protocol.params import (
    ChangeParams,
    ChangesParams,
    CheckpointParams,
    CloseParams,
    CreateDirectoryParams,
    EditParams,
    ForkParams,
    HistoryParams,
    InfoParams,
    ListParams,
    MultiEditParams,
    NotebookEditParams,
    PingParams,
    ReadParams,
    RewindParams,
    SearchParams,
    UndoParams,
    WriteParams,
)
from steadyhand.protocol.spec.model import READ_ONLY, Hints, JsonSchema, Tool, VsCodeTool

_S: JsonSchema = {"type": "string"}
_I: JsonSchema = {"type": "integer"}
_B: JsonSchema = {"type": "boolean"}
_A: JsonSchema = {"type": "array"}
_O: JsonSchema = {"type": "object"}
_RANGES: JsonSchema = {
    "type": "array",
    "items": {"type": "array", "items": {"type": "integer"}, "minItems": 2, "maxItems": 2},
}


def _f(schema: JsonSchema, description: str, **extra: Any) -> JsonSchema:
    return {**schema, **extra, "description": description}


def _null(schema: JsonSchema, description: str) -> JsonSchema:
    """A field that may be null."""
    return {"type": [schema["type"], "null"], "description": description}


#: Fields of every result that changed (or would change) a file.
_CHANGE_RESULT: dict[str, JsonSchema] = {
    "diff": _f(_S, "The unified diff of the change (left out when long: see diff_omitted)."),
    "diff_omitted": _f(_B, "The diff was long and left out; changed says where."),
    "diff_cut": _f(_I, "Hunks left out of a diff cut to what fits in one answer."),
    "changed": _f(_RANGES, "With diff_omitted: the changed line ranges, [first, last]."),
    "changed_more": _f(_I, "Changed ranges beyond those listed."),
    "added": _f(_I, "Lines added."),
    "removed": _f(_I, "Lines removed."),
    "via": _f(
        _S, 'How the change reached the file: "disk", "workspaceEdit" (the editor) or "none".'
    ),
    "on_disk": _f(_B, "Whether the disk now holds the new text (false: the message says why)."),
    "dry_run": _f(_B, "A dry run: nothing was changed."),
    "secrets": _f(_A, "Credential-like text the change adds: [{kind, line, excerpt}]."),
    "secrets_more": _f(_I, "Findings beyond those listed."),
    "secrets_unscanned": _f(_O, "What the scan for credentials ran out of time for."),
    "syntax_errors": _f(_A, "Syntax errors the change introduces (fix them with an edit)."),
    "syntax_errors_more": _f(_I, "Syntax errors beyond those listed."),
}

#: Fields of the refusals of a change that the model acts on.
_CHANGE_REFUSAL: dict[str, JsonSchema] = {
    "refreshed": _f(
        _B, "stale: the diff in the refusal moved your view to the current text (no new read)."
    ),
    "lines": _f(
        {"type": ["array", "integer"]},
        "The lines a refusal is about (ambiguous, partial_view, count_mismatch); the line "
        "count of a file the call created.",
    ),
    "unseen": _f(_RANGES, "partial_view: the stretches of lines not shown yet."),
    "matches": _f(_I, "ambiguous, count_mismatch: how many places matched."),
    "closest_lines": _f(_A, "no_match: the lines of the closest text, [first, last]."),
    "differences": _f(_A, "no_match: how the closest text differs, in sentences."),
    "use": _f(_S, "wrong_tool: the command to use instead."),
    "reason": _f(_S, "Why, in a word (edit_rejected, unreadable, too_large)."),
}

_INVALID = {"field": _f(_S, "invalid_params: the parameter that does not fit.")}

_ONE_SHAPE = (
    "read_multiple_files takes several files: each tool's schema then requires what it "
    "needs, as a schema cannot say 'file_path or file_paths' in a form every host accepts"
)
_VSCODE_HAS_ITS_OWN = (
    "agent mode in VS Code has tools of its own that list, search and describe the "
    "workspace and make folders; a second set would cost each request its descriptions"
)

_EDITS_ERRORS = (
    "Errors and what to do: not_read (read the file first), stale (the file changed since "
    "you read it, perhaps the user typed in it: when the refusal shows a diff, your view is "
    "already refreshed, so rebuild the edit from it without reading again; otherwise read "
    "again), partial_view (read the lines the message names first), no_match (copy the "
    "text exactly from the read output; the message shows the closest text), ambiguous (add "
    "surrounding lines or set replace_all), count_mismatch (fix expected_replacements or "
    "the text), no_change (old_string equals new_string), edit_rejected (the editor refused "
    "because the user was typing: read again), wrong_tool (use the tool the message names), "
    "protected (the path may be read but not changed: leave it or ask the user), "
    "secret_detected (keep the credential out of the file), syntax_error (the change would "
    "leave a syntax error where the message says: correct the new text), read_only, "
    "not_found, is_directory, binary, too_large, outside_workspace and denied (do not "
    "retry), invalid_path, io_error, file_in_use (another program holds the file open, "
    "Windows: nothing changed; retry in a moment or ask the user to close it there). A "
    "change that leaves a syntax error is made unless the "
    "user's settings block it, and the result names it (syntax_errors): fix it with "
    "another edit."
)

READ = Tool(
    key="read",
    command=names.READ,
    params=ReadParams,
    title="Read File",
    description=(
        "Reads a file and returns its lines numbered like `cat -n` (line number, a tab, the "
        "line). Always read a file with this tool before you edit or overwrite it: {edit} "
        "and {write} refuse a file you have not read in this conversation (not_read) or "
        "that changed since (stale), and change only lines you were shown. If the file is "
        "open in the user's editor you get the editor's text, unsaved changes included. "
        "Without offset and limit it returns up to 2000 lines; for a larger file, page with "
        "offset (first line, 1-based) and limit (number of lines). A whole read of a very "
        "large file is refused (too_large) with an outline of it, so you can choose the "
        "lines to read. The line-number prefix is not part of the file: never copy it into "
        "old_string. Reading the same lines again while the file is unchanged answers "
        "`file_unchanged` without repeating them: use what you already have. Jupyter "
        "notebooks (.ipynb) are shown cell by cell, with each cell's id and its outputs; "
        "offset and limit then count cells, and cells are changed with {notebook_edit}. A "
        "PDF is returned as the text of its pages; one of more than 20 pages is read in "
        'parts with pages (pages="1-10"). {image_read} Errors: not_found (no such file: '
        "check the path), is_directory, binary, not_regular_file (devices, pipes), too_large "
        "(read a range with offset/limit; the message shows the file's outline), unreadable "
        "(a notebook, image or PDF that cannot be read: tell the user), outside_workspace or "
        "denied (the path is not allowed; do not retry), invalid_path."
    ),
    hints=READ_ONLY,
    result={
        "type": _f(
            _S,
            'What was read: "text", "file_unchanged", "notebook", "image", "pdf", or '
            '"outline" (a too_large refusal).',
        ),
        "start_line": _f(_I, "The first line shown, 1-based."),
        "num_lines": _f(_I, "How many lines were shown."),
        "total_lines": _f(_I, "The file's line count."),
        "truncated_lines": _f(_B, "Some lines were longer than maxLineChars and were cut."),
        "source": _f(_S, '"disk", or "buffer" (the editor\'s text, unsaved changes included).'),
        "encoding": _f(_S, "The file's encoding."),
        "line_ending": _f(_S, '"lf", "crlf", "cr", "mixed" or "none".'),
        "version": _f(_I, "The open document's version."),
        "unsaved": _f(_B, "The open document has unsaved changes."),
        "start_cell": _f(_I, "Notebooks: the first cell shown, 1-based."),
        "num_cells": _f(_I, "Notebooks: how many cells were shown."),
        "total_cells": _f(_I, "Notebooks: the cell count."),
        "cells": _f(
            _A, "Notebooks: the cells shown, {index, id, cell_type, execution_count, num_outputs}."
        ),
        "language": _f(_S, "Notebooks: the kernel's language."),
        "nbformat": _f(_S, "Notebooks: the format version."),
        "images": _f(_A, "Notebooks, with include_images: the image outputs."),
        "pages": _f(_A, "PDFs: the pages read."),
        "num_pages": _f(_I, "PDFs: the page count."),
        "media_type": _f(_S, "Images: the format."),
        "width": _f(_I, "Images: the width sent."),
        "height": _f(_I, "Images: the height sent."),
        "original_width": _f(_I, "Images: the file's width."),
        "original_height": _f(_I, "Images: the file's height."),
        "size": _f(_I, "The file's size in bytes."),
        "outline": _f(_A, "too_large: the lines of top-level definitions or headings."),
        "reason": _f(_S, "Why, in a word (too_large, unreadable)."),
        **_INVALID,
    },
    mcp="read_file",
    vscode=VsCodeTool(
        "steadyhand_read_file",
        "shRead",
        "$(file)",
        ("files", "read", "steadyhand"),
        "Read a file (or a range of its lines, cells or pages) in the workspace; open editors' "
        "unsaved text is what the agent sees.",
    ),
    hide={
        "mcp": {"file_paths": _ONE_SHAPE},
        "vscode": {
            "include_images": (
                "the tool's result is text (the VS Code API the extension is built for has "
                "no data parts in tool results), so an image output would never reach the "
                "model"
            ),
            "file_paths": (
                "a model in agent mode reads several files with several calls, which it "
                "makes at once; one file per call keeps what the user sees of a call about "
                "one file"
            ),
        },
    },
    require={"mcp": ("file_path",), "vscode": ("file_path",)},
)

READ_MANY = Tool(
    key="read_many",
    command=names.READ,
    params=ReadParams,
    title="Read Several Files",
    description=(
        "Reads several files in one call (at most 20), each as {read} reads it, so each "
        "counts as read for editing. The message shows each file under a `==> path <==` "
        "line; `files` holds each file's own result, with its own ok and error (a missing "
        "file does not stop the others). offset and limit apply to every file. One answer "
        "holds at most as much text as one {read}: a file that does not fit is not read and "
        "says so; read it with {read}."
    ),
    hints=READ_ONLY,
    result={
        "files": _f(_A, "Each file's result: {ok, path, error?, message?, ...}."),
        "images": _f(_A, "Images read (also given as image content)."),
        **_INVALID,
    },
    mcp="read_multiple_files",
    lsp=False,
    absent={
        "lsp": "it is steadyhand.read with file_paths: over LSP the command takes both shapes",
        "vscode": (
            "a model in agent mode reads several files with several calls to the read tool, "
            "which it makes at once"
        ),
    },
    hide={
        "mcp": {
            "file_path": "read_file reads one file",
            "pages": "a PDF's pages are read with read_file, one PDF at a time",
            "include_images": "a notebook's images are read with read_file, one at a time",
        }
    },
    require={"mcp": ("file_paths",)},
)

EDIT = Tool(
    key="edit",
    command=names.EDIT,
    params=EditParams,
    title="Edit File",
    description=(
        "Replaces exact text in a file you have read. Prefer this tool over {write} for any "
        "change to an existing file: it sends only the change. Rules: (1) read the file "
        "first with {read}, in this conversation; the text you replace must lie in lines you "
        "were shown. (2) old_string must match the file exactly, indentation included and "
        "without the line-number prefix, and occur exactly once: add surrounding lines to "
        "make it unique, or set replace_all to change every occurrence (to rename a "
        "variable, say). (3) new_string must differ. Small slips such as curly quotes or "
        "trailing spaces are forgiven when only one place can be meant. When you mean more "
        "than one place, set expected_replacements to their number: the edit is refused "
        "unless exactly that many match. dry_run runs every check and shows the diff "
        "without changing the file. After a successful edit you may edit the same file "
        "again without reading it. To create a file use {write}; for several changes to one "
        "file, {multi_edit}; for a Jupyter notebook, {notebook_edit}. If the file is open in "
        "the user's editor, the edit lands there as one undo step, and is saved to disk "
        "only if the user had no unsaved changes.{diagnostics} " + _EDITS_ERRORS
    ),
    hints=Hints(destructive=True),
    result={
        "replacements": _f(_I, "How many places were replaced."),
        "matched": _f(_S, 'How old_string was found: "exact", or the slip forgiven.'),
        **_CHANGE_RESULT,
        "type": _f(_S, '"create" when an empty old_string created the file.'),
        "bytes": _f(_I, "create: the new file's size in bytes."),
        **_CHANGE_REFUSAL,
        "expected": _f(_I, "count_mismatch: the expected_replacements given."),
        **_INVALID,
    },
    mcp="edit_file",
    vscode=VsCodeTool(
        "steadyhand_edit_file",
        "shEdit",
        "$(edit)",
        ("files", "edit", "steadyhand"),
        "Replace an exact string in a file the agent has read; lands in open editors as one "
        "undo step.",
    ),
)

MULTI_EDIT = Tool(
    key="multi_edit",
    command=names.MULTI_EDIT,
    params=MultiEditParams,
    title="Multi-Edit File",
    description=(
        "Makes several exact replacements in one file you have read, all or nothing: use it "
        "instead of several {edit} calls on the same file. The edits apply in order, each "
        "to the text the earlier ones left, with the rules of {edit}: read the file with "
        "{read} first; each old_string must match the file exactly (never copy the "
        "line-number prefix) and exactly once, unless replace_all is true or "
        "expected_replacements gives the number of places; new_string must differ. If one "
        "edit fails, none is applied: the message starts 'Edit K of N (edits[K-1]) failed', "
        "and line numbers in it count in the text as the earlier edits would leave it. On a "
        "missing file, a first edit with an empty old_string creates it. dry_run runs every "
        "check and shows the diff without changing the file. If the file is open in the "
        "user's editor, all edits land there as one undo step.{diagnostics}{aka} Errors are "
        "those of {edit}: not_read, stale (when the refusal shows a diff, rebuild the edits "
        "from it without reading again), partial_view, no_match, ambiguous, count_mismatch, "
        "no_change, edit_rejected, wrong_tool, protected, secret_detected, syntax_error, "
        "read_only, not_found, is_directory, binary, too_large, outside_workspace, denied, "
        "invalid_path, io_error, file_in_use."
    ),
    hints=Hints(destructive=True),
    result={
        "replacements": _f(_I, "How many places were replaced, in all."),
        "matched": _f(_A, "How each edit's old_string was found, in order."),
        "edits": _f(_A, "Each edit's {replacements, matched}."),
        **_CHANGE_RESULT,
        "type": _f(_S, '"create" when the first edit created the file.'),
        "bytes": _f(_I, "create: the new file's size in bytes."),
        **_CHANGE_REFUSAL,
        "edit_index": _f(_I, "The edit that failed (0-based)."),
        **_INVALID,
    },
    mcp="multi_edit",
    vscode=VsCodeTool(
        "steadyhand_multi_edit_file",
        "shMultiEdit",
        "$(edit)",
        ("files", "edit", "steadyhand"),
        "Several exact replacements in one file the agent has read, all or nothing; lands in "
        "open editors as one undo step.",
    ),
)

WRITE = Tool(
    key="write",
    command=names.WRITE,
    params=WriteParams,
    title="Write File",
    description=(
        "Writes a whole file: creates it (missing parent folders too) or replaces its "
        "entire content. To change part of an existing file, use {edit} instead: it is "
        "cheaper and safer. Replacing an existing file needs a full read of it with {read} "
        "first (not_read, partial_view) and refuses if it changed since (stale: read it "
        "again). The content is written exactly as given; the file keeps its encoding. "
        "dry_run runs every check and reports what would change without writing. The result "
        "says how many lines were added and removed.{diagnostics} Errors: not_read, "
        "partial_view, stale, is_directory (the path is a folder), too_large, protected "
        "(leave it or ask the user), secret_detected (keep the credential out of the file), "
        "syntax_error (correct the content where the message says and retry), read_only, "
        "edit_rejected (the editor refused: read again), outside_workspace and denied (do "
        "not retry), invalid_path, io_error, file_in_use (another program holds the file "
        "open: retry in a moment)."
    ),
    hints=Hints(destructive=True, idempotent=True),
    result={
        "type": _f(_S, '"create" or "update".'),
        "lines": _f(_I, "create: the new file's line count."),
        "bytes": _f(_I, "create: the new file's size in bytes."),
        "lines_before": _f(_I, "update: the line count before."),
        "lines_after": _f(_I, "update: the line count after."),
        **_CHANGE_RESULT,
        **{k: v for k, v in _CHANGE_REFUSAL.items() if k != "lines"},
        **_INVALID,
    },
    mcp="write_file",
    vscode=VsCodeTool(
        "steadyhand_write_file",
        "shWrite",
        "$(new-file)",
        ("files", "write", "steadyhand"),
        "Create a file (parent folders included) or overwrite a file the agent has read in full.",
    ),
)

NOTEBOOK_EDIT = Tool(
    key="notebook_edit",
    command=names.NOTEBOOK_EDIT,
    params=NotebookEditParams,
    title="Edit Notebook Cell",
    description=(
        "Changes one cell of a Jupyter notebook (.ipynb) you have read: replaces a cell's "
        "source, inserts a new cell, or deletes one; {edit} does not work on notebooks. "
        "{read} shows each cell's id. edit_mode replace (the default) needs cell_id and "
        "new_source, and cell_type changes the cell's type; insert needs cell_type and "
        "new_source and puts the new cell after cell_id (at the top without cell_id); delete "
        "needs cell_id. Replacing a code cell clears its outputs and execution count; the "
        "rest of the notebook's JSON is kept byte for byte.{aka} Errors: not_read (read the "
        "notebook first), stale (it changed since you read it: read it again), partial_view "
        "(read the cell the message names first), no_match (no cell has that id: use an id "
        "exactly as read shows it), no_change, unreadable (the notebook's JSON is broken: "
        "repair it with {edit}), wrong_tool (not a notebook: use {edit}), invalid_params (a "
        "parameter the edit_mode needs is missing), syntax_error (the new code would leave a "
        "syntax error in the cell: correct it), protected, read_only, not_found, "
        "outside_workspace, denied, invalid_path, io_error, file_in_use (another program "
        "holds the notebook open: retry in a moment)."
    ),
    hints=Hints(destructive=True),
    result={
        "edit_mode": _f(_S, "What was done: replace, insert or delete."),
        "cell_id": _f(_S, "The cell's id."),
        "cell_index": _f(_I, "The cell's place, 1-based."),
        "cell_type": _f(_S, "The cell's type."),
        "total_cells": _f(_I, "The notebook's cell count after the change."),
        **_CHANGE_RESULT,
        **_CHANGE_REFUSAL,
        **_INVALID,
    },
    mcp="notebook_edit",
    vscode=VsCodeTool(
        "steadyhand_edit_notebook",
        "shNotebookEdit",
        "$(notebook)",
        ("files", "edit", "notebook", "steadyhand"),
        "Replace, insert or delete one cell of a Jupyter notebook the agent has read.",
    ),
)

LIST = Tool(
    key="list",
    command=names.LIST,
    params=ListParams,
    title="List Files and Folders",
    description=(
        "Lists the files and folders of the workspace: a folder's entries, a directory tree, "
        "the files whose path matches a glob, or the most recently changed files. Without "
        "path it lists every workspace root (the `roots` field names them: the folders you "
        "may work in). pattern is a glob: `**/*.py`, `src/**/*.{{ts,tsx}}`; one without `/` "
        "matches names at any depth. depth limits how deep it goes (1: the folder's own "
        "entries); with depth and no pattern the message is an indented tree, a good "
        "overview at depth 2 or 3. sort `modified` lists the newest first. type: `files`, "
        "`folders` or `all` (default: files with a pattern, else all). sizes adds byte sizes "
        "and modification times, line_counts the lines of each text file. It follows "
        ".gitignore, .ignore and git's global excludes (include_ignored lists those entries "
        "too), never lists denied paths or inside .git, and never follows symbolic links. "
        "Paths are relative to the first workspace root: pass them to {read} as they are. "
        "At most `limit` entries (default 200); the answer says how many more there are. "
        "Errors: not_found (the message suggests close names), invalid_pattern, "
        "outside_workspace and denied (do not retry)."
    ),
    hints=READ_ONLY,
    result={
        "entries": _f(
            _A, "The entries: {path, type (file, dir, link, other), size?, lines?, modified?}."
        ),
        "entries_more": _f(_I, "Entries found past the limit, not listed."),
        "total": _f(_I, "All the entries that match (only when the whole folder was looked at)."),
        "cut": _f(_S, "Why entries were left out: limit, bytes, time or entries."),
        "roots": _f(_A, "The workspace roots (when no path was given)."),
        **_INVALID,
    },
    mcp="list_files",
    absent={"vscode": _VSCODE_HAS_ITS_OWN},
)

SEARCH = Tool(
    key="search",
    command=names.SEARCH,
    params=SearchParams,
    title="Search File Contents",
    description=(
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
        "what was left out. A search is not a read: read a file with {read} before you edit "
        "it. Errors: invalid_pattern (fix the regular expression, or pass literal: true), "
        "not_found, outside_workspace and denied (do not retry)."
    ),
    hints=READ_ONLY,
    result={
        "files": _f(_A, "output_mode files: the paths of the files that match."),
        "matches": _f(_A, "output_mode content: the matching lines shown, {path, line, text}."),
        "counts": _f(_A, "output_mode count: {path, count} per file."),
        "total_files": _f(_I, "Files that match."),
        "total_matches": _f(_I, "Matching lines (content and count modes)."),
        "engine": _f(_S, "What searched the files on disk: ripgrep or python."),
        "truncated": _f(_B, "Whether something was left out (see cut)."),
        "cut": _f(_S, "Why: limit, bytes, time, results or entries."),
        **_INVALID,
    },
    mcp="grep",
    absent={"vscode": _VSCODE_HAS_ITS_OWN},
)

INFO = Tool(
    key="info",
    command=names.INFO,
    params=InfoParams,
    title="Get File Info",
    description=(
        "Describes a file or folder without reading its content into the conversation. A "
        "file: its kind (text, binary, image, pdf, notebook), size in bytes, number of "
        "lines, encoding, line endings, when it last changed, and whether it is open in the "
        "user's editor and has unsaved changes there (the lines are then counted in the "
        "editor's text). A folder: its number of entries. It does not count as a read: read "
        "the file with {read} before editing it. Errors: not_found, outside_workspace and "
        "denied (do not retry)."
    ),
    hints=READ_ONLY,
    result={
        "type": _f(_S, "file or dir."),
        "kind": _f(_S, "text, binary, image, pdf or notebook."),
        "size": _f(_I, "Bytes."),
        "lines": _f(_I, "Lines (of the editor's text when it is open)."),
        "encoding": _f(_S, "A text file's encoding."),
        "line_ending": _f(_S, '"lf", "crlf", "cr", "mixed" or "none".'),
        "modified": _f(_S, "When it last changed (UTC, ISO 8601)."),
        "open": _f(_B, "Whether the editor has it open."),
        "unsaved": _f(_B, "Whether the editor's text differs from the disk."),
        "entries": _f(_I, "A folder's number of entries."),
        **_INVALID,
    },
    mcp="get_file_info",
    absent={"vscode": _VSCODE_HAS_ITS_OWN},
)

CREATE_DIRECTORY = Tool(
    key="create_directory",
    command=names.CREATE_DIRECTORY,
    params=CreateDirectoryParams,
    title="Create Folder",
    description=(
        "Creates a folder and any missing folders above it (as `mkdir -p`). A folder that "
        "already exists is fine: nothing changes. {write} creates missing folders by itself, "
        "so this is for a folder meant to stay empty for now. Errors: invalid_path (a file "
        "is in the way: pick another name), protected (such as inside .git), read_only, "
        "outside_workspace and denied (do not retry), io_error."
    ),
    hints=Hints(idempotent=True),
    result={
        "created": _f(_A, "The folders made, the outermost first."),
        "existed": _f(_B, "Whether the folder was already there."),
        **_INVALID,
    },
    mcp="create_directory",
    absent={"vscode": _VSCODE_HAS_ITS_OWN},
)

_NOT_LM_HISTORY = (
    "the user reviews and takes back agents' changes in the Agent changes view, and a "
    "model in agent mode rewrites what it got wrong with the edit tools; every tool listed "
    "costs each request its description"
)
_MCP_SESSIONS = (
    "an MCP connection is a session of its own, and a host's sub-agent gets one by naming "
    "it in `session`; a host keeps a sub-agent from changing files by not giving it the "
    "changing tools"
)
_VSCODE_SESSIONS = (
    "the extension runs its tools in the one session `steadyhand.tools.session` names; "
    "extensions fork sessions with the command"
)

FORK = Tool(
    key="fork",
    command=names.SESSION_FORK,
    params=ForkParams,
    title="Fork a Session",
    description=(
        "Starts a new session with a copy of another's records (what it read), so a "
        "sub-agent can change files its parent read without reading them again; later reads "
        "and changes in either never reach the other. With read_only, every change the new "
        "session asks for is refused. Errors: not_found (no such parent session), "
        "session_exists (the name is in use: pick another, or close that session first)."
    ),
    hints=Hints(idempotent=False),
    result={
        "session": _f(_S, "The new session."),
        "parent": _f(_S, "The session it was forked from."),
        "files": _f(_I, "How many file records it starts with."),
        "read_only": _f(_B, "Whether it may only read."),
        "sessions": _f(_A, "not_found: the sessions there are."),
    },
    absent={"mcp": _MCP_SESSIONS, "vscode": _VSCODE_SESSIONS},
)

CLOSE = Tool(
    key="close",
    command=names.SESSION_CLOSE,
    params=CloseParams,
    title="Close a Session",
    description=(
        "Drops a session's records: its agent must read files again before changing them. "
        "A read-only session's name stays read-only."
    ),
    hints=Hints(idempotent=True),
    result={"files": _f(_I, "How many file records were dropped.")},
    absent={"mcp": _MCP_SESSIONS, "vscode": _VSCODE_SESSIONS},
)

PING = Tool(
    key="ping",
    command=names.PING,
    params=PingParams,
    title="Health Check",
    description="Answers pong, the server's version and whether it watches the folders.",
    hints=READ_ONLY,
    result={
        "version": _f(_S, "The server's version."),
        "watcher": _f(_O, "Whether changes behind the agent's back are seen: {state, folders}."),
    },
    absent={
        "mcp": "MCP has a ping of its own (the protocol's `ping` request)",
        "vscode": "a health check is for the extension, not a model",
    },
)

HISTORY = Tool(
    key="history",
    command=names.HISTORY,
    params=HistoryParams,
    title="File History",
    description=(
        "Lists the versions of a file that Steadyhand replaced, newest first: when, by which "
        "session and tool, lines added and removed, and whether each can still be restored "
        "(restorable) and is what the file holds now (current). Use it before {undo} to see "
        "what an undo would take back; each version's id is what {undo} and {change} take. "
        "Errors: outside_workspace, denied, invalid_path."
    ),
    hints=READ_ONLY,
    result={
        "versions": _f(
            _A,
            "Newest first: {id, time, session, other_server, tool, existed_before, "
            "size_before, size_after, added, removed, restorable, current}.",
        ),
        "versions_more": _f(_I, "Versions beyond those listed."),
        **_INVALID,
    },
    mcp="history",
    absent={"vscode": _NOT_LM_HISTORY},
)

UNDO = Tool(
    key="undo",
    command=names.UNDO,
    params=UndoParams,
    title="Undo a Change",
    description=(
        "Takes back a change Steadyhand made. With file_path alone: the last change to that "
        "file (by anyone, or by session when given): the content from before it is "
        "restored, or the file deleted if that change created it. The file must still be "
        "what that change left, else stale (nothing changed) unless force is true, which "
        "overwrites newer work (that work is kept in history too). Undoing again redoes. "
        "With id (from {changes} or {history}): that one change, even an earlier one: its "
        "lines go back where later changes left them alone, like git revert; where later "
        "changes touched the same lines it is refused with conflict, naming them, and "
        "nothing changes. An id several changes share is ambiguous: pass file_path too. "
        "Errors: no_history (nothing to undo, or its texts are no longer kept), stale (read "
        "the file, or pass force), conflict, ambiguous, no_change (already taken back), "
        "protected, read_only, outside_workspace, denied, io_error, file_in_use (another "
        "program holds the file open: retry in a moment)."
    ),
    hints=Hints(destructive=True),
    result={
        "type": _f(_S, '"restore", "delete" (the change created the file) or "revert" (id).'),
        "undone": _f(_S, "The id of the change taken back."),
        "session": _f(_S, "The session the undo was made as."),
        **_CHANGE_RESULT,
        "can_force": _f(_B, "Calling again with force: true would go ahead."),
        "candidates": _f(_A, "ambiguous: the changes the id names, {id, path, time, tool}."),
        "lines": _f(_RANGES, "conflict: the lines later changes touched, [first, last]."),
        "later": _f(_A, "conflict: the ids of those later changes."),
        "restorable": _f(_B, "no_history: whether the change's texts are still kept."),
        **_INVALID,
    },
    mcp="undo",
    absent={"vscode": _NOT_LM_HISTORY},
)

CHECKPOINT = Tool(
    key="checkpoint",
    command=names.CHECKPOINT,
    params=CheckpointParams,
    title="Mark a Checkpoint",
    description=(
        "Marks a point in this session's work, to go back to later with {rewind} (before a "
        "risky series of changes, say). Answers the checkpoint's id; a label makes it easy "
        "to name."
    ),
    hints=Hints(),
    result={
        "checkpoint": _f(_S, "The checkpoint's id (cp-…)."),
        "label": _null(_S, "Its label."),
        "time": _f(_S, "When it was made (ISO 8601)."),
        "session": _f(_S, "The session it belongs to."),
        **_INVALID,
    },
    mcp="checkpoint",
    absent={"vscode": _NOT_LM_HISTORY},
)

REWIND = Tool(
    key="rewind",
    command=names.REWIND,
    params=RewindParams,
    title="Rewind to a Checkpoint",
    description=(
        "Restores every file this session changed since a checkpoint, as one operation "
        "(files it created are deleted). Files someone else changed since are skipped and "
        "listed, never overwritten. Read files again before editing them afterwards. "
        "Errors: no_history (no such checkpoint, or nothing to rewind), read_only, io_error, "
        "file_in_use (another program holds a file open: nothing changed; retry in a moment)."
    ),
    hints=Hints(destructive=True),
    result={
        "checkpoint": _f(_S, "The checkpoint rewound to."),
        "restored": _f(_A, "Files restored."),
        "deleted": _f(_A, "Files the session had created, deleted."),
        "unchanged": _f(_A, "Files already as they were."),
        "skipped": _f(_A, "Files left alone, {path, reason}."),
        "not_on_disk": _f(_A, "Files restored in an open buffer whose disk was not changed."),
        "diff": _f(_S, "One unified diff of every file restored or deleted."),
        "diff_omitted": _f(_B, "The diff was long and left out; changed says where."),
        "diff_cut": _f(_I, "Hunks left out of a diff cut to what fits in one answer."),
        "changed": _f(_O, "With diff_omitted: each file's changed line ranges."),
        **_INVALID,
    },
    mcp="rewind",
    absent={"vscode": _NOT_LM_HISTORY},
)

CHANGES = Tool(
    key="changes",
    command=names.CHANGES,
    params=ChangesParams,
    title="List Changes",
    description=(
        "Lists the changes Steadyhand recorded in the workspace, newest first, and changes "
        "nothing. Each has its id, time, session, tool, file (path) and kind (change, "
        "create or delete), the lines added and removed, whether the file is still what it "
        "left (current), whether it can be taken back (restorable) and the checkpoint it "
        "came after. Narrow it with session, path (a file, or a folder and everything in "
        "it), since (a checkpoint's id or label) and limit. Use it to review what you or "
        "another session changed; then {change} shows one change's texts and diff, and "
        "{undo} with its id takes it back. Errors: no_history (an unknown since: the "
        "message names the latest checkpoints), outside_workspace, denied."
    ),
    hints=READ_ONLY,
    result={
        "changes": _f(
            _A,
            "Newest first: {id, time, session, other_server, tool, path, kind, added, "
            "removed, current, restorable, checkpoint}.",
        ),
        "changes_more": _f(_I, "Changes beyond those listed."),
        "total": _f(_I, "How many changes matched."),
        "checkpoints": _f(
            _A, "The listed sessions' checkpoints, {id, session, other_server, label, time}."
        ),
        **_INVALID,
    },
    mcp="changes",
    absent={"vscode": _NOT_LM_HISTORY},
)

CHANGE = Tool(
    key="change",
    command=names.CHANGE,
    params=ChangeParams,
    title="Show a Change",
    description=(
        "Shows one recorded change, by its id from {changes} or {history}, and changes "
        "nothing: the file's whole text before and after it (null for the side that did "
        "not exist: a creation has no before, a deletion no after), the unified diff, the "
        "sizes, and whether it switched line endings or encoding. To take it back, call "
        "{undo} with the same id. Errors: not_found (no change has that id), ambiguous (an "
        "id several changes share: pass file_path), too_large (a version over 4 MiB or "
        "binary: sizes only), no_history (a side no longer kept), outside_workspace, denied."
    ),
    hints=READ_ONLY,
    result={
        "id": _f(_S, "The change's id."),
        "time": _f(_S, "When it was made (ISO 8601)."),
        "session": _f(_S, "The session that made it."),
        "other_server": _f(_B, "Made by another server's session of that name."),
        "tool": _f(_S, "The command that made it."),
        "kind": _f(_S, '"change", "create" or "delete".'),
        "added": _f(_I, "Lines added."),
        "removed": _f(_I, "Lines removed."),
        "current": _f(_B, "The file is still what this change left."),
        "restorable": _f(_B, "The texts taking it back needs are kept."),
        "checkpoint": _null(_S, "The latest checkpoint of its session before it."),
        "before": _null(_S, "The file's text before the change (null: it did not exist)."),
        "after": _null(_S, "The file's text after the change (null: it was deleted)."),
        "diff": _f(_S, "The unified diff (LF line breaks)."),
        "size_before": _null(_I, "Bytes before."),
        "size_after": _null(_I, "Bytes after."),
        "line_endings": _f(_A, "When the change switched them: [before, after]."),
        "encodings": _f(_A, "When the change switched it: [before, after]."),
        "binary": _f(_B, "too_large: a side holds binary data."),
        "candidates": _f(_A, "ambiguous: the changes the id names, {id, path, time, tool}."),
        **_INVALID,
    },
    mcp="change",
    absent={"vscode": _NOT_LM_HISTORY},
)

#: Every command, in the order faces list them.
TOOLS: tuple[Tool, ...] = (
    READ,
    READ_MANY,
    EDIT,
    MULTI_EDIT,
    WRITE,
    NOTEBOOK_EDIT,
    LIST,
    SEARCH,
    INFO,
    CREATE_DIRECTORY,
    HISTORY,
    UNDO,
    CHECKPOINT,
    REWIND,
    CHANGES,
    CHANGE,
    FORK,
    CLOSE,
    PING,
)

#: Each command's entry as LSP has it (one per command; a face may split one into tools).
BY_COMMAND: dict[str, Tool] = {t.command: t for t in TOOLS if t.lsp}

"""Every command Steadyhand answers, in one table, and the one way to run them.

Each face of the server (the LSP ``workspace/executeCommand`` handler, the MCP server,
the socket an MCP server attaches through) looks a command up here and calls
:func:`run`: the arguments are validated against the command's parameter class, the tool
runs, and a refusal or a bug becomes a failed result. Only a :class:`ParamsError` (the
arguments do not fit) is left for the face to answer in its own protocol's way.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from steadyhand.context import ToolContext
from steadyhand.protocol import commands as names
from steadyhand.protocol.errors import ErrorCode, ToolError
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
    parse_arguments,
    structure,
)
from steadyhand.protocol.results import Result, failure
from steadyhand.tools import changes as changes_tools
from steadyhand.tools import checkpoint as checkpoint_tools
from steadyhand.tools import create_directory as mkdir_tool
from steadyhand.tools import edit as edit_tool
from steadyhand.tools import history as history_tools
from steadyhand.tools import info as info_tool
from steadyhand.tools import listing as list_tool
from steadyhand.tools import multi_edit as multi_edit_tool
from steadyhand.tools import notebook_edit as notebook_tool
from steadyhand.tools import read_many as read_tool
from steadyhand.tools import search as search_tool
from steadyhand.tools import sessions as session_tools
from steadyhand.tools import undo as undo_tools
from steadyhand.tools import write as write_tool

log = logging.getLogger("steadyhand")

ToolFn = Callable[[ToolContext, Any], Awaitable[Result] | Result]


@dataclass(frozen=True, slots=True)
class Command:
    """One command: its name, its parameters, and the tool that answers it."""

    name: str
    params: type[Any]
    tool: ToolFn
    #: Whether a success starts the watcher (a health check leaves it as it is).
    watch: bool = True


COMMANDS: dict[str, Command] = {
    c.name: c
    for c in (
        Command(names.READ, ReadParams, read_tool.read_files),
        Command(names.EDIT, EditParams, edit_tool.edit),
        Command(names.WRITE, WriteParams, write_tool.write),
        Command(names.MULTI_EDIT, MultiEditParams, multi_edit_tool.multi_edit),
        Command(names.NOTEBOOK_EDIT, NotebookEditParams, notebook_tool.notebook_edit),
        Command(names.SESSION_FORK, ForkParams, session_tools.fork),
        Command(names.SESSION_CLOSE, CloseParams, session_tools.close),
        Command(names.HISTORY, HistoryParams, history_tools.history),
        Command(names.UNDO, UndoParams, undo_tools.undo),
        Command(names.CHECKPOINT, CheckpointParams, checkpoint_tools.checkpoint),
        Command(names.REWIND, RewindParams, checkpoint_tools.rewind),
        Command(names.CHANGES, ChangesParams, changes_tools.changes),
        Command(names.CHANGE, ChangeParams, changes_tools.change),
        Command(names.LIST, ListParams, list_tool.list_entries, watch=False),
        Command(names.SEARCH, SearchParams, search_tool.search, watch=False),
        Command(names.INFO, InfoParams, info_tool.info, watch=False),
        Command(names.CREATE_DIRECTORY, CreateDirectoryParams, mkdir_tool.create_directory),
        Command(names.PING, PingParams, lambda ctx, p: ctx.status(), watch=False),
    )
}


def parse(command: Command, arguments: tuple[Any, ...] | dict[str, Any]) -> Any:
    """The command's parameters from an LSP ``arguments`` array (one object) or from the
    object itself; :class:`ParamsError` when they do not fit."""
    if isinstance(arguments, dict):
        return structure(command.params, arguments)
    return parse_arguments(command.params, arguments)


async def run(ctx: ToolContext, command: Command, params: Any) -> Result:
    """Run ``command`` on parsed ``params``; a refusal or a bug becomes a failed result."""
    try:
        out = command.tool(ctx, params)
        result = out if isinstance(out, dict) else await out
        if command.watch and result.get("ok") and ctx.on_success is not None:
            ctx.on_success()
    except ToolError as err:
        path = getattr(params, "file_path", None) or getattr(params, "path", None)
        result = failure(err, path if isinstance(path, str) else None)
    except Exception as exc:  # a bug must still answer, never crash the server
        log.exception("command failed")
        internal = ToolError(
            ErrorCode.IO_ERROR,
            f"Steadyhand failed unexpectedly ({type(exc).__name__}: {exc}). Retry once; if "
            "it fails again, tell the user.",
        )
        result = failure(internal)
    return result

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
from steadyhand.protocol import spec
from steadyhand.protocol.errors import ErrorCode, ToolError
from steadyhand.protocol.params import parse_arguments, structure
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


#: The tool that answers each command; its parameters and everything the faces say of it
#: are in the tool source (``protocol/spec``).
_ANSWERS: dict[str, ToolFn] = {
    names.READ: read_tool.read_files,
    names.EDIT: edit_tool.edit,
    names.WRITE: write_tool.write,
    names.MULTI_EDIT: multi_edit_tool.multi_edit,
    names.NOTEBOOK_EDIT: notebook_tool.notebook_edit,
    names.SESSION_FORK: session_tools.fork,
    names.SESSION_CLOSE: session_tools.close,
    names.HISTORY: history_tools.history,
    names.UNDO: undo_tools.undo,
    names.CHECKPOINT: checkpoint_tools.checkpoint,
    names.REWIND: checkpoint_tools.rewind,
    names.CHANGES: changes_tools.changes,
    names.CHANGE: changes_tools.change,
    names.LIST: list_tool.list_entries,
    names.SEARCH: search_tool.search,
    names.INFO: info_tool.info,
    names.CREATE_DIRECTORY: mkdir_tool.create_directory,
    names.PING: lambda ctx, p: ctx.status(),
}

#: Commands whose success leaves the watcher as it is: a health check, and the tools that
#: look at the tree without reading a file.
_NO_WATCH = frozenset({names.PING, names.LIST, names.SEARCH, names.INFO})


def _commands() -> dict[str, Command]:
    described = set(spec.BY_COMMAND)
    if described != set(_ANSWERS):
        raise RuntimeError(
            "Every command is described in protocol/spec and answered here: "
            f"not answered {sorted(described - set(_ANSWERS))}, "
            f"not described {sorted(set(_ANSWERS) - described)}."
        )
    return {
        t.command: Command(t.command, t.params, _ANSWERS[t.command], t.command not in _NO_WATCH)
        for t in spec.BY_COMMAND.values()
    }


COMMANDS: dict[str, Command] = _commands()


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

"""Every command Steadyhand answers, in one table, and the one way to run them.

Each face of the server (the LSP ``workspace/executeCommand`` handler, the MCP server,
the socket an MCP server attaches through) looks a command up here and calls
:func:`run`: the arguments are validated against the command's parameter class, the tool
runs, and a refusal or a bug becomes a failed result. Only a :class:`ParamsError` (the
arguments do not fit) is left for the face to answer in its own protocol's way.

A tool's module is imported on its command's first call, not with the table: a server
answers its first call having loaded that one tool, not all of them.
"""

from __future__ import annotations

import importlib
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, cast

from steadyhand.context import ToolContext
from steadyhand.protocol import commands as names
from steadyhand.protocol import spec
from steadyhand.protocol.errors import ErrorCode, ToolError
from steadyhand.protocol.params import parse_arguments, structure
from steadyhand.protocol.results import Result, failure

log = logging.getLogger("steadyhand")

ToolFn = Callable[[ToolContext, Any], Awaitable[Result] | Result]


@dataclass(frozen=True, slots=True)
class Command:
    """One command: its name, its parameters, and the tool that answers it."""

    name: str
    params: type[Any]
    #: The tool: a function, or where it is (``module:function`` in ``steadyhand.tools``),
    #: imported on first use.
    answer: ToolFn | str
    #: Whether a success starts the watcher (a health check leaves it as it is).
    watch: bool = True
    _tool: ToolFn | None = field(default=None, init=False, repr=False, compare=False)

    @property
    def tool(self) -> ToolFn:
        """The function that answers the command (its module imported the first time)."""
        tool = self._tool
        if tool is None:
            tool = _load(self.answer)
            object.__setattr__(self, "_tool", tool)  # found once, kept as if given
        return tool


def _load(answer: ToolFn | str) -> ToolFn:
    if not isinstance(answer, str):
        return answer
    module, _, name = answer.partition(":")
    return cast(ToolFn, getattr(importlib.import_module(f"steadyhand.tools.{module}"), name))


def _ping(ctx: ToolContext, params: Any) -> Result:
    return ctx.status()


#: The tool that answers each command (``module:function`` in ``steadyhand.tools``); its
#: parameters and everything the faces say of it are in the tool source
#: (``protocol/spec``).
_ANSWERS: dict[str, ToolFn | str] = {
    names.READ: "read_many:read_files",
    names.EDIT: "edit:edit",
    names.WRITE: "write:write",
    names.MULTI_EDIT: "multi_edit:multi_edit",
    names.NOTEBOOK_EDIT: "notebook_edit:notebook_edit",
    names.SESSION_FORK: "sessions:fork",
    names.SESSION_CLOSE: "sessions:close",
    names.HISTORY: "history:history",
    names.UNDO: "undo:undo",
    names.CHECKPOINT: "checkpoint:checkpoint",
    names.REWIND: "checkpoint:rewind",
    names.CHANGES: "changes:changes",
    names.CHANGE: "changes:change",
    names.LIST: "listing:list_entries",
    names.SEARCH: "search:search",
    names.INFO: "info:info",
    names.CREATE_DIRECTORY: "create_directory:create_directory",
    names.MOVE: "move:move",
    names.DELETE: "delete:delete",
    names.PING: _ping,
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

"""pygls's LSP protocol with a lean path for ``workspace/executeCommand``.

Two things in pygls 2.1's stock protocol cost every tool call:

* For each command it re-derives the handler's parameters (``inspect.signature`` and
  ``typing.get_type_hints``, which re-evaluates string annotations) before calling it.
  Steadyhand's handlers all take ``(ls, *args)``, which pygls turns into exactly
  ``tuple(arguments)``; the shape is now worked out once per handler.
* A built-in generator handler (``executeCommand`` is one) runs each step as a future
  kept in ``_request_futures`` under a fresh UUID that is never removed, so every call
  kept its task and its whole result (a read's text) alive for the life of the server.
  Those entries are now dropped when the step completes.

Behaviour is otherwise pygls's own (same errors for bad arguments), except that an unknown
command is answered -32602 with ``data.field`` "command" and the closest known command.

:meth:`CommandLane.execute_fast` goes further for the transport in
:mod:`steadyhand.lsp.transport`: a well-formed ``executeCommand`` request for one of
Steadyhand's own commands runs its handler directly from the parsed JSON, at once rather
than on a later turn of the event loop (a task takes over only if the handler has to wait),
and a plain JSON result is written back as one frame. Everything else — other methods, unknown
commands, params of an unexpected shape, error and cancellation answers — takes pygls's
path, so those answers are exactly pygls's.
"""

from __future__ import annotations

import asyncio
import difflib
import functools
import inspect
import logging
from collections.abc import Callable, Generator
from typing import Any

from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams
from pygls.protocol.language_server import lsp_method

from steadyhand.lsp.pygls_compat import (
    ForgetfulProtocol,
    answer_with_pygls,
    command_arguments,
    forget_request,
    is_shut_down,
    request_context,
    track_request,
)
from steadyhand.paths.resolve import shown_path
from steadyhand.runtime.tasks import run_now
from steadyhand.runtime.wire import dumps

log = logging.getLogger(__name__)


def _only_var_positional(handler: Callable[..., Any]) -> bool:
    """True when ``handler`` (after pygls injected the server) takes just ``*args``."""
    func = getattr(handler, "func", handler)
    try:
        params = list(inspect.signature(func).parameters.values())
    except (TypeError, ValueError):
        return False
    if params and params[0].name == "ls":
        params = params[1:]
    return len(params) == 1 and params[0].kind is inspect.Parameter.VAR_POSITIONAL


_EXECUTE_KEYS = frozenset({"command", "arguments", "workDoneToken"})


#: Names other tools give Steadyhand's commands (without the ``steadyhand.`` prefix).
_COMMAND_SLIPS = {
    "view": "read",
    "open": "read",
    "cat": "read",
    "get": "read",
    "replace": "edit",
    "strreplace": "edit",
    "create": "write",
    "fork": "session.fork",
    "close": "session.close",
    "ls": "list",
    "glob": "list",
    "find": "list",
    "tree": "list",
    "listdirectory": "list",
    "grep": "search",
    "rg": "search",
    "stat": "info",
    "fileinfo": "info",
    "mkdir": "createDirectory",
}


def _fold(name: str) -> str:
    return "".join(ch for ch in name.casefold() if ch not in "_-. ")


def closest_command(name: str, known: list[str]) -> str | None:
    """The known command ``name`` most likely meant: one that differs only in case or
    separators (with or without the ``steadyhand.`` prefix), a common other name for it,
    then the closest spelling."""
    prefix = "steadyhand."
    bare = {_fold(k.removeprefix(prefix)): k for k in known if k.startswith(prefix)}
    wanted = _fold(name[len(prefix) :] if name.casefold().startswith(prefix) else name)
    if wanted in bare:
        return bare[wanted]
    slip = _COMMAND_SLIPS.get(wanted)
    if slip is not None and _fold(slip) in bare:
        return bare[_fold(slip)]
    close = difflib.get_close_matches(wanted, list(bare), n=1, cutoff=0.6)
    return bare[close[0]] if close else None


def unknown_command(name: str, known: list[str]) -> JsonRpcInvalidParams:
    """The JSON-RPC error (-32602, ``data.field`` = "command") for a command that is not
    defined, with the closest known command as a hint."""
    shown = shown_path(name)  # quoted, any lone surrogate escaped
    ours = sorted(k for k in known if k.startswith("steadyhand."))
    guess = closest_command(name, known)
    hint = f" Did you mean `{guess}`?" if guess is not None else ""
    listed = ", ".join(f"`{k}`" for k in ours)
    data: dict[str, Any] = {"field": "command"}
    if guess is not None:
        data["suggestion"] = guess
    return JsonRpcInvalidParams(
        message=f"Invalid params: Command name {shown} is not defined.{hint} "
        f"Known commands: {listed}.",
        data=data,
    )


class CommandLane(ForgetfulProtocol):
    """The server's LSP protocol: pygls's, with the direct lane for Steadyhand's commands
    (:meth:`execute_fast`) and the answers to its own requests left as plain JSON."""

    _simple_commands: dict[int, bool]

    def get_result_type(self, method: str) -> type[Any] | None:  # type: ignore[override]
        """No type for the answers to the server's own requests: they arrive as plain JSON
        and are read strictly where they are used (:mod:`steadyhand.protocol.answers`).
        Structured by pygls, ``{"applied": "no"}`` read as applied, and an answer that did
        not fit its type was dropped, leaving the request waiting for good."""
        return None

    def _is_direct(self, handler: Callable[..., Any]) -> bool:
        """Whether ``handler`` can run on the direct lane: an async ``(ls, *args)``."""
        cache: dict[int, bool] = self.__dict__.setdefault("_direct_commands", {})
        direct = cache.get(id(handler))
        if direct is None:
            direct = inspect.iscoroutinefunction(handler) and self._is_simple(handler)
            cache[id(handler)] = direct
        return direct

    def _is_simple(self, handler: Callable[..., Any]) -> bool:
        cache: dict[int, bool] = self.__dict__.setdefault("_simple_commands", {})
        simple = cache.get(id(handler))
        if simple is None:
            simple = cache[id(handler)] = _only_var_positional(handler)
        return simple

    def execute_fast(self, data: dict[str, Any]) -> bool:
        """Run an ``executeCommand`` request (already parsed JSON) directly, if it is a
        plain one for an async ``(ls, *args)`` command; False: give it to pygls."""
        params = data.get("params")
        if (
            data.get("method") != types.WORKSPACE_EXECUTE_COMMAND
            or "id" not in data
            or is_shut_down(self)
            or not isinstance(params, dict)
            or not _EXECUTE_KEYS.issuperset(params)
        ):
            return False
        arguments = params.get("arguments")
        if arguments is None:
            arguments = []
        command = params.get("command")
        handler = self.fm.commands.get(command) if isinstance(command, str) else None
        if handler is None or not isinstance(arguments, list) or not self._is_direct(handler):
            return False
        msg_id = data["id"]
        # Run the handler at once, as a task would, in a copy of the context: most tool
        # calls never wait for anything, and a task would cost two more turns of the event
        # loop (its first step, then its done callback) before the answer goes out. If it
        # waits (a lock, the editor), a task drives it on from where it stopped.
        resumed = run_now(
            handler(*arguments),
            functools.partial(self._answer_fast, msg_id=msg_id),
            context=request_context(self, msg_id),
        )
        if resumed is not None:
            track_request(self, msg_id, resumed)  # so that $/cancelRequest finds it
        return True

    def notify_fast(self, method: str, params: dict[str, Any]) -> None:
        """Send a notification of plain JSON as one frame (pygls's path otherwise)."""
        data = dumps({"jsonrpc": "2.0", "method": method, "params": params})
        if data is None or self.writer is None:
            self.notify(method, params)
            return
        try:
            self.writer.write(b"Content-Length: %d\r\n\r\n%b" % (len(data), data))
        except (BrokenPipeError, RuntimeError):
            log.error("the client closed the connection")

    def _answer_fast(self, task: asyncio.Future[Any], *, msg_id: Any) -> None:
        if (
            not task.cancelled()
            and task.exception() is None
            and self._answer_plain(task.result(), msg_id)
        ):
            return
        answer_with_pygls(self, task, msg_id)

    def _answer_plain(self, result: Any, msg_id: Any) -> bool:
        """Send ``result`` as the answer to ``msg_id`` if it is plain JSON (then True);
        otherwise pygls serializes it (False: nothing was sent)."""
        data = dumps({"jsonrpc": "2.0", "id": msg_id, "result": result})
        if data is None or self.writer is None:
            return False
        forget_request(self, msg_id)
        try:
            self.writer.write(b"Content-Length: %d\r\n\r\n%b" % (len(data), data))
        except BrokenPipeError:
            log.error("the client closed the connection")
        return True

    @lsp_method(types.WORKSPACE_EXECUTE_COMMAND)
    def lsp_workspace__execute_command(
        self, params: types.ExecuteCommandParams
    ) -> Generator[Any, Any, Any]:
        handler = self.fm.commands.get(params.command, None)
        if handler is None:
            raise unknown_command(params.command, list(self.fm.commands))
        if self._is_simple(handler):
            args: tuple[Any, ...] = tuple(params.arguments or ())
            kwargs: dict[str, Any] = {}
        else:
            try:
                args, kwargs = command_arguments(self, handler, params)
            except Exception as exc:
                raise JsonRpcInvalidParams.of(exc) from exc
        result = yield handler, args, kwargs
        return result

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

Behaviour is otherwise pygls's own: same errors for unknown commands and bad arguments.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Generator
from typing import Any

from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams
from pygls.protocol import LanguageServerProtocol
from pygls.protocol.language_server import _prepare_command_arguments, lsp_method


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


class SteadyhandProtocol(LanguageServerProtocol):
    _simple_commands: dict[int, bool]

    def _execute_handler(  # type: ignore[no-untyped-def]
        self, msg_id, handler, callback, args=None, kwargs=None
    ):
        if isinstance(callback, functools.partial) and callback.func == self._run_generator:
            step = callback
            futures = self._request_futures

            def callback(future: Any, _id: Any = msg_id) -> None:
                futures.pop(_id, None)
                step(future)

        return super()._execute_handler(msg_id, handler, callback, args, kwargs)

    @lsp_method(types.WORKSPACE_EXECUTE_COMMAND)
    def lsp_workspace__execute_command(
        self, params: types.ExecuteCommandParams
    ) -> Generator[Any, Any, Any]:
        handler = self.fm.commands.get(params.command, None)
        if handler is None:
            raise JsonRpcInvalidParams.of(
                ValueError(f"Command name {params.command!r} is not defined")
            )
        cache = self.__dict__.setdefault("_simple_commands", {})
        simple = cache.get(id(handler))
        if simple is None:
            simple = cache[id(handler)] = _only_var_positional(handler)
        if simple:
            args: tuple[Any, ...] = tuple(params.arguments or ())
            kwargs: dict[str, Any] = {}
        else:
            try:
                args, kwargs = _prepare_command_arguments(handler, params, self._converter)
            except Exception as exc:
                raise JsonRpcInvalidParams.of(exc) from exc
        result = yield handler, args, kwargs
        return result

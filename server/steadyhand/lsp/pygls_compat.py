"""Every use of pygls's private members, in one place.

Steadyhand's stdio transport and its direct lane for ``workspace/executeCommand`` reach
into pygls 2.1's protocol object: the request futures it keeps for cancellation, the way
it answers a handler's result, its shutdown flag. These are not pygls's public API and
may change in any release, so pygls is pinned (``pyproject.toml``) and each private
member is read or written only here. :func:`missing_members` lists what a pygls version
lacks; the test suite fails on a version other than :data:`PINNED_PYGLS`, and on any
member gone missing, before a user could meet the difference.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
from collections.abc import Callable
from importlib.metadata import version
from typing import Any

from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.protocol import JsonRPCProtocol, LanguageServerProtocol
from pygls.protocol.language_server import _prepare_command_arguments

#: The pygls release these accesses were written against (see ``pyproject.toml``).
PINNED_PYGLS = "2.1.1"

#: The private members used here, by the class that has them.
_PROTOCOL_MEMBERS = (
    "_shutdown",
    "_ctx_msg_id",
    "_request_futures",
    "_result_types",
    "_run_generator",
    "_execute_handler",
    "_send_handler_result",
    "_send_data",
    "_converter",
)


def pygls_version() -> str:
    return version("pygls")


def missing_members(protocol: JsonRPCProtocol) -> list[str]:
    """The private members of ``protocol`` this module uses that it does not have."""
    return [name for name in _PROTOCOL_MEMBERS if not hasattr(protocol, name)]


def is_shut_down(protocol: JsonRPCProtocol) -> bool:
    """Whether the client has sent ``shutdown``."""
    return bool(protocol._shutdown)


def request_context(protocol: JsonRPCProtocol, msg_id: Any) -> contextvars.Context:
    """A copy of the current context holding the id pygls gives the request being
    handled (what its own handlers see while they run)."""
    ctx = contextvars.copy_context()
    ctx.run(protocol._ctx_msg_id.set, msg_id)
    return ctx


def track_request(protocol: JsonRPCProtocol, msg_id: Any, task: asyncio.Task[Any]) -> None:
    """Keep ``task`` where pygls looks for it when the client cancels ``msg_id``."""
    # pygls's annotation says a concurrent Future, but it keeps asyncio tasks there itself
    protocol._request_futures[msg_id] = task  # type: ignore[assignment]


def forget_request(protocol: JsonRPCProtocol, msg_id: Any) -> None:
    """Drop ``msg_id`` from the requests pygls can cancel (it was answered)."""
    protocol._request_futures.pop(msg_id, None)


def fail_request(protocol: JsonRPCProtocol, msg_id: Any, error: BaseException) -> bool:
    """Fail the server's own request ``msg_id`` with ``error`` (its answer could not be
    read): whoever awaits it learns at once instead of never. False if none is pending."""
    protocol._result_types.pop(msg_id, None)
    future = protocol._request_futures.pop(msg_id, None)
    if future is None or future.done():
        return False
    future.set_exception(error)
    return True


def answer_with_pygls(protocol: JsonRPCProtocol, outcome: asyncio.Future[Any], msg_id: Any) -> None:
    """Answer ``msg_id`` with ``outcome`` (a result, an error or a cancellation) exactly
    as pygls answers its own handlers."""
    protocol._send_handler_result(outcome, msg_id=msg_id)  # type: ignore[arg-type]


def send_message(protocol: JsonRPCProtocol, message: dict[str, Any]) -> None:
    """Send a raw JSON-RPC message (an error answer pygls would not send itself)."""
    protocol._send_data(message)


def command_arguments(
    protocol: JsonRPCProtocol, handler: Callable[..., Any], params: types.ExecuteCommandParams
) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """The arguments pygls itself would pass ``handler`` for ``params``."""
    args, kwargs = _prepare_command_arguments(handler, params, protocol._converter)
    return tuple(args), dict(kwargs)


def set_stop_event(server: LanguageServer, stop: Any) -> None:
    """Give ``server`` the event that ends its own reading loop (a threading.Event)."""
    server._stop_event = stop


class ForgetfulProtocol(LanguageServerProtocol):
    """pygls's protocol, except that a built-in generator handler's steps (such as
    ``workspace/executeCommand``) do not stay in the request futures for the life of the
    server: each entry, kept under a fresh id to make the step cancellable, is dropped
    when the step completes (pygls 2.1 never removes it, so every call kept its task and
    its whole result alive)."""

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

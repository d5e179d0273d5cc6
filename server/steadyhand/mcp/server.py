"""``steadyhand mcp``: an MCP server on stdio, standalone or attached to an editor.

Standalone, tool calls run in this process with a context of its own: files come from and
go to the disk, through the same guards and history as the language server. Attached
(``--attach auto`` found, or ``require``), each ``tools/call`` is sent to the running
``steadyhand serve`` whose roots hold this server's root, which runs it with the editor's
buffers (``attach.py``, ``rendezvous.py``).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import secrets
import signal
import sys
import threading
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

from steadyhand import __version__
from steadyhand.config import Settings, unknown_settings
from steadyhand.mcp import jsonrpc as rpc
from steadyhand.mcp import tools
from steadyhand.mcp.attach import Attachment, attach
from steadyhand.paths.uris import local_path
from steadyhand.runtime.allocator import IdleTrim
from steadyhand.runtime.wire import dumps, loads
from steadyhand.system import stdio

log = logging.getLogger("steadyhand")

#: Handshake revisions answered; the client's when it is one of these, else the newest.
PROTOCOL_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
LATEST = PROTOCOL_VERSIONS[-1]

#: How long tool calls may wait for the client's answer to ``roots/list``, counted from
#: the request: calls that come later do not wait at all.
ROOTS_WAIT_S = 10.0

#: Roots taken from one ``roots/list`` answer, at most.
MAX_ROOTS = 256

#: Tool calls that may wait for the client's roots before no more input is taken.
MAX_WAITING_CALLS = 1024

AttachMode = Literal["auto", "require", "never"]

_LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")
_PY_LEVELS = {
    "debug": logging.DEBUG,
    "info": logging.INFO,
    "notice": logging.INFO + 5,
    "warning": logging.WARNING,
    "error": logging.ERROR,
    "critical": logging.CRITICAL,
    "alert": logging.CRITICAL + 5,
    "emergency": logging.CRITICAL + 9,
}


@dataclass
class Options:
    roots: list[str] = field(default_factory=list)
    settings: Settings = field(default_factory=Settings)
    attach: AttachMode = "auto"
    cwd: str = field(default_factory=os.getcwd)


class ConfigError(ValueError):
    pass


def load_config(path: str) -> tuple[Settings, list[str]]:
    """Settings from a JSON file with the language server's setting keys, and a warning
    for each key that names no setting (with the closest one)."""
    try:
        with open(os.path.expanduser(path), "rb") as fh:
            raw = json.loads(fh.read())
    except OSError as exc:
        raise ConfigError(f"cannot read {path}: {exc.strerror or exc}") from exc
    except (ValueError, RecursionError) as exc:
        raise ConfigError(f"{path} is not valid JSON: {exc}") from exc
    if isinstance(raw, dict) and isinstance(raw.get("steadyhand"), dict):
        raw = raw["steadyhand"]
    if not isinstance(raw, dict):
        raise ConfigError(f"{path} must hold one JSON object of settings (as in docs/mcp.md)")
    warnings = []
    for key, closest in unknown_settings(raw):
        hint = f" Did you mean {closest!r}?" if closest else ""
        warnings.append(f"{path}: {key!r} is no setting, so it is ignored.{hint}")
    return Settings().updated(raw), warnings


def file_uri_path(uri: Any) -> str | None:
    """The local folder a root URI names (the one decoder of file URIs: another host, a
    network path or a NUL names no local folder)."""
    if not isinstance(uri, str):
        return None
    return local_path(uri)


class Local:
    """The standalone context: the disk through guards and history."""

    def __init__(self, settings: Settings, roots: list[str]) -> None:
        from steadyhand.apply.stack import build_world
        from steadyhand.fs.atomic import start_journal
        from steadyhand.protocol.results import success

        start_journal()
        self.ctx = build_world(settings, status=lambda: success("pong", version=__version__)).ctx
        self.set_roots(roots)

    def set_roots(self, roots: list[str]) -> None:
        from steadyhand.apply.history import configure
        from steadyhand.paths.resolve import Roots

        s = self.ctx.settings
        self.ctx.roots = Roots.of(roots, s.allowed_paths, s.deny_globs, s.allow_hard_links)
        configure(self.ctx, list(self.ctx.roots.workspace + self.ctx.roots.allowed))
        log.info("roots: %s", ", ".join(self.ctx.roots.workspace))


class ClientLog(logging.Handler):
    """Log records at or above the client's level, sent as ``notifications/message``."""

    def __init__(self, server: McpServer) -> None:
        super().__init__(logging.WARNING)
        self.server = server

    def emit(self, record: logging.LogRecord) -> None:
        if not self.server.initialized:
            return
        level = next(
            (name for name in reversed(_LEVELS) if record.levelno >= _PY_LEVELS[name]), "debug"
        )
        with contextlib.suppress(Exception):
            self.server.send(
                {
                    "jsonrpc": "2.0",
                    "method": "notifications/message",
                    "params": {"level": level, "logger": record.name, "data": record.getMessage()},
                }
            )


def roots_from(listed: Any) -> list[str] | None:
    """The local folders a ``roots/list`` answer names, in its order (at most
    ``MAX_ROOTS``); None when the answer is not ``{"roots": [...]}``."""
    if not isinstance(listed, dict):
        return None
    roots = listed.get("roots")
    if not isinstance(roots, list):
        return None
    paths = (file_uri_path(r.get("uri")) for r in roots[:MAX_ROOTS] if isinstance(r, dict))
    return [p for p in paths if p is not None]


class RootsAnswers:
    """Which ``roots/list`` answer is in force: requests are numbered as they are sent,
    and an answer counts only if no later request has been answered already (the client
    may answer out of order: a late answer to an older request is never taken over a
    newer one)."""

    def __init__(self) -> None:
        self.sent = 0
        self.answered = 0

    def send(self) -> int:
        self.sent += 1
        return self.sent

    def take(self, seq: int) -> bool:
        """Whether the answer to request ``seq`` is the newest so far (then it is)."""
        if seq <= self.answered:
            return False
        self.answered = seq
        return True

    @property
    def newest_answered(self) -> bool:
        return self.answered == self.sent


class McpServer:
    def __init__(self, options: Options, out: rpc.OutWriter) -> None:
        self.options = options
        self.out = out
        self.session = f"mcp-{secrets.token_hex(3)}"
        self.protocol = LATEST
        self.client_name = ""
        self.client_caps: dict[str, Any] = {}
        self.initialized = False
        self.local: Local | None = None
        self.attached: Attachment | None = None
        #: Connections to servers that no longer hold the root, kept until their calls
        #: are answered.
        self.retired: set[Attachment] = set()
        #: A note for the next result (the editor's server went away).
        self.note = ""
        self.tasks: dict[Any, asyncio.Task[Any]] = {}
        #: The host's input (set once it is read): held when answers back up.
        self.input: rpc.LineFramer | None = None
        self._outgoing: dict[Any, asyncio.Future[Any]] = {}
        self._roots: list[str] = list(options.roots)
        self._roots_answers = RootsAnswers()
        #: Set while tool calls must wait for the client's roots; resolved by the answer
        #: to the newest ``roots/list`` or at its deadline, whichever comes first.
        self._roots_wait: asyncio.Future[None] | None = None
        #: Tool calls waiting for the roots (they are in ``tasks`` too, to be cancelled).
        self._waiting_roots: set[asyncio.Task[Any]] = set()
        self.done: asyncio.Future[None] | None = None
        self.log_handler = ClientLog(self)

    # -- output -------------------------------------------------------------------------

    def send(self, message: dict[str, Any]) -> None:
        self.out.write(rpc.encode(message))

    def answer(self, msg_id: Any, result: Any) -> None:
        self.send(rpc.result_message(msg_id, result))

    def fail(self, msg_id: Any, code: int, message: str, data: Any = None) -> None:
        self.send(rpc.error_message(msg_id, code, message, data))

    def _forwarded(self, line: bytes) -> None:
        """An answer from the editor's server, passed on as it came (older revisions:
        without the structured content they do not know)."""
        if tools.structured_for(self.protocol):
            self.out.write_line(line)
        else:
            msg = loads(line)
            if isinstance(msg, dict) and isinstance(msg.get("result"), dict):
                msg["result"] = tools.for_revision(msg["result"], self.protocol)
            self.out.write_line(_encoded(msg))
        self._busy_changed()

    # -- flow control -------------------------------------------------------------------

    def _hold(self, why: str, on: bool) -> None:
        if self.input is not None:
            (self.input.hold if on else self.input.release)(why)

    def output_full(self, full: bool) -> None:
        """The host does not read its answers as fast as they come: take no new request
        from it, nor answers from the editor's server, until they drain."""
        self._hold("output", full)
        for conn in self._connections():
            (conn.framer.hold if full else conn.framer.release)("output")

    def _socket_full(self, full: bool) -> None:
        """The editor's server does not read requests as fast as they come."""
        self._hold("socket", full)

    def _busy_changed(self) -> None:
        waiting = len(self._waiting_roots)
        running = len(self.tasks) - waiting + sum(len(c.pending) for c in self._connections())
        self._hold("busy", running >= rpc.MAX_IN_FLIGHT)
        # Calls waiting for the roots are counted apart, with more room: the answer that
        # ends their wait comes on the input a hold would stop reading (the deadline ends
        # it all the same).
        self._hold("waiting", waiting >= MAX_WAITING_CALLS)

    def _connections(self) -> list[Attachment]:
        conns = list(self.retired)
        if self.attached is not None:
            conns.append(self.attached)
        return conns

    def _adopt(self, conn: Attachment) -> None:
        """Make ``conn`` the connection calls go through."""
        self.attached = conn
        if self.out.full:
            conn.framer.hold("output")
        if self.initialized or self.client_name:
            conn.rename(self.session, self.client_name)

    def _retire(self, conn: Attachment) -> None:
        """Send no more calls through ``conn``; close it once its calls are answered."""
        if self.attached is conn:
            self.attached = None
        if conn.pending:
            self.retired.add(conn)
            conn.when_idle(lambda: self._retired_idle(conn))
        else:
            conn.close()

    def _retired_idle(self, conn: Attachment) -> None:
        self.retired.discard(conn)
        conn.close()
        self._busy_changed()

    # -- start --------------------------------------------------------------------------

    def where(self) -> str:
        """This side's first root: relative paths resolve against it, and an editor's
        server must hold it to be attached to."""
        return self._roots[0] if self._roots else self.options.cwd

    async def start(self) -> str | None:
        """Attach if asked and possible; an error message when ``require`` finds none."""
        if self.options.attach == "never":
            return None
        conn = await self._attach(self.where())
        if conn is not None:
            self._adopt(conn)
        if self.attached is None and self.options.attach == "require":
            return (
                f"no running Steadyhand language server holds {self.where()} "
                "(--attach require). Open the folder in an editor with Steadyhand, or "
                "use --attach auto."
            )
        return None

    async def _attach(self, where: str) -> Attachment | None:
        return await attach(
            where,
            self.session,
            self.client_name,
            self._forwarded,
            self._lost_server,
            self._socket_full,
        )

    def instructions(self) -> str:
        base = (
            "Steadyhand's file tools. Read a file with read_file before you change it; "
            "edit_file replaces text that occurs exactly once; after a stale refusal that "
            "shows a diff, your view is refreshed, so retry from that diff without reading "
            "again. "
        )
        if self.attached is not None:
            d = self.attached.descriptor
            editor = d.editor or "the editor"
            return base + (
                f"Attached to {editor}'s Steadyhand server (pid {d.pid}) for "
                f"{', '.join(d.roots)}: files open in the editor are read from its buffers, "
                "unsaved typing included, and edits to them land there as one undo step."
            )
        roots = (
            ", ".join(self._roots) if self._roots else "the client's roots or the current folder"
        )
        return base + f"Standalone, on disk, in {roots}."

    # -- input --------------------------------------------------------------------------

    def on_line(self, line: bytes) -> None:
        try:
            msg = loads(line)
        except (ValueError, RecursionError):
            self.fail(None, rpc.PARSE_ERROR, "Parse error: the line is not valid JSON.")
            return
        problem = rpc.shape_problem(msg)
        if problem is not None:
            if not (isinstance(msg, dict) and "method" in msg and "id" not in msg):
                self.fail(None, rpc.INVALID_REQUEST, f"Invalid Request: {problem}")
            return
        method = msg.get("method")
        if method is None:
            self._response(msg)
            return
        if "id" not in msg:
            self._notification(method, msg.get("params"), line)
            return
        if method == "tools/call":
            self._call(msg, line)
            return
        handler = self._requests.get(method)
        if handler is None:
            self.fail(msg["id"], rpc.METHOD_NOT_FOUND, f"Method not found: {method}")
            return
        try:
            result = handler(self, msg.get("params") or {})
        except _Invalid as exc:
            self.fail(msg["id"], rpc.INVALID_PARAMS, str(exc))
            return
        except _NotFound as exc:
            self.fail(msg["id"], rpc.METHOD_NOT_FOUND, str(exc))
            return
        self.answer(msg["id"], result)

    def on_close(self, exc: Exception | None) -> None:
        if self.done is not None and not self.done.done():
            self.done.set_result(None)

    def _response(self, msg: dict[str, Any]) -> None:
        future = self._outgoing.pop(msg.get("id"), None)
        if future is None or future.done():
            return
        if "error" in msg:
            future.set_exception(RuntimeError(str(msg["error"])))
        else:
            future.set_result(msg.get("result"))

    def _notification(self, method: str, params: Any, line: bytes) -> None:
        if method == "notifications/initialized":
            self.initialized = True
            self._fetch_roots()
        elif method == "notifications/cancelled" and isinstance(params, dict):
            request_id = params.get("requestId")
            task = self.tasks.pop(request_id, None)
            if task is not None:
                task.cancel()
                self._busy_changed()
                return
            for conn in self._connections():
                if conn.cancel(line, request_id):
                    self._busy_changed()
                    return
        elif method == "notifications/roots/list_changed":
            self._fetch_roots()

    # -- requests -----------------------------------------------------------------------

    def _initialize(self, params: dict[str, Any]) -> dict[str, Any]:
        if not isinstance(params, dict):
            raise _Invalid("initialize needs its params object.")
        asked = params.get("protocolVersion")
        self.protocol = asked if asked in PROTOCOL_VERSIONS else LATEST
        caps = params.get("capabilities")
        self.client_caps = caps if isinstance(caps, dict) else {}
        info = params.get("clientInfo")
        name = info.get("name") if isinstance(info, dict) else None
        self.client_name = name if isinstance(name, str) else ""
        if self.attached is not None:
            self.attached.rename(self.session, self.client_name)
        return {
            "protocolVersion": self.protocol,
            "capabilities": {"tools": {"listChanged": False}, "logging": {}},
            "serverInfo": {"name": "steadyhand", "title": "Steadyhand", "version": __version__},
            "instructions": self.instructions(),
        }

    def _ping(self, params: Any) -> dict[str, Any]:
        return {}

    def _list(self, params: Any) -> dict[str, Any]:
        return {"tools": tools.listed(self.protocol)}

    def _set_level(self, params: Any) -> dict[str, Any]:
        level = params.get("level") if isinstance(params, dict) else None
        if level not in _PY_LEVELS:
            raise _Invalid(f"`level` must be one of {', '.join(_LEVELS)}.")
        self.log_handler.setLevel(_PY_LEVELS[level])
        logger = logging.getLogger("steadyhand")
        if logger.getEffectiveLevel() > _PY_LEVELS[level]:
            logger.setLevel(_PY_LEVELS[level])
        return {}

    def _discover(self, params: Any) -> dict[str, Any]:
        # The stateless revision (2026-07-28) is not spoken yet: an auto-negotiating
        # client falls back to ``initialize`` on this error.
        raise _NotFound("server/discover is not supported; use initialize.")

    _requests: ClassVar[dict[str, Any]] = {
        "initialize": _initialize,
        "ping": _ping,
        "tools/list": _list,
        "logging/setLevel": _set_level,
        "server/discover": _discover,
    }

    # -- roots --------------------------------------------------------------------------

    def _fetch_roots(self) -> None:
        if self.options.roots or "roots" not in self.client_caps:
            return
        loop = asyncio.get_running_loop()
        seq = self._roots_answers.send()
        # Internal ids are of this side's own requests: the host's answers carry them
        # back, and the host's requests (whose ids it chooses) never meet them.
        msg_id = f"steadyhand-roots-{seq}"
        future: asyncio.Future[Any] = loop.create_future()
        self._outgoing[msg_id] = future
        if self._roots_wait is None or self._roots_wait.done():
            waiting: asyncio.Future[None] = loop.create_future()
            self._roots_wait = waiting
            timer = loop.call_later(ROOTS_WAIT_S, self._roots_late, waiting)
            waiting.add_done_callback(lambda _: timer.cancel())
        self.send({"jsonrpc": "2.0", "id": msg_id, "method": "roots/list"})
        future.add_done_callback(lambda f: self._roots_answered(seq, f))

    def _roots_late(self, waiting: asyncio.Future[None]) -> None:
        if not waiting.done():
            log.warning(
                "the client did not list its roots within %g s: working in %s until it does",
                ROOTS_WAIT_S,
                self.where(),
            )
            waiting.set_result(None)

    def _roots_answered(self, seq: int, answer: asyncio.Future[Any]) -> None:
        try:
            listed = answer.result()
        except Exception as exc:
            log.warning("the client did not list its roots: %s", exc)
            listed = None
        newest = self._roots_answers.take(seq)
        paths = roots_from(listed)
        if paths is None and listed is not None:
            log.warning(
                'the client\'s roots/list answer is not {"roots": [...]}: keeping %s',
                self.where(),
            )
        if not newest:
            return  # an older request's answer, come after a newer one's
        waiting = self._roots_wait
        settle = self._roots_answers.newest_answered and waiting is not None
        if paths is None:
            if settle and waiting is not None and not waiting.done():
                waiting.set_result(None)
            return
        self._roots = paths
        if self.local is not None:
            self.local.set_roots(paths or [self.options.cwd])
        task = asyncio.get_running_loop().create_task(self._retarget())
        if settle and waiting is not None:
            task.add_done_callback(lambda _: None if waiting.done() else waiting.set_result(None))

    async def _wait_roots(self) -> None:
        waiting = self._roots_wait
        if waiting is not None and not waiting.done():
            await asyncio.shield(waiting)

    async def _retarget(self) -> None:
        """The first root changed: go on with the editor's server that holds it (another
        one, or none: standalone), so that calls never run against another root."""
        if self.options.attach == "never":
            return
        where = os.path.realpath(self.where())
        current = self.attached
        if current is not None and not current.lost and current.descriptor.covers(where):
            return
        conn = await self._attach(where)
        if self.attached is not current:
            if conn is not None:
                conn.close()
            return  # something else changed it meanwhile
        if current is not None:
            self._retire(current)
        if conn is not None:
            self._adopt(conn)
            return
        if current is not None and self.options.attach == "auto":
            editor = current.descriptor.editor or "the editor"
            self.note = (
                f"(Note: {editor}'s Steadyhand server does not hold {self.where()}, so this "
                "server now works on its own, on disk: what you read before must be read "
                "again before you edit.)"
            )

    def _local(self) -> Local:
        if self.local is None:
            self.local = Local(self.options.settings, self._roots or [self.options.cwd])
        return self.local

    # -- tool calls ---------------------------------------------------------------------

    def _call(self, msg: dict[str, Any], line: bytes) -> None:
        waiting = self._roots_wait
        if waiting is not None and not waiting.done():
            task = asyncio.get_running_loop().create_task(self._after_roots(msg, line))
            self.tasks[msg["id"]] = task
            self._waiting_roots.add(task)
            task.add_done_callback(self._waited)
            self._busy_changed()
            return
        self._dispatch(msg, line)

    def _waited(self, task: asyncio.Task[None]) -> None:
        self._waiting_roots.discard(task)
        self._busy_changed()

    async def _after_roots(self, msg: dict[str, Any], line: bytes) -> None:
        await self._wait_roots()
        me = asyncio.current_task()
        if self.tasks.get(msg["id"]) is me:
            del self.tasks[msg["id"]]
        if me is not None:
            self._waiting_roots.discard(me)
        self._dispatch(msg, line)
        self._busy_changed()

    def _dispatch(self, msg: dict[str, Any], line: bytes) -> None:
        if self.attached is not None and not self.attached.lost:
            self._forward(self.attached, msg, line)
            return
        if self.options.attach == "require":
            task = asyncio.get_running_loop().create_task(self._reattach_and_call(msg, line))
            self.tasks[msg["id"]] = task
            self._busy_changed()
            return
        self._run_local(msg, self._take_note())

    def _forward(self, conn: Attachment, msg: dict[str, Any], line: bytes) -> None:
        """Send the call on, its relative paths made absolute against this side's first
        root (the editor's server would take its own first root)."""
        params = tools.absolute_paths(msg.get("params"), self.where())
        if params is not None:
            msg = {**msg, "params": params}
            line = _encoded(msg)
        conn.forward(msg, line)
        self._busy_changed()

    def _run_local(self, msg: dict[str, Any], note: str = "") -> None:
        msg_id = msg["id"]

        def done(answer: Any, exc: BaseException | None) -> None:
            if self.tasks.pop(msg_id, None) is not None:
                self._busy_changed()
            if isinstance(exc, asyncio.CancelledError):
                return
            if isinstance(exc, tools.UnknownTool):
                self.fail(msg_id, rpc.INVALID_PARAMS, str(exc))
                return
            if exc is not None:
                log.error("tool call failed", exc_info=exc)
                self.fail(msg_id, rpc.INTERNAL_ERROR, f"Internal error: {type(exc).__name__}")
                return
            if note:
                answer = tools.with_note(answer, note)
            self.answer(msg_id, tools.for_revision(answer, self.protocol))

        task = rpc.start(self._local_call(msg.get("params")), done)
        if task is not None:
            self.tasks[msg_id] = task
            self._busy_changed()

    async def _local_call(self, params: Any) -> dict[str, Any]:
        return await tools.call_tool(self._local().ctx, params, self.session)

    async def _reattach_and_call(self, msg: dict[str, Any], line: bytes) -> None:
        """``--attach require`` after the editor's server went away: attach to one that
        holds the root now, else answer a tool error."""
        conn = await self._attach(self.where())
        if self.tasks.get(msg["id"]) is asyncio.current_task():
            del self.tasks[msg["id"]]
        if conn is not None:
            if self.attached is not None and not self.attached.lost:
                conn.close()  # another call attached meanwhile
            else:
                self._adopt(conn)
            assert self.attached is not None
            self._forward(self.attached, msg, line)
            return
        self._busy_changed()
        text = (
            f"The editor's Steadyhand server is gone and no other holds {self.where()}, "
            "so nothing was done (this MCP server runs with --attach require). Ask the "
            "user to open the folder in their editor again, then retry."
        )
        self._tool_error(msg["id"], text)

    def _tool_error(self, msg_id: Any, text: str) -> None:
        answer = tools.tool_error(tools.NOT_ATTACHED, text)
        self.answer(msg_id, tools.for_revision(answer, self.protocol))

    def _lost_server(self, conn: Attachment, pending: dict[Any, dict[str, Any]]) -> None:
        editor = conn.descriptor.editor or "the editor"
        if conn is not self.attached:  # retired: the calls it had were under way
            self.retired.discard(conn)
            for msg in pending.values():
                self._lost_answer(msg, editor)
            self._busy_changed()
            return
        if self.options.attach == "require":
            for msg in pending.values():
                self._lost_answer(msg, editor)
            self._busy_changed()
            return
        self.note = (
            f"(Note: {editor}'s Steadyhand server went away, so this server now works on "
            "its own, on disk: files open in the editor no longer see these changes until "
            "it reloads them, and what you read before must be read again before you edit.)"
        )
        for msg in pending.values():
            tool = tools.TOOLS.get(str((msg.get("params") or {}).get("name")))
            if tool is not None and tool.hints[0]:  # read-only: run it here instead
                self._run_local(msg, self._take_note())
            else:
                self._lost_answer(msg, editor)
        self._busy_changed()

    def _lost_answer(self, msg: dict[str, Any], editor: str) -> None:
        text = (
            f"{editor}'s Steadyhand server went away during this call, so whether it was "
            "applied is unknown. Read the file again before any further change."
        )
        if self.options.attach != "require":
            note = self._take_note()
            if note:
                text = f"{note}\n\n{text}"
        self._tool_error(msg["id"], text)

    def _take_note(self) -> str:
        note, self.note = self.note, ""
        return note


def _encoded(msg: dict[str, Any]) -> bytes:
    """``msg`` as one JSON line (without its newline); a string no UTF-8 can hold (a lone
    surrogate) is escaped, as JSON allows."""
    data = dumps(msg)
    if data is None:
        data = json.dumps(msg, separators=(",", ":")).encode()
    return data


class _Invalid(ValueError):
    pass


class _NotFound(ValueError):
    pass


async def _serve(options: Options) -> int:
    from steadyhand.runtime.pipes import widen_pipes

    loop = asyncio.get_running_loop()
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    widen_pipes(stdin, stdout)
    out = rpc.OutWriter(stdout.fileno())
    server = McpServer(options, out)
    out.on_full = server.output_full
    logging.getLogger("steadyhand").addHandler(server.log_handler)
    problem = await server.start()
    if problem is not None:
        print(f"steadyhand mcp: {problem}", file=sys.stderr)
        return 1
    server.done = loop.create_future()
    for name in ("SIGTERM", "SIGHUP"):
        sig = getattr(signal, name, None)
        if sig is not None:
            with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
                loop.add_signal_handler(sig, server.on_close, None)
    idle = IdleTrim()  # free heap goes back to the system while the agent thinks
    idle.start(loop)

    def on_line(line: bytes) -> None:
        idle.message()
        server.on_line(line)

    def too_long() -> None:
        server.fail(None, rpc.PARSE_ERROR, rpc.TOO_LONG)

    framer = rpc.LineFramer(on_line, server.on_close, on_too_long=too_long)
    server.input = framer
    out.start(loop)
    transport: asyncio.BaseTransport | None = None
    # Windows: a host's pipes are not overlapped, so the proactor cannot read them
    if stdio.loop_can_wait_on(stdin.fileno()):
        transport, _ = await loop.connect_read_pipe(lambda: framer, stdin)
    else:  # a regular file, or Windows: read it in a thread, line by line
        _read_on_a_thread(loop, stdin, framer)
    try:
        await server.done
        # let calls already running finish (a change is never left half-done)
        running = list(server.tasks.values())
        if running:
            await asyncio.wait(running, timeout=5)
        for conn in server._connections():
            await conn.idle(timeout=5)
        await out.flush(5)
    finally:
        idle.stop()
        rpc.close_quietly(transport)
        for conn in server._connections():
            conn.close()
        out.close()
        if server.local is not None and server.local.ctx.history is not None:
            server.local.ctx.history.flush()
    return 0


#: Lines read on the reader thread and not yet taken by the event loop, at most.
_THREAD_BACKLOG = 16


def _read_on_a_thread(loop: asyncio.AbstractEventLoop, stdin: Any, framer: rpc.LineFramer) -> None:
    """Feed ``framer`` from ``stdin`` on a thread, a line at a time: the thread waits while
    the framer is held, and never runs more than a few lines ahead of the loop."""
    room = threading.Semaphore(_THREAD_BACKLOG)

    def take(raw: bytes) -> None:
        room.release()
        framer.data_received(raw)

    def pump() -> None:
        while True:
            framer.taking.wait()
            raw = stdin.readline()
            if not raw:
                break
            room.acquire()
            loop.call_soon_threadsafe(take, raw)
        loop.call_soon_threadsafe(framer.connection_lost, None)

    threading.Thread(target=pump, daemon=True).start()


def serve(options: Options) -> int:
    try:
        return asyncio.run(_serve(options))
    except KeyboardInterrupt:
        return 0

"""Where a running ``steadyhand serve`` can be reached by ``steadyhand mcp`` of the same
user: a local socket (a Unix domain socket; a named pipe on Windows) and a small
descriptor beside it, in a private per-user folder.

The folder comes from who the user is, never from the environment, so an MCP server
started by a host that filters its environment finds the editor's server all the same
(``system/runtime_dir.py``: where, and the checks of its owner and mode). Each server
listens at ``<pid>.sock`` (Windows: a pipe named after the user's SID and the pid) and
describes itself in ``<pid>.json`` (pid, roots, editor, version). Nothing is trusted for
being there: a descriptor is read only when it is a regular file of this user's that no
one else may change, the socket it leads to must be one too, and both ends ask the
kernel who the other is before a byte passes (``system/peer.py``); nothing listens on
TCP. Files of servers that are gone are removed by the next server that starts and by
every ``steadyhand mcp`` that looks.

What comes over the socket is MCP's ``tools/call``, one JSON-RPC message a line, run with
the server's own context: open files are read from and edited in the editor's buffers,
exactly as for an agent in the editor. Each call is reported to the editor with a
``steadyhand/mcpCall`` notification (its activity view shows it as coming over MCP). A
client that does not read its answers is throttled: past a bounded backlog of answers,
or of calls running, nothing more is read from it.

The connection opens with a ``hello`` notification naming the session and the host; the
server answers with a ``hello`` notification of its own. Neither has an id, so no id the
host picks for its own requests can be taken for them.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import json
import logging
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from steadyhand import __version__
from steadyhand.context import ToolContext
from steadyhand.fs.checked_open import open_regular
from steadyhand.mcp import jsonrpc as rpc
from steadyhand.runtime.wire import loads
from steadyhand.system import local_socket, rename, runtime_dir
from steadyhand.system.process import alive

log = logging.getLogger(__name__)

#: Server -> client notification: a tool call that came over MCP (see docs/protocol.md).
MCP_CALL = "steadyhand/mcpCall"

#: The first message each way: a notification (no id), see the module's docstring.
HELLO = "hello"

#: Largest descriptor read (a real one is a few hundred bytes).
MAX_DESCRIPTOR_BYTES = 256 * 1024


def available() -> bool:
    return local_socket.available()


@dataclass(frozen=True, slots=True)
class Descriptor:
    pid: int
    socket: str
    roots: tuple[str, ...]
    editor: str
    version: str
    started: float
    file: str

    def covers(self, path: str) -> str | None:
        """The deepest of this server's roots that holds ``path`` (a real path)."""
        best: str | None = None
        for root in self.roots:
            inside = path == root or path.startswith(root.rstrip(os.sep) + os.sep)
            if inside and (best is None or len(root) > len(best)):
                best = root
        return best


def _remove(*paths: str) -> None:
    for p in paths:
        with contextlib.suppress(OSError):
            os.unlink(p)


def parse_descriptor(raw: Any, pid: int, folder: str, file: str) -> Descriptor | None:
    """The descriptor ``<pid>.json`` in ``folder`` holds, or None when it does not fit: its
    pid must be the one its name says, and its socket is where that pid's server listens
    (derived, never taken from the file)."""
    if not isinstance(raw, dict):
        return None
    try:
        if int(raw["pid"]) != pid or isinstance(raw["pid"], bool):
            return None
        roots = raw.get("roots") or ()
        if not isinstance(roots, list | tuple):
            return None
        return Descriptor(
            pid=pid,
            socket=local_socket.address(folder, pid),
            roots=tuple(str(r) for r in roots if isinstance(r, str) and os.path.isabs(r)),
            editor=str(raw.get("editor") or ""),
            version=str(raw.get("version") or ""),
            started=float(raw.get("started") or 0),
            file=file,
        )
    except (ValueError, KeyError, TypeError, OverflowError):
        return None


def _read_descriptor(file: str) -> Any:
    """The JSON in ``file`` when it is a regular file of this user's that no one else may
    change (never a FIFO or a link put in its place); None otherwise."""
    try:
        fd = open_regular(file, os.O_RDONLY)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as fh:
        if not runtime_dir.file_is_private(fh.fileno()):
            return None
        data = fh.read(MAX_DESCRIPTOR_BYTES + 1)
    if len(data) > MAX_DESCRIPTOR_BYTES:
        return None
    try:
        return json.loads(data)
    except (ValueError, RecursionError):
        return None


def _pid_of(name: str, ext: str) -> int | None:
    stem, dot, tail = name.partition(".")
    if dot != "." or tail != ext or not stem.isdigit() or len(stem) > 10:
        return None
    return int(stem)


def descriptors() -> list[Descriptor]:
    """The descriptors of running servers of this user, newest first; those of servers
    that are gone are removed with their sockets."""
    out: list[Descriptor] = []
    for candidate in runtime_dir.candidates():
        folder = runtime_dir.private(candidate, create=False)
        if folder is None:
            continue
        try:
            names = os.listdir(folder.path)
        except OSError:
            continue
        for name in names:
            pid = _pid_of(name, "json")
            if pid is None:
                continue
            file = os.path.join(folder.path, name)
            d = parse_descriptor(_read_descriptor(file), pid, folder.path, file)
            if d is None:
                continue
            if not alive(d.pid):
                log.info("removing the socket of server %d, which is gone", d.pid)
                local_socket.remove(d.socket)
                _remove(file)
                continue
            out.append(d)
    out.sort(key=lambda d: d.started, reverse=True)
    return out


def sweep(folder: str) -> None:
    """Remove sockets whose server is gone (and descriptors without a server)."""
    try:
        names = os.listdir(folder)
    except OSError:
        return
    for name in names:
        pid = _pid_of(name, "sock") or _pid_of(name, "json")
        if pid is not None and pid != os.getpid() and not alive(pid):
            _remove(os.path.join(folder, name))


def find(path: str) -> list[Descriptor]:
    """Servers whose roots hold ``path``: the one with the deepest root first (the newest
    among equals)."""
    real = os.path.realpath(path)
    found = [(d.covers(real), d) for d in descriptors()]
    matching = [(root, d) for root, d in found if root is not None]
    matching.sort(key=lambda rd: (len(rd[0]), rd[1].started), reverse=True)
    return [d for _, d in matching]


class Rendezvous:
    """The listening side, owned by the language server."""

    def __init__(
        self, ctx: Callable[[], ToolContext], notify: Callable[[str, dict[str, Any]], None]
    ) -> None:
        #: the server's context, as it is now (settings and roots change)
        self.ctx = ctx
        #: sends a notification to the editor
        self.notify = notify
        self.editor = ""
        self.folder: str | None = None
        self.sock_path: str | None = None
        self.desc_path: str | None = None
        self._server: local_socket.Listener | None = None
        self._closed = False
        self.started = 0.0
        self.peers: set[_Peer] = set()

    def update(self) -> None:
        """Listen (once a loop runs) and describe the server's current roots."""
        if self._closed or not available():
            return
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return
        if self._server is None and not self._listen():
            return
        self._describe()

    def _place(self) -> bool:
        """Choose the folder and the address to listen at."""
        for candidate in runtime_dir.candidates():
            folder = runtime_dir.private(candidate, create=True)
            if folder is None:
                continue
            where = local_socket.address(folder.path, os.getpid())
            if not local_socket.address_fits(where):
                log.info("not listening for MCP in %s: the socket path would be too long", where)
                continue
            sweep(folder.path)
            self.folder, self.sock_path = folder.path, where
            self.desc_path = os.path.join(folder.path, f"{os.getpid()}.json")
            return True
        log.warning("not listening for MCP: no private folder for the socket")
        self._closed = True
        return False

    def _listen(self) -> bool:
        if self.sock_path is None and not self._place():
            return False
        assert self.sock_path is not None
        try:
            self._server = local_socket.listen(self.sock_path, lambda: _Peer(self).framer)
        except OSError as exc:
            log.warning("not listening for MCP at %s: %s", self.sock_path, exc)
            self._closed = True
            return False
        self.started = time.time()
        atexit.register(self.close)
        log.info("reachable by steadyhand mcp at %s", self.sock_path)
        return True

    def _describe(self) -> None:
        assert self.desc_path is not None and self.folder is not None
        ctx = self.ctx()
        data = {
            "pid": os.getpid(),
            "socket": self.sock_path,
            "roots": list(ctx.roots.workspace + ctx.roots.allowed),
            "editor": self.editor,
            "version": __version__,
            "started": self.started,
        }
        tmp = f"{self.desc_path}.tmp"
        try:
            _remove(tmp)  # whatever was left there: the file is made anew, never opened
            fd = open_regular(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "wb") as fh:
                fh.write(json.dumps(data).encode())
            # (tried again while a reader holds it: Windows's open shares no deletion)
            rename.replace_own(tmp, self.desc_path)
        except OSError as exc:
            log.warning("cannot write the descriptor %s: %s", self.desc_path, exc)

    def close(self) -> None:
        """Stop listening and remove the socket and the descriptor."""
        if self._closed:
            return
        self._closed = True
        if self._server is not None:
            self._server.close()
        for peer in list(self.peers):
            rpc.close_quietly(peer.transport)
        if self._server is not None and self.sock_path is not None:
            if self.desc_path is not None:
                _remove(self.desc_path)
            local_socket.remove(self.sock_path)

    def report(self, peer: _Peer, params: Any, answer: dict[str, Any]) -> None:
        """Tell the editor about a call that came over MCP (after it was answered)."""
        from steadyhand.mcp.tools import TOOLS  # loaded with the first MCP call, not at start

        tool = TOOLS.get(str(params.get("name"))) if isinstance(params, dict) else None
        if tool is None:
            return
        args = params.get("arguments")
        result = answer.get("structuredContent") or {}
        shown = {k: result[k] for k in ("ok", "error", "path", "dry_run", "via") if k in result}
        event: dict[str, Any] = {
            "command": tool.command,
            "tool": tool.name,
            "session": peer.session,
            "client": peer.client,
            "params": {"file_path": args.get("file_path")} if isinstance(args, dict) else {},
            "result": shown,
        }
        self.notify(MCP_CALL, event)


class _Peer:
    """One ``steadyhand mcp`` connected to this server.

    Its answers go out through the socket's buffer: when that holds more than its
    high-water mark (the client is not reading), or when ``MAX_IN_FLIGHT`` of its calls
    are running, no more requests are read from it until it drains.
    """

    def __init__(self, rv: Rendezvous) -> None:
        self.rv = rv
        self.framer = rpc.LineFramer(
            self._line,
            self._closed,
            self._connected,
            on_too_long=lambda: self._send(rpc.error_message(None, rpc.PARSE_ERROR, rpc.TOO_LONG)),
            on_write_full=self._write_full,
        )
        self.transport: asyncio.Transport | None = None
        self.session = f"mcp-{id(self) & 0xFFFFFF:06x}"
        self.client = ""
        self.tasks: dict[Any, asyncio.Task[Any]] = {}

    def _connected(self, transport: asyncio.BaseTransport) -> None:
        if not local_socket.peer_is_me(transport):
            log.warning("refused an MCP connection from another user (or one not identified)")
            self.framer.closed = True
            abort = getattr(transport, "abort", transport.close)
            abort()
            return
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport
        self.rv.peers.add(self)

    def _closed(self, exc: Exception | None) -> None:
        self.rv.peers.discard(self)
        for task in self.tasks.values():
            task.cancel()
        self.tasks.clear()

    def _write_full(self, full: bool) -> None:
        if full:
            self.framer.hold("output")
        else:
            self.framer.release("output")

    def _send(self, message: dict[str, Any]) -> None:
        if self.transport is not None and not self.transport.is_closing():
            self.transport.write(rpc.encode(message))

    def _hello(self, params: Any) -> dict[str, Any]:
        if isinstance(params, dict):
            if isinstance(params.get("session"), str) and params["session"]:
                self.session = params["session"][:200]
            if isinstance(params.get("client"), str):
                self.client = params["client"][:200]
        ctx = self.rv.ctx()
        return {
            "pid": os.getpid(),
            "version": __version__,
            "editor": self.rv.editor,
            "roots": list(ctx.roots.workspace + ctx.roots.allowed),
        }

    def _line(self, line: bytes) -> None:
        try:
            msg = loads(line)
        except (ValueError, RecursionError):
            self._send(rpc.error_message(None, rpc.PARSE_ERROR, "Parse error"))
            return
        problem = rpc.shape_problem(msg)
        if problem is not None:
            self._send(rpc.error_message(None, rpc.INVALID_REQUEST, problem))
            return
        method = msg.get("method")
        msg_id = msg.get("id")
        params = msg.get("params")
        if method == "tools/call" and "id" in msg:
            self._call(msg_id, params)
        elif method == HELLO:
            info = self._hello(params)
            if "id" in msg:  # the form of earlier versions
                self._send(rpc.result_message(msg_id, info))
            else:
                self._send({"jsonrpc": "2.0", "method": HELLO, "params": info})
        elif method == "notifications/cancelled" and isinstance(params, dict):
            task = self.tasks.pop(params.get("requestId"), None)
            if task is not None:
                task.cancel()
                self._running_changed()
        elif "id" in msg and method is not None:
            self._send(rpc.error_message(msg_id, rpc.METHOD_NOT_FOUND, f"Unknown method {method}"))

    def _running_changed(self) -> None:
        if len(self.tasks) >= rpc.MAX_IN_FLIGHT:
            self.framer.hold("busy")
        else:
            self.framer.release("busy")

    def _call(self, msg_id: Any, params: Any) -> None:
        def done(answer: Any, exc: BaseException | None) -> None:
            if self.tasks.pop(msg_id, None) is not None:
                self._running_changed()
            if isinstance(exc, asyncio.CancelledError):
                return  # a cancelled request is not answered
            from steadyhand.mcp.tools import UnknownTool

            if isinstance(exc, UnknownTool):
                self._send(rpc.error_message(msg_id, rpc.INVALID_PARAMS, str(exc)))
                return
            if exc is not None:
                log.error("an MCP call failed", exc_info=exc)
                self._send(rpc.error_message(msg_id, rpc.INTERNAL_ERROR, f"{type(exc).__name__}"))
                return
            self._send(rpc.result_message(msg_id, answer))
            asyncio.get_running_loop().call_soon(self.rv.report, self, params, answer)

        from steadyhand.mcp.tools import call_tool

        task = rpc.start(call_tool(self.rv.ctx(), params, self.session), done)
        if task is not None:
            self.tasks[msg_id] = task
            self._running_changed()

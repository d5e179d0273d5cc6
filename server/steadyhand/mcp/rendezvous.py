"""Where a running ``steadyhand serve`` can be reached by ``steadyhand mcp`` of the same
user: a Unix domain socket in a private folder, with a small descriptor beside it.

The folder is ``$XDG_RUNTIME_DIR/steadyhand`` (else ``~/.cache/steadyhand/run``), made
0700 and used only when it belongs to this user and no one else may enter it. Each server
listens on ``<pid>.sock`` and describes itself in ``<pid>.json`` (pid, roots, editor,
version, socket); the peer's uid is checked on every connection (``SO_PEERCRED``), and
nothing listens on TCP. Files of servers that are gone are removed by the next server
that starts and by every ``steadyhand mcp`` that looks.

What comes over the socket is MCP's ``tools/call``, one JSON-RPC message a line, run with
the server's own context: open files are read from and edited in the editor's buffers,
exactly as for an agent in the editor. Each call is reported to the editor with a
``steadyhand/mcpCall`` notification (its activity view shows it as coming over MCP).
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import json
import logging
import os
import socket
import stat
import struct
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from steadyhand import __version__
from steadyhand.context import ToolContext
from steadyhand.fs.checked_open import open_regular
from steadyhand.mcp import protocol as rpc
from steadyhand.runtime.wire import loads

log = logging.getLogger(__name__)

#: Server -> client notification: a tool call that came over MCP (see docs/protocol.md).
MCP_CALL = "steadyhand/mcpCall"

#: Longest socket path the platforms take (``sun_path`` is 104 or 108 bytes).
MAX_SOCKET_PATH = 100


def available() -> bool:
    return hasattr(socket, "AF_UNIX")


def socket_dir() -> str:
    """The per-user folder of sockets and descriptors (not made here)."""
    run = os.environ.get("XDG_RUNTIME_DIR")
    if run and os.path.isabs(run) and os.path.isdir(run):
        return os.path.join(run, "steadyhand")
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(cache, "steadyhand", "run")


def private_dir(path: str, *, create: bool) -> str | None:
    """``path`` if it is a folder of this user's that no one else may enter (made 0700
    when ``create``); None otherwise, with the reason logged."""
    if create:
        try:
            os.makedirs(path, mode=0o700, exist_ok=True)
        except OSError as exc:
            log.warning("cannot make the socket folder %s: %s", path, exc)
            return None
    try:
        st = os.lstat(path)
    except OSError:
        return None
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.getuid():
        log.warning("not using %s for sockets: it is not a folder of this user's", path)
        return None
    if st.st_mode & 0o077:
        try:
            os.chmod(path, 0o700)
        except OSError as exc:
            log.warning("not using %s for sockets: others may enter it (%s)", path, exc)
            return None
    return path


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


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _remove(*paths: str) -> None:
    for p in paths:
        with contextlib.suppress(OSError):
            os.unlink(p)


def descriptors() -> list[Descriptor]:
    """The descriptors of running servers, newest first; those of servers that are gone
    are removed with their sockets."""
    folder = private_dir(socket_dir(), create=False)
    if folder is None:
        return []
    out: list[Descriptor] = []
    try:
        names = os.listdir(folder)
    except OSError:
        return []
    for name in names:
        if not name.endswith(".json"):
            continue
        file = os.path.join(folder, name)
        try:
            # never a FIFO or a link put in the folder's place of a descriptor
            with os.fdopen(open_regular(file, os.O_RDONLY), "rb") as fh:
                raw = json.loads(fh.read())
            d = Descriptor(
                pid=int(raw["pid"]),
                socket=str(raw["socket"]),
                roots=tuple(str(r) for r in raw.get("roots") or ()),
                editor=str(raw.get("editor") or ""),
                version=str(raw.get("version") or ""),
                started=float(raw.get("started") or 0),
                file=file,
            )
        except (OSError, ValueError, KeyError, TypeError, RecursionError):
            continue
        if not alive(d.pid):
            log.info("removing the socket of server %d, which is gone", d.pid)
            _remove(d.socket, file)
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
        stem, _, ext = name.partition(".")
        if ext not in ("sock", "json") or not stem.isdigit():
            continue
        if int(stem) != os.getpid() and not alive(int(stem)):
            _remove(os.path.join(folder, name))


def find(path: str) -> list[Descriptor]:
    """Servers whose roots hold ``path``: the one with the deepest root first (the newest
    among equals)."""
    real = os.path.realpath(path)
    found = [(d.covers(real), d) for d in descriptors()]
    matching = [(root, d) for root, d in found if root is not None]
    matching.sort(key=lambda rd: (len(rd[0]), rd[1].started), reverse=True)
    return [d for _, d in matching]


def peer_uid(sock: socket.socket | Any) -> int | None:
    """The uid of the process at the other end of a Unix socket (None: cannot tell)."""
    opt = getattr(socket, "SO_PEERCRED", None)
    if opt is None:
        return None
    try:
        raw = sock.getsockopt(socket.SOL_SOCKET, opt, struct.calcsize("3i"))
    except OSError:
        return None
    _pid, uid, _gid = struct.unpack("3i", raw)
    return int(uid)


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
        self._server: asyncio.AbstractServer | None = None
        self._sock: socket.socket | None = None
        self._closed = False
        self.peers: set[_Peer] = set()

    def update(self) -> None:
        """Listen (once a loop runs) and describe the server's current roots."""
        if self._closed or not available():
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return
        if self._sock is None and not self._listen(loop):
            return
        self._describe()

    def _listen(self, loop: asyncio.AbstractEventLoop) -> bool:
        folder = private_dir(socket_dir(), create=True)
        if folder is None:
            self._closed = True
            return False
        sweep(folder)
        path = os.path.join(folder, f"{os.getpid()}.sock")
        if len(path.encode()) > MAX_SOCKET_PATH:
            log.warning("not listening for MCP: the socket path %s is too long", path)
            self._closed = True
            return False
        _remove(path)
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        old = os.umask(0o177)
        try:
            sock.bind(path)
        except OSError as exc:
            sock.close()
            log.warning("not listening for MCP on %s: %s", path, exc)
            self._closed = True
            return False
        finally:
            os.umask(old)
        sock.listen(16)
        sock.setblocking(False)
        self.folder, self.sock_path, self._sock = folder, path, sock
        self.desc_path = os.path.join(folder, f"{os.getpid()}.json")
        atexit.register(self.close)
        task = loop.create_task(loop.create_unix_server(lambda: _Peer(self).framer, sock=sock))
        task.add_done_callback(self._listening)
        log.info("reachable by steadyhand mcp at %s", path)
        return True

    def _listening(self, task: asyncio.Task[asyncio.AbstractServer]) -> None:
        if task.cancelled() or task.exception() is not None:
            log.warning("not listening for MCP: %s", None if task.cancelled() else task.exception())
            return
        self._server = task.result()
        if self._closed:
            self._server.close()

    def _describe(self) -> None:
        assert self.desc_path is not None and self.folder is not None
        ctx = self.ctx()
        data = {
            "pid": os.getpid(),
            "socket": self.sock_path,
            "roots": list(ctx.roots.workspace + ctx.roots.allowed),
            "editor": self.editor,
            "version": __version__,
            "started": time.time(),
        }
        tmp = f"{self.desc_path}.tmp"
        try:
            fd = open_regular(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd, "wb") as fh:
                fh.write(json.dumps(data).encode())
            os.replace(tmp, self.desc_path)
        except OSError as exc:
            log.warning("cannot write the descriptor %s: %s", self.desc_path, exc)

    def close(self) -> None:
        """Stop listening and remove the socket and the descriptor."""
        if self._closed:
            return
        self._closed = True
        if self._server is not None:
            self._server.close()
        if self._sock is not None:
            with contextlib.suppress(OSError):
                self._sock.close()
        for peer in list(self.peers):
            rpc.close_quietly(peer.transport)
        if self.sock_path is not None and self.desc_path is not None:
            _remove(self.sock_path, self.desc_path)

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
    """One ``steadyhand mcp`` connected to this server."""

    def __init__(self, rv: Rendezvous) -> None:
        self.rv = rv
        self.framer = rpc.LineFramer(
            self._line,
            self._closed,
            self._connected,
            on_too_long=lambda: self._send(rpc.error_message(None, rpc.PARSE_ERROR, rpc.TOO_LONG)),
        )
        self.transport: asyncio.Transport | None = None
        self.session = f"mcp-{id(self) & 0xFFFFFF:06x}"
        self.client = ""
        self.tasks: dict[Any, asyncio.Task[Any]] = {}

    def _connected(self, transport: asyncio.BaseTransport) -> None:
        sock = transport.get_extra_info("socket")
        uid = peer_uid(sock) if sock is not None else None
        if uid is not None and uid != os.getuid():
            log.warning(
                "refused an MCP connection from uid %d (this server runs as %d)", uid, os.getuid()
            )
            self.framer.closed = True
            transport.abort()  # type: ignore[attr-defined]
            return
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport
        self.rv.peers.add(self)

    def _closed(self, exc: Exception | None) -> None:
        self.rv.peers.discard(self)
        for task in self.tasks.values():
            task.cancel()
        self.tasks.clear()

    def _send(self, message: dict[str, Any]) -> None:
        if self.transport is not None and not self.transport.is_closing():
            self.transport.write(rpc.encode(message))

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
        elif method == "hello" and "id" in msg:
            if isinstance(params, dict):
                if isinstance(params.get("session"), str) and params["session"]:
                    self.session = params["session"][:200]
                if isinstance(params.get("client"), str):
                    self.client = params["client"][:200]
            ctx = self.rv.ctx()
            self._send(
                rpc.result_message(
                    msg_id,
                    {
                        "pid": os.getpid(),
                        "version": __version__,
                        "editor": self.rv.editor,
                        "roots": list(ctx.roots.workspace + ctx.roots.allowed),
                    },
                )
            )
        elif method == "notifications/cancelled" and isinstance(params, dict):
            task = self.tasks.pop(params.get("requestId"), None)
            if task is not None:
                task.cancel()
        elif "id" in msg and method is not None:
            self._send(rpc.error_message(msg_id, rpc.METHOD_NOT_FOUND, f"Unknown method {method}"))

    def _call(self, msg_id: Any, params: Any) -> None:
        def done(answer: Any, exc: BaseException | None) -> None:
            self.tasks.pop(msg_id, None)
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

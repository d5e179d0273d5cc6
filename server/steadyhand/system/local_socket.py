"""A local stream connection between two processes of the same user, on asyncio: a Unix
domain socket on Linux and macOS, a named pipe on Windows.

Both ends check who the other is before a byte is exchanged (``peer.py``): the listener
closes a connection from another user at once, and :func:`connect` raises
``PermissionError`` for a server run by another user. On Windows the pipe is made with a
DACL that lets only this user open it, refuses remote clients, and is the first instance
of its name (another process holding the name is never joined); the client opens it at
the identification level only, so the server at the other end cannot act as the client.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
import sys
from collections.abc import Callable
from typing import Any, Protocol

from steadyhand.system import peer

log = logging.getLogger(__name__)

#: Longest Unix socket path every platform takes (``sun_path`` is 104 bytes on macOS).
MAX_SOCKET_PATH = 100

#: Bytes each way a named pipe buffers.
PIPE_BUFFER = 64 * 1024

ProtocolFactory = Callable[[], asyncio.Protocol]


class Listener(Protocol):
    def close(self) -> None: ...


def available() -> bool:
    """Whether this system has the local connections this module makes."""
    return sys.platform == "win32" or hasattr(socket, "AF_UNIX")


def address(folder: str, pid: int) -> str:
    """Where the server of process ``pid`` listens: ``<folder>/<pid>.sock``; on Windows a
    pipe name holding this user's SID (pipe names are one namespace for all users)."""
    if sys.platform == "win32":
        from steadyhand.system import winsec

        return rf"\\.\pipe\steadyhand-{winsec.current_sid()}-{pid}"
    return os.path.join(folder, f"{pid}.sock")


def address_fits(where: str) -> bool:
    if sys.platform == "win32":
        return len(where) < 256
    return len(os.fsencode(where)) <= MAX_SOCKET_PATH


def remove(where: str) -> None:
    """Remove the socket file at ``where`` (a pipe name is no file: nothing to do)."""
    if sys.platform == "win32":
        return
    with contextlib.suppress(OSError):
        os.unlink(where)


def peer_is_me(transport: asyncio.BaseTransport) -> bool:
    """For a listener: whether the client on ``transport`` runs as this user."""
    if sys.platform == "win32":
        pipe = transport.get_extra_info("pipe")
        handle = getattr(pipe, "handle", None)
        return isinstance(handle, int) and peer.pipe_peer_is_me(handle, peer_is_server=False)
    sock = transport.get_extra_info("socket")
    return sock is not None and peer.socket_is_me(sock)


def listen(where: str, factory: ProtocolFactory) -> Listener:
    """Listen at ``where`` (see :func:`address`), in the running event loop: bound at once
    (a client may connect as soon as this returns), served from the loop's next turn.
    ``OSError`` when it cannot be done. A stale socket file at ``where`` is replaced."""
    loop = asyncio.get_running_loop()
    if sys.platform == "win32":
        server = _PipeListener(loop, where, factory)
        try:
            server.start()
        except BaseException:
            server.close()
            raise
        return server
    with contextlib.suppress(FileNotFoundError):
        os.unlink(where)
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.bind(where)
        # the folder is private already; the socket is made so too before anyone is heard
        os.chmod(where, 0o600)
        sock.listen(16)
        sock.setblocking(False)
    except OSError:
        sock.close()
        raise
    return _UnixListener(loop, sock, factory)


class _UnixListener:
    def __init__(
        self, loop: asyncio.AbstractEventLoop, sock: socket.socket, factory: ProtocolFactory
    ) -> None:
        self.sock = sock
        self.server: asyncio.AbstractServer | None = None
        self.closed = False
        self.task = loop.create_task(loop.create_unix_server(factory, sock=sock))
        self.task.add_done_callback(self._serving)

    def _serving(self, task: asyncio.Task[asyncio.AbstractServer]) -> None:
        if task.cancelled():
            return
        exc = task.exception()
        if exc is not None:
            log.warning("cannot serve the socket: %s", exc)
            return
        self.server = task.result()
        if self.closed:
            self.server.close()

    def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        if self.server is not None:
            self.server.close()
        else:
            self.task.cancel()
        with contextlib.suppress(OSError):
            self.sock.close()


async def connect(where: str, factory: ProtocolFactory, timeout: float) -> asyncio.Transport:
    """A connection to the server listening at ``where``, once the kernel has said it runs
    as this user (``PermissionError`` if not, ``OSError`` or ``TimeoutError`` if it
    cannot be reached)."""
    loop = asyncio.get_running_loop()
    if sys.platform == "win32":
        return await asyncio.wait_for(_connect_pipe(loop, where, factory), timeout)
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.setblocking(False)
        await asyncio.wait_for(loop.sock_connect(sock, where), timeout)
        if not peer.socket_is_me(sock):
            uid = peer.peer_uid(sock)
            raise PermissionError(
                f"the server at {where} runs as uid {uid}, not as this user"
                if uid is not None
                else f"cannot tell which user runs the server at {where}"
            )
        transport, _ = await loop.create_unix_connection(factory, sock=sock)
    except BaseException:
        sock.close()
        raise
    assert isinstance(transport, asyncio.Transport)
    return transport


if sys.platform == "win32":
    import ctypes
    from asyncio import windows_utils
    from ctypes import wintypes

    from steadyhand.system import winsec

    _kernel32 = ctypes.WinDLL("kernel32", use_last_error=True)
    _CreateNamedPipeW = _kernel32.CreateNamedPipeW
    _CreateNamedPipeW.restype = wintypes.HANDLE
    _CreateNamedPipeW.argtypes = [
        wintypes.LPCWSTR,
        wintypes.DWORD,
        wintypes.DWORD,
        wintypes.DWORD,
        wintypes.DWORD,
        wintypes.DWORD,
        wintypes.DWORD,
        ctypes.c_void_p,
    ]
    _CreateFileW = _kernel32.CreateFileW
    _CreateFileW.restype = wintypes.HANDLE
    _CreateFileW.argtypes = [
        wintypes.LPCWSTR,
        wintypes.DWORD,
        wintypes.DWORD,
        ctypes.c_void_p,
        wintypes.DWORD,
        wintypes.DWORD,
        wintypes.HANDLE,
    ]
    _CloseHandle = _kernel32.CloseHandle
    _CloseHandle.restype = wintypes.BOOL
    _CloseHandle.argtypes = [wintypes.HANDLE]

    _INVALID_HANDLE = ctypes.c_void_p(-1).value
    _PIPE_ACCESS_DUPLEX = 0x3
    _FILE_FLAG_OVERLAPPED = 0x40000000
    _FILE_FLAG_FIRST_PIPE_INSTANCE = 0x00080000
    _PIPE_TYPE_BYTE = 0x0
    _PIPE_REJECT_REMOTE_CLIENTS = 0x8
    _PIPE_UNLIMITED_INSTANCES = 255
    _GENERIC_READ = 0x80000000
    _GENERIC_WRITE = 0x40000000
    _OPEN_EXISTING = 3
    _SECURITY_SQOS_PRESENT = 0x00100000
    _SECURITY_IDENTIFICATION = 0x00010000
    _ERROR_PIPE_BUSY = 231

    def _proactor(loop: asyncio.AbstractEventLoop) -> Any:
        """The proactor of Windows' default event loop: pipes are served through it."""
        found = getattr(loop, "_proactor", None)
        if found is None:
            raise OSError("named pipes need asyncio's proactor event loop")
        return found

    def _make_transport(
        loop: asyncio.AbstractEventLoop, pipe: windows_utils.PipeHandle, protocol: asyncio.Protocol
    ) -> asyncio.Transport:
        make = getattr(loop, "_make_duplex_pipe_transport", None)
        if make is None:
            raise OSError("named pipes need asyncio's proactor event loop")
        transport = make(pipe, protocol, extra={"pipe": pipe})
        assert isinstance(transport, asyncio.Transport)
        return transport

    class _PipeListener:
        """Instances of one named pipe, each offered in turn to the next client.

        There is always one instance waiting, so a client never finds the name missing
        while another is being served. The first is made with
        ``FILE_FLAG_FIRST_PIPE_INSTANCE``: if another process holds the name already,
        listening fails instead of joining it.
        """

        def __init__(
            self, loop: asyncio.AbstractEventLoop, name: str, factory: ProtocolFactory
        ) -> None:
            self.loop = loop
            self.name = name
            self.factory = factory
            self.closed = False
            self.waiting: windows_utils.PipeHandle | None = None
            self.accepting: asyncio.Future[Any] | None = None
            self.sd = winsec.SecurityDescriptor(
                winsec.private_sddl(winsec.current_sid(), folder=False)
            )
            self.first = True

        def _instance(self) -> windows_utils.PipeHandle:
            flags = _PIPE_ACCESS_DUPLEX | _FILE_FLAG_OVERLAPPED
            if self.first:
                flags |= _FILE_FLAG_FIRST_PIPE_INSTANCE
            handle = _CreateNamedPipeW(
                self.name,
                flags,
                _PIPE_TYPE_BYTE | _PIPE_REJECT_REMOTE_CLIENTS,
                _PIPE_UNLIMITED_INSTANCES,
                PIPE_BUFFER,
                PIPE_BUFFER,
                0,
                ctypes.byref(self.sd.attributes),
            )
            if handle is None or handle == _INVALID_HANDLE:
                raise ctypes.WinError(ctypes.get_last_error())
            self.first = False
            return windows_utils.PipeHandle(handle)

        def start(self) -> None:
            self.waiting = self._instance()  # raises when the name is taken
            self._offer()

        def _offer(self) -> None:
            if self.closed or self.waiting is None:
                return
            pipe = self.waiting
            try:
                self.accepting = _proactor(self.loop).accept_pipe(pipe)
            except OSError as exc:
                log.warning("cannot wait for a client on %s: %s", self.name, exc)
                return
            assert self.accepting is not None
            self.accepting.add_done_callback(lambda f: self._accepted(f, pipe))

        def _accepted(self, done: asyncio.Future[Any], pipe: windows_utils.PipeHandle) -> None:
            self.accepting = None
            if self.closed or done.cancelled():
                pipe.close()
                return
            try:
                self.waiting = self._instance()
            except OSError as exc:
                log.warning("cannot make another instance of %s: %s", self.name, exc)
                self.waiting = None
            if done.exception() is not None:
                pipe.close()
            else:
                _make_transport(self.loop, pipe, self.factory())
            self._offer()

        def close(self) -> None:
            if self.closed:
                return
            self.closed = True
            if self.accepting is not None:
                self.accepting.cancel()
            if self.waiting is not None:
                self.waiting.close()
                self.waiting = None
            self.sd.free()

    async def _connect_pipe(
        loop: asyncio.AbstractEventLoop, name: str, factory: ProtocolFactory
    ) -> asyncio.Transport:
        while True:
            handle = _CreateFileW(
                name,
                _GENERIC_READ | _GENERIC_WRITE,
                0,
                None,
                _OPEN_EXISTING,
                _FILE_FLAG_OVERLAPPED | _SECURITY_SQOS_PRESENT | _SECURITY_IDENTIFICATION,
                None,
            )
            if handle is not None and handle != _INVALID_HANDLE:
                break
            error = ctypes.get_last_error()
            if error != _ERROR_PIPE_BUSY:
                raise ctypes.WinError(error)
            await asyncio.sleep(0.05)  # every instance is serving someone: wait for one
        if not peer.pipe_peer_is_me(handle, peer_is_server=True):
            _CloseHandle(handle)
            raise PermissionError(f"the server of {name} does not run as this user")
        pipe = windows_utils.PipeHandle(handle)
        try:
            return _make_transport(loop, pipe, factory())
        except BaseException:
            pipe.close()
            raise

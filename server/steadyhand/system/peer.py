"""Who is at the other end of a local connection, asked of the kernel, never of the peer.

- Linux: ``SO_PEERCRED`` (a ``struct ucred``: pid, uid, gid).
- macOS: ``LOCAL_PEERCRED`` at level ``SOL_LOCAL`` (a ``struct xucred``: version, uid,
  groups), else ``getpeereid``; other BSDs: ``getpeereid``.
- Windows: a named pipe's other process (``GetNamedPipeServerProcessId`` or
  ``GetNamedPipeClientProcessId``), then the user that process runs as (its token's SID).

:func:`is_me` answers the one question the rendezvous asks: is the peer this same user?
When the answer cannot be had it is no: a peer that cannot be identified is not trusted.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import socket
import struct
import sys
from typing import Any

#: ``struct ucred`` (Linux): pid_t pid; uid_t uid; gid_t gid.
UCRED = struct.Struct("=iII")

#: macOS's ``SOL_LOCAL`` level and its ``LOCAL_PEERCRED`` option (sys/un.h).
SOL_LOCAL = 0
LOCAL_PEERCRED = 1
#: ``struct xucred`` (sys/ucred.h): u_int cr_version; uid_t cr_uid; short cr_ngroups;
#: gid_t cr_groups[16] (NGROUPS), with the padding a C compiler puts after the short.
XUCRED = struct.Struct("=IIh2x16I")
XUCRED_VERSION = 0
NGROUPS = 16


def decode_ucred(raw: bytes) -> int | None:
    """The uid in a ``struct ucred`` (None if ``raw`` is too short to hold one)."""
    if len(raw) < UCRED.size:
        return None
    _pid, uid, _gid = UCRED.unpack_from(raw)
    return int(uid)


def decode_xucred(raw: bytes) -> int | None:
    """The uid in a ``struct xucred`` (None if ``raw`` is not one of the known layout:
    too short, another version, more groups than it can hold)."""
    if len(raw) < XUCRED.size:
        return None
    version, uid, ngroups, *_groups = XUCRED.unpack_from(raw)
    if version != XUCRED_VERSION or not 0 <= ngroups <= NGROUPS:
        return None
    return int(uid)


def _getpeereid(fd: int) -> int | None:
    """``getpeereid(3)`` through the C library (BSDs and macOS); None without it."""
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
        call = libc.getpeereid
    except (OSError, AttributeError):
        return None
    uid, gid = ctypes.c_uint32(), ctypes.c_uint32()
    call.argtypes = [ctypes.c_int, ctypes.POINTER(ctypes.c_uint32), ctypes.POINTER(ctypes.c_uint32)]
    call.restype = ctypes.c_int
    if call(fd, ctypes.byref(uid), ctypes.byref(gid)) != 0:
        return None
    return int(uid.value)


def peer_uid(sock: Any) -> int | None:
    """The effective uid of the process at the other end of a Unix domain socket
    (``sock``: a socket or asyncio's wrapper of one); None when it cannot be told."""
    if sys.platform == "win32":
        return None
    if sys.platform == "linux":
        try:
            raw = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, UCRED.size)
        except OSError:
            return None
        return decode_ucred(raw)
    if sys.platform == "darwin":
        try:
            raw = sock.getsockopt(SOL_LOCAL, LOCAL_PEERCRED, XUCRED.size)
        except OSError:
            raw = b""
        uid = decode_xucred(raw)
        if uid is not None:
            return uid
    return _getpeereid(sock.fileno())


def my_uid() -> int | None:
    """The effective uid of this process (None on Windows, which has SIDs instead)."""
    if sys.platform == "win32":
        return None
    return os.geteuid()


def socket_is_me(sock: Any) -> bool:
    """Whether the process at the other end of Unix domain socket ``sock`` runs as this
    user (no when that cannot be told)."""
    if sys.platform == "win32":
        return False
    uid = peer_uid(sock)
    return uid is not None and uid == os.geteuid()


if sys.platform == "win32":
    from ctypes import wintypes

    from steadyhand.system import winsec

    _kernel32 = ctypes.WinDLL("kernel32", use_last_error=True)
    _GetNamedPipeServerProcessId = _kernel32.GetNamedPipeServerProcessId
    _GetNamedPipeServerProcessId.restype = wintypes.BOOL
    _GetNamedPipeServerProcessId.argtypes = [wintypes.HANDLE, ctypes.POINTER(wintypes.ULONG)]
    _GetNamedPipeClientProcessId = _kernel32.GetNamedPipeClientProcessId
    _GetNamedPipeClientProcessId.restype = wintypes.BOOL
    _GetNamedPipeClientProcessId.argtypes = [wintypes.HANDLE, ctypes.POINTER(wintypes.ULONG)]

    def pipe_peer_is_me(handle: int, *, peer_is_server: bool) -> bool:
        """Whether the process at the other end of the named pipe ``handle`` runs as this
        user: the server's process when this is the client (``peer_is_server``), the
        client's when this is the server."""
        pid = wintypes.ULONG()
        ask = _GetNamedPipeServerProcessId if peer_is_server else _GetNamedPipeClientProcessId
        if not ask(handle, ctypes.byref(pid)):
            return False
        sid = winsec.process_sid(pid.value)
        return sid is not None and sid == winsec.current_sid()

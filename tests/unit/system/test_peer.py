"""Who is at the other end of a local connection: the kernel's records decoded (Linux's
``struct ucred``, macOS's ``struct xucred``), the real answer on this system, another
user played for real, and what an identity that cannot be told comes to (no trust)."""

from __future__ import annotations

import asyncio
import os
import shutil
import socket
import struct
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from steadyhand.system import local_socket, peer

uids = st.integers(min_value=0, max_value=2**32 - 1)


@given(st.integers(min_value=-(2**31), max_value=2**31 - 1), uids, uids)
def test_a_ucred_gives_its_uid(pid: int, uid: int, gid: int) -> None:
    raw = struct.pack("=iII", pid, uid, gid)
    assert peer.decode_ucred(raw) == uid
    assert peer.decode_ucred(raw[:-1]) is None


def test_an_xucred_has_the_layout_of_sys_ucred_h() -> None:
    # u_int cr_version; uid_t cr_uid; short cr_ngroups; (2 bytes of padding) gid_t[16]
    assert peer.XUCRED.size == 4 + 4 + 2 + 2 + 16 * 4 == 76
    assert peer.NGROUPS == 16 and peer.SOL_LOCAL == 0 and peer.LOCAL_PEERCRED == 1


@given(uids, st.lists(uids, max_size=16))
def test_an_xucred_gives_its_uid(uid: int, groups: list[int]) -> None:
    padded = groups + [0] * (16 - len(groups))
    raw = struct.pack("=IIh2x16I", 0, uid, len(groups), *padded)
    assert peer.decode_xucred(raw) == uid
    assert peer.decode_xucred(raw + b"\0" * 8) == uid  # a longer buffer is read from its start
    assert peer.decode_xucred(raw[:-1]) is None  # too short
    other_version = struct.pack("=IIh2x16I", 1, uid, len(groups), *padded)
    assert peer.decode_xucred(other_version) is None
    too_many = struct.pack("=IIh2x16I", 0, uid, 17, *padded)
    assert peer.decode_xucred(too_many) is None
    negative = struct.pack("=IIh2x16I", 0, uid, -1, *padded)
    assert peer.decode_xucred(negative) is None


@pytest.mark.skipif(sys.platform == "win32", reason="Unix domain sockets")
def test_the_peer_of_a_socket_pair_is_this_user() -> None:
    a, b = socket.socketpair(socket.AF_UNIX)
    with a, b:
        assert peer.peer_uid(a) == os.geteuid() == peer.my_uid()
        assert peer.socket_is_me(b)


@pytest.mark.skipif(sys.platform != "darwin", reason="macOS only: the kernel here is Linux")
def test_local_peercred_names_this_user_on_macos() -> None:
    """On a macOS kernel: ``LOCAL_PEERCRED`` answers an xucred of version 0 naming this
    user (an emulated macOS on Linux cannot judge this: the option is Linux's IP_TOS)."""
    a, b = socket.socketpair(socket.AF_UNIX)
    with a, b:
        raw = a.getsockopt(peer.SOL_LOCAL, peer.LOCAL_PEERCRED, peer.XUCRED.size)
        assert peer.decode_xucred(raw) == os.geteuid()


@pytest.mark.skipif(sys.platform != "linux", reason="the emulation runs on a Linux kernel")
def test_an_emulated_macos_cannot_tell_the_peer_so_trusts_none(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """With ``sys.platform`` set to darwin on this Linux kernel, LOCAL_PEERCRED is not
    understood and glibc has no getpeereid: the peer cannot be told, and is not
    trusted (the macOS branch runs, and fails closed)."""
    a, b = socket.socketpair(socket.AF_UNIX)
    monkeypatch.setattr(sys, "platform", "darwin")
    with a, b:
        assert peer.peer_uid(a) is None
        assert not peer.socket_is_me(a)


# -- another user -------------------------------------------------------------------------

NOBODY = 65534
AS_NOBODY = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]

_LISTEN_AS_NOBODY = r"""
import os, socket, sys
s = socket.socket(socket.AF_UNIX)
s.bind(sys.argv[1])
os.chmod(sys.argv[1], 0o600)
os.setgid(65534)
os.setuid(65534)
s.listen(4)
print("ready", flush=True)
while True:
    conn, _ = s.accept()
    data = conn.recv(100)
    with open(sys.argv[2], "ab") as fh:
        fh.write(data or b"<closed>")
    conn.close()
"""


@pytest.fixture
def open_folder() -> Iterator[Path]:
    """A folder the user nobody may enter (pytest's own is root's alone)."""
    if sys.platform == "win32" or os.geteuid() != 0:
        pytest.skip("needs root to play another user")
    folder = Path(tempfile.mkdtemp(prefix="steadyhand-peer-"))
    os.chmod(folder, 0o755)
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def nobodys_server(open_folder: Path) -> Iterator[tuple[Path, Path]]:
    """A socket file of this user's (made before the process dropped its rights) with a
    process of uid 65534 listening on it."""
    sock, log = open_folder / "s.sock", open_folder / "heard"
    log.touch()
    os.chown(log, NOBODY, NOBODY)
    proc = subprocess.Popen(
        [sys.executable, "-c", _LISTEN_AS_NOBODY, str(sock), str(log)],
        stdout=subprocess.PIPE,
        cwd="/",
    )
    assert proc.stdout is not None and proc.stdout.readline() == b"ready\n"
    try:
        yield sock, log
    finally:
        proc.kill()
        proc.wait(timeout=10)


def test_the_kernel_names_another_user_at_the_other_end(nobodys_server: tuple[Path, Path]) -> None:
    sock, _ = nobodys_server
    assert os.stat(sock).st_uid == os.geteuid()  # the file says nothing of who listens
    with socket.socket(socket.AF_UNIX) as s:
        s.connect(str(sock))
        assert peer.peer_uid(s) == NOBODY
        assert not peer.socket_is_me(s)


def test_connect_refuses_a_server_of_another_user_before_a_byte_is_sent(
    nobodys_server: tuple[Path, Path],
) -> None:
    sock, heard = nobodys_server

    async def run() -> None:
        with pytest.raises(PermissionError, match="uid 65534"):
            await local_socket.connect(str(sock), asyncio.Protocol, timeout=5)

    asyncio.run(run())
    for _ in range(50):
        if heard.read_bytes():
            break
        time.sleep(0.05)
    assert heard.read_bytes() == b"<closed>"  # it was connected to, and told nothing


def test_a_listener_refuses_a_client_of_another_user(open_folder: Path) -> None:
    """The listening side's check: a client of uid 65534 is not this user."""

    async def run() -> tuple[bool, bool]:
        seen: list[bool] = []

        class Check(asyncio.Protocol):
            def connection_made(self, transport: asyncio.BaseTransport) -> None:
                seen.append(local_socket.peer_is_me(transport))
                transport.close()

        where = str(open_folder / "l.sock")
        listener = local_socket.listen(where, Check)
        os.chmod(where, 0o777)
        code = f"import socket; s = socket.socket(socket.AF_UNIX); s.connect({where!r})"
        await asyncio.to_thread(
            subprocess.run,
            [*AS_NOBODY, "/usr/bin/python3", "-c", code],
            check=True,
            timeout=30,
        )
        mine = await local_socket.connect(where, asyncio.Protocol, timeout=5)
        for _ in range(100):
            if len(seen) == 2:
                break
            await asyncio.sleep(0.02)
        mine.close()
        listener.close()
        return seen[0], seen[1]

    if not os.path.exists("/usr/bin/python3"):
        pytest.skip("needs a Python the user nobody may run")
    other, me = asyncio.run(run())
    assert other is False and me is True


@pytest.mark.skipif(sys.platform != "win32", reason="Windows only: named pipes")
def test_a_named_pipe_round_trip_checks_both_ends_on_windows() -> None:
    async def run() -> bytes:
        got: asyncio.Future[bytes] = asyncio.get_running_loop().create_future()

        class Echo(asyncio.Protocol):
            def connection_made(self, transport: asyncio.BaseTransport) -> None:
                assert local_socket.peer_is_me(transport)
                self.transport = transport

            def data_received(self, data: bytes) -> None:
                assert isinstance(self.transport, asyncio.WriteTransport)
                self.transport.write(data)

        class Client(asyncio.Protocol):
            def data_received(self, data: bytes) -> None:
                if not got.done():
                    got.set_result(data)

        where = local_socket.address("", os.getpid())
        listener = local_socket.listen(where, Echo)
        transport = await local_socket.connect(where, Client, timeout=5)
        transport.write(b"ping\n")
        data = await asyncio.wait_for(got, 5)
        transport.close()
        listener.close()
        return data

    assert asyncio.run(run()) == b"ping\n"

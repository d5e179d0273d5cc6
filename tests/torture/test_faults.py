"""Disk faults at each system call of the write path, and a real full file system.

Faults are injected inside a real server through its I/O seam (``STEADYHAND_FAULTS``,
see ``steadyhand.fs.syscalls``). Every failing case must give ``io_error`` with the
original bytes, mode and folder listing untouched, no temp file, the session's cache
unchanged (a repeated read is still "unchanged"), and a working next call.
"""

from __future__ import annotations

import errno
import os
import shutil
import stat
import subprocess
from pathlib import Path

import pytest

from steadyhand.fs.atomic import TEMP_PATTERN
from steadyhand.protocol.commands import EDIT, READ, WRITE
from tests.torture.harness import Server, record

ERRNOS = ("ENOSPC", "EACCES", "EROFS", "EIO")
#: Calls whose failure must abort the write (the others are after the commit or optional).
FATAL = ("open", "write", "fchmod", "fsync", "close", "rename")
ORIGINAL = b"alpha\r\nbeta \xe2\x80\x9cquoted\xe2\x80\x9d\r\ngamma\r\n"


def _listing(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


async def _expect_io_error(server: Server, ws: Path, op: str, n: int) -> dict[str, object]:
    f = ws / "f.txt"
    if op == "edit":
        r = await server.call(EDIT, file_path="f.txt", old_string="beta", new_string=f"B{n}")
    elif op == "write":
        r = await server.call(WRITE, file_path="f.txt", content=f"whole {n}\n")
    else:  # create a new file in new folders
        r = await server.call(WRITE, file_path=f"new{n}/deep/g.txt", content="new\n")
    assert r["ok"] is False and r["error"] == "io_error", r
    assert "exactly as it was" in str(r["message"])
    assert f.read_bytes() == ORIGINAL
    assert stat.S_IMODE(f.stat().st_mode) == 0o640
    assert _listing(ws) == ["f.txt"], _listing(ws)
    again = await server.call(READ, file_path="f.txt")
    assert again["ok"] and again["type"] == "file_unchanged", again
    return r


@pytest.mark.parametrize("call", [*FATAL, "open_dir", "mkdir"])
async def test_fault_at_each_call(call: str, tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    f = ws / "f.txt"
    f.write_bytes(ORIGINAL)
    f.chmod(0o640)
    spec = ",".join(f"{call}:{e}:1" for e in ERRNOS)
    server = await Server.start(ws, state_dir=tmp_path / "state", env={"STEADYHAND_FAULTS": spec})
    faults = 0
    try:
        first = await server.call(READ, file_path="f.txt")
        assert first["ok"], first
        ops = ["create"] * 4 if call == "mkdir" else ["edit", "write", "create", "edit"]
        for n, (op, name) in enumerate(zip(ops, ERRNOS, strict=True)):
            r = await _expect_io_error(server, ws, op, n)
            assert r["errno"] == getattr(errno, name), r
            faults += 1
        # Every planned fault has fired: the next calls work.
        ok = await server.call(EDIT, file_path="f.txt", old_string="beta", new_string="BETA")
        assert ok["ok"], ok
        assert f.read_bytes() == ORIGINAL.replace(b"beta", b"BETA")
        assert stat.S_IMODE(f.stat().st_mode) == 0o640
        made = await server.call(WRITE, file_path="n/m/new.txt", content="fine\n")
        assert made["ok"] and (ws / "n" / "m" / "new.txt").read_text() == "fine\n", made
    finally:
        await server.stop()
    record("disk faults (injected)", call=call, faults=faults, losses=0)


async def test_short_writes(tmp_path: Path) -> None:
    """A short write is continued (the file gets every byte); one followed by ENOSPC fails
    cleanly."""
    ws = tmp_path / "ws"
    ws.mkdir()
    f = ws / "f.txt"
    f.write_bytes(ORIGINAL)
    f.chmod(0o640)
    # n counts the uses of a call that no earlier item fired on: short at the 1st and
    # 3rd write(2), ENOSPC at the 4th.
    spec = "write:short:1,write:short:2,write:ENOSPC:2"
    server = await Server.start(ws, state_dir=tmp_path / "state", env={"STEADYHAND_FAULTS": spec})
    try:
        assert (await server.call(READ, file_path="f.txt"))["ok"]
        big = "x" * 100_000 + "\n"
        r = await server.call(WRITE, file_path="f.txt", content=big)
        assert r["ok"], r
        assert f.read_bytes() == big.encode()
        r2 = await server.call(WRITE, file_path="f.txt", content="y\n")
        assert r2["error"] == "io_error" and f.read_bytes() == big.encode(), r2
        assert _listing(ws) == ["f.txt"]
        r3 = await server.call(WRITE, file_path="f.txt", content="z\n")
        assert r3["ok"] and f.read_bytes() == b"z\n", r3
    finally:
        await server.stop()
    record("disk faults (injected)", call="write (short)", faults=3, losses=0)


async def test_faults_after_the_commit(tmp_path: Path) -> None:
    """Failures that come after the new bytes are in place (or of optional calls) do not
    fail the write; an old copy left behind is removed when the server exits (or, after a
    crash, at the next start)."""
    ws = tmp_path / "ws"
    ws.mkdir()
    f = ws / "f.txt"
    f.write_bytes(ORIGINAL)
    state = tmp_path / "state"
    spec = "fchown:EPERM:1,unlink:EIO:1,fsync_dir:EIO:1"
    server = await Server.start(ws, state_dir=state, env={"STEADYHAND_FAULTS": spec})
    try:
        assert (await server.call(READ, file_path="f.txt"))["ok"]
        r = await server.call(EDIT, file_path="f.txt", old_string="gamma", new_string="G")
        assert r["ok"], r
        assert f.read_bytes() == ORIGINAL.replace(b"gamma", b"G")
        left = [n for n in _listing(ws) if TEMP_PATTERN.match(n)]
        assert len(left) == 1  # the displaced old copy whose unlink failed
    finally:
        await server.stop()
    server = await Server.start(ws, state_dir=state)
    try:
        assert _listing(ws) == ["f.txt"]
    finally:
        await server.stop()
    record("disk faults (injected)", call="fchown+unlink+fsync_dir", faults=3, losses=0)


def _mount_tmpfs(where: Path) -> str | None:
    """Mount a 1 MiB tmpfs at ``where``; the reason it cannot be done, or None."""
    if os.geteuid() != 0:
        return "a real full file system needs root to mount a 1 MiB tmpfs"
    if shutil.which("mount") is None:
        return "no mount command on this machine"
    where.mkdir()
    proc = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(where)],
        capture_output=True,
        text=True,
        check=False,
    )
    if proc.returncode != 0:
        return f"cannot mount a tmpfs here: {proc.stderr.strip() or proc.returncode}"
    return None


async def test_real_full_filesystem(tmp_path: Path) -> None:
    mnt = tmp_path / "small"
    reason = _mount_tmpfs(mnt)
    if reason:
        pytest.skip(reason)
    server: Server | None = None
    try:
        ws = mnt / "ws"
        ws.mkdir()
        f = ws / "f.txt"
        original = ("line\n" * 20_000).encode()  # 100 kB
        f.write_bytes(original)
        f.chmod(0o640)
        opts = {"maxReadBytes": 1 << 20, "maxReadTokens": 1 << 30, "defaultReadLines": 1 << 20}
        server = await Server.start(ws, state_dir=tmp_path / "state", options=opts)
        assert (await server.call(READ, file_path="f.txt"))["ok"]
        # Fill the file system to the last byte.
        filler = mnt / "filler"
        fd = os.open(filler, os.O_WRONLY | os.O_CREAT, 0o600)
        try:
            for block in (65536, 4096, 1):
                try:
                    while os.write(fd, b"\0" * block):
                        pass
                except OSError as exc:
                    assert exc.errno == errno.ENOSPC
        finally:
            os.close(fd)
        failures = 0
        for content in ("line\n" * 20_001, "short\n"):
            r = await server.call(WRITE, file_path="f.txt", content=content)
            assert r["error"] == "io_error" and r["errno"] == errno.ENOSPC, r
            assert f.read_bytes() == original and _listing(ws) == ["f.txt"]
            failures += 1
        r = await server.call(
            EDIT, file_path="f.txt", old_string="line", new_string="row", replace_all=True
        )
        assert r["error"] == "io_error", r
        c = await server.call(WRITE, file_path="a/b/new.txt", content="x" * 5000)
        assert c["error"] == "io_error" and _listing(ws) == ["f.txt"], c
        failures += 2
        again = await server.call(READ, file_path="f.txt")
        assert again["type"] == "file_unchanged", again
        # Space again: the same session goes on without a re-read.
        filler.unlink()
        r = await server.call(WRITE, file_path="f.txt", content="short\n")
        assert r["ok"] and f.read_bytes() == b"short\n", r
        assert stat.S_IMODE(f.stat().st_mode) == 0o640
        record("disk faults (full tmpfs)", call="ENOSPC for real", faults=failures, losses=0)
    finally:
        if server is not None:
            await server.stop()
        subprocess.run(["umount", str(mnt)], check=False)

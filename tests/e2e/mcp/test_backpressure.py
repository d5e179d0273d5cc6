"""A host that stops reading its answers slows the work down; it never makes a server's
memory grow, and never stops a server from hearing that it must end.

Attached, the answers pass from the editor's server through the socket to ``steadyhand
mcp`` and its stdout: each hop holds a bounded backlog, then stops reading from the one
before it, down to the host's own writes, which wait in the kernel.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.mcp.helpers import SERVER, LspServer

#: Reads sent by a host that does not read the answers.
READS = 1000

#: What ``steadyhand mcp`` may hold in all (it takes about 60 MiB at rest).
MCP_BUDGET = 110 << 20


def _rss(pid: int) -> int:
    with open(f"/proc/{pid}/status") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS")


def _cpu(pid: int) -> int:
    with open(f"/proc/{pid}/stat") as fh:
        fields = fh.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])  # utime + stime, in ticks


def _settle(*pids: int, quiet: float = 1.5, limit: float = 90) -> None:
    """Wait until none of ``pids`` has used CPU for ``quiet`` seconds."""
    end = time.monotonic() + limit
    last = [_cpu(p) for p in pids]
    still = time.monotonic()
    while time.monotonic() < end:
        time.sleep(0.25)
        now = [_cpu(p) for p in pids]
        if now != last:
            last, still = now, time.monotonic()
        elif time.monotonic() - still >= quiet:
            return


def _big_file(ws: Path) -> Path:
    f = ws / "big.txt"
    f.write_text("".join(f"line {i:05d} of a file that answers are made of\n" for i in range(1500)))
    return f


def _start(ws: Path, *args: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [*SERVER, *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        cwd=ws,
    )


def _line(msg: dict[str, Any]) -> bytes:
    return json.dumps(msg).encode() + b"\n"


def _flood(proc: subprocess.Popen[bytes], path: Path, count: int) -> threading.Thread:
    """From a thread, the handshake and ``count`` reads, written at once as a busy host
    does, whose writes wait once the server stops reading; no answer is ever read."""
    init = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t"}}
    lines = [
        _line({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": init}),
        _line({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    ]
    for n in range(1, count + 1):
        # offsets alternate: a read of the very lines read last is answered in a line
        args = {"file_path": str(path), "offset": 1 + n % 2}
        call = {"name": "read_file", "arguments": args}
        lines.append(_line({"jsonrpc": "2.0", "id": n, "method": "tools/call", "params": call}))

    def send() -> None:
        assert proc.stdin is not None
        try:
            proc.stdin.write(b"".join(lines))
            proc.stdin.flush()
        except (BrokenPipeError, ValueError):
            return

    thread = threading.Thread(target=send, daemon=True)
    thread.start()
    return thread


@pytest.mark.slow
def test_a_host_that_does_not_read_cannot_grow_the_editors_memory(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    big = _big_file(ws)
    editor = LspServer(ws)
    _settle(editor.proc.pid, quiet=0.5)
    before = _rss(editor.proc.pid)
    mcp = _start(ws, "--attach", "require")
    try:
        sender = _flood(mcp, big, READS)
        time.sleep(1)
        _settle(editor.proc.pid, mcp.pid)
        grew, used = _rss(editor.proc.pid) - before, _rss(mcp.pid)
        # each answer is about 100 KB: keeping them all would be about 100 MB
        assert grew < 40 << 20, f"the editor's server grew by {grew >> 20} MiB"
        assert used < MCP_BUDGET, f"steadyhand mcp uses {used >> 20} MiB"
        # the host reads at last: every answer comes, in full, none lost
        assert mcp.stdout is not None
        assert json.loads(mcp.stdout.readline())["id"] == 0
        seen = set()
        while len(seen) < READS:
            answer = json.loads(mcp.stdout.readline())
            assert answer["result"]["structuredContent"]["ok"], answer
            seen.add(answer["id"])
        sender.join(30)
        assert seen == set(range(1, READS + 1))
    finally:
        mcp.kill()
        mcp.wait(timeout=10)
        editor.kill()


@pytest.mark.slow
def test_a_host_that_does_not_read_can_still_end_the_server(tmp_path: Path) -> None:
    """Standalone: the answers back up, the server takes no more requests, and it still
    hears SIGTERM (its event loop never blocks on a write)."""
    ws = tmp_path / "ws"
    ws.mkdir()
    big = _big_file(ws)
    mcp = _start(ws, "--attach", "never")
    try:
        _flood(mcp, big, READS)
        time.sleep(1)
        _settle(mcp.pid)
        used = _rss(mcp.pid)
        assert used < MCP_BUDGET, f"steadyhand mcp uses {used >> 20} MiB"
        start = time.monotonic()
        os.kill(mcp.pid, signal.SIGTERM)
        mcp.wait(timeout=20)
        assert time.monotonic() - start < 15
    finally:
        if mcp.poll() is None:
            mcp.kill()
            mcp.wait(timeout=10)

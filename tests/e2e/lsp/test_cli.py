"""The command line: --version, and serving LSP over TCP as well as stdio."""

from __future__ import annotations

import asyncio
import socket
import subprocess
import sys
from pathlib import Path

from lsprotocol import types
from pygls.lsp.client import LanguageClient

from steadyhand import __version__
from steadyhand.protocol.commands import READ


def test_version() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "steadyhand", "--version"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert out.stdout.strip() == f"steadyhand {__version__}"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def test_tcp_serving(tmp_path: Path) -> None:
    port = _free_port()
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "steadyhand",
            "serve",
            "--tcp",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
        ],
        stderr=subprocess.DEVNULL,
    )
    try:
        (tmp_path / "t.txt").write_text("over tcp\n")
        client = LanguageClient("tcp-test", "1")
        # pygls serves one TCP client per process, so the first connection must be ours
        for _ in range(100):
            try:
                await client.start_tcp("127.0.0.1", port)
                break
            except OSError:
                await asyncio.sleep(0.1)
        await client.initialize_async(
            types.InitializeParams(
                capabilities=types.ClientCapabilities(),
                workspace_folders=[types.WorkspaceFolder(uri=tmp_path.as_uri(), name="t")],
            )
        )
        client.initialized(types.InitializedParams())
        result = await client.workspace_execute_command_async(
            types.ExecuteCommandParams(command=READ, arguments=[{"file_path": "t.txt"}])
        )
        assert result["ok"] and "over tcp" in result["message"]
        await client.shutdown_async(None)
        client.exit(None)
        await client.stop()  # type: ignore[no-untyped-call]
    finally:
        proc.terminate()
        proc.wait(timeout=10)

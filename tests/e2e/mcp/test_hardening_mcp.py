"""The MCP face holds the same lines as the language server: a root URI naming another
host is no local folder, and a FIFO in place of a server's descriptor is never opened."""

from __future__ import annotations

import contextlib
import os
import threading
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from mcp import ClientSession, types
from mcp.client.stdio import stdio_client

from tests.e2e.mcp.helpers import server_params, structured


async def call(client: Any, tool: str, **arguments: Any) -> dict[str, Any]:
    return structured(await client.call_tool(tool, arguments))


@contextlib.asynccontextmanager
async def session_with_root(cwd: Path, uri: str, env: dict[str, str]) -> AsyncIterator[Any]:
    listed = types.ListRootsResult(roots=[types.Root(uri=uri, name="r")])  # type: ignore[arg-type]

    async def callback(context: Any) -> types.ListRootsResult:
        return listed

    with open(os.devnull, "w") as quiet:
        async with (
            stdio_client(server_params(cwd, env=env), errlog=quiet) as (read, write),
            ClientSession(read, write, list_roots_callback=callback) as session,
        ):
            await session.initialize()
            yield session


def _env(tmp_path: Path) -> dict[str, str]:
    run = tmp_path / "run"
    run.mkdir(mode=0o700)
    return {"STEADYHAND_RUNTIME_DIR": str(run), "XDG_STATE_HOME": str(tmp_path / "state")}


async def test_a_root_naming_another_host_is_no_local_folder(tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    (b / "f.txt").write_text("in b\n")
    remote = f"file://otherhost{b.resolve()}"
    async with session_with_root(a, remote, _env(tmp_path)) as s:
        r = await call(s, "read_file", file_path=str(b / "f.txt"))
        assert r["ok"] is False and r["error"] == "outside_workspace", r
        (a / "g.txt").write_text("in a\n")  # the folder it was started in stays the root
        assert (await call(s, "read_file", file_path=str(a / "g.txt")))["ok"]


async def test_a_fifo_in_place_of_a_server_descriptor_is_never_opened(tmp_path: Path) -> None:
    """The MCP face lists the running servers from their descriptors (``*.json`` in a
    private folder): a FIFO put there, with a writer waiting on it, is skipped unopened."""
    env = _env(tmp_path)
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "f.txt").write_text("x\n")
    folder = Path(env["STEADYHAND_RUNTIME_DIR"])
    fifo = folder / "12345.json"
    os.mkfifo(fifo)
    writer = threading.Thread(target=lambda: os.close(os.open(fifo, os.O_WRONLY)), daemon=True)
    writer.start()
    time.sleep(0.05)
    try:
        async with session_with_root(ws, ws.resolve().as_uri(), env) as s:
            assert (await call(s, "read_file", file_path=str(ws / "f.txt")))["ok"]
        assert writer.is_alive(), "the FIFO was opened: its blocked writer went on"
    finally:
        if writer.is_alive():
            fd = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
            writer.join(5)
            os.close(fd)

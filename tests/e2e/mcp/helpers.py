"""Driving ``steadyhand mcp`` with the official MCP Python SDK's client, over stdio.

Every server the tests start gets the environment it needs passed explicitly (the SDK
starts servers with a filtered environment): its own ``XDG_RUNTIME_DIR`` (where the
sockets of running language servers are found) and a scratch history folder.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import mcp_types as types
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

SERVER = [sys.executable, "-m", "steadyhand", "mcp"]


def server_params(
    cwd: Path, *args: str, env: dict[str, str] | None = None
) -> StdioServerParameters:
    return StdioServerParameters(
        command=SERVER[0],
        args=[*SERVER[1:], *args],
        cwd=str(cwd),
        env={**os.environ, **(env or {})},
    )


@contextlib.asynccontextmanager
async def mcp_session(
    cwd: Path,
    *args: str,
    env: dict[str, str] | None = None,
    roots: list[Path] | None = None,
    name: str = "steadyhand-tests",
) -> AsyncIterator[ClientSession]:
    """An initialized SDK client session with ``steadyhand mcp ARGS`` (run in ``cwd``);
    ``roots``: the client offers these as its roots."""
    callback = None
    if roots is not None:
        listed = types.ListRootsResult(
            roots=[types.Root(uri=r.resolve().as_uri(), name=r.name) for r in roots]  # type: ignore[arg-type]
        )

        async def callback(context: Any) -> types.ListRootsResult:
            return listed

    with open(os.devnull, "w") as quiet:
        async with (
            stdio_client(server_params(cwd, *args, env=env), errlog=quiet) as (read, write),
            ClientSession(
                read,
                write,
                list_roots_callback=callback,
                client_info=types.Implementation(name=name, version="1"),
            ) as session,
        ):
            await session.initialize()
            yield session


def structured(result: Any) -> dict[str, Any]:
    """A ``CallToolResult``'s structured content, checked against its text content."""
    data = result.structured_content
    assert isinstance(data, dict), result
    assert result.content and result.content[0].type == "text", result
    assert result.content[0].text == data["message"], result
    assert result.is_error is (not data["ok"]), result
    return data

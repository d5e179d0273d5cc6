"""An MCP agent for the VS Code end-to-end test, run by the test driver inside code-server.

    python mcp_client.py LAUNCHER WORKSPACE RESULT_JSON

Starts ``LAUNCHER mcp --attach require`` (the command line the extension's "Connect an agent
over MCP" gave) with the official MCP SDK's client, in WORKSPACE; reads ``mcp.txt`` (open in
the editor with unsaved typing), edits it, and writes what it saw to RESULT_JSON.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from typing import Any

from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client


async def main(launcher: str, workspace: str, out: str) -> None:
    result: dict[str, Any] = {}
    params = StdioServerParameters(
        command=launcher, args=["mcp", "--attach", "require"], cwd=workspace, env=dict(os.environ)
    )
    try:
        async with (
            stdio_client(params) as (read, write),
            ClientSession(read, write) as session,
        ):
            init = await session.initialize()
            result["instructions"] = init.instructions
            for name, args in (
                ("read", {"file_path": "mcp.txt"}),
                ("edit", {"file_path": "mcp.txt", "old_string": "beta", "new_string": "BETA"}),
            ):
                r = await session.call_tool(f"{name}_file", args)
                result[name] = r.structured_content
    except Exception as exc:
        result["error"] = repr(exc)
    with open(out, "w") as fh:
        json.dump(result, fh)


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:4]))

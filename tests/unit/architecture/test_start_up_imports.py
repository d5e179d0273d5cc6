"""What a server has imported when it gives its first answers: only what those answers
need. Structural, not timed: each server runs in a process of its own, and the modules
loaded at the moment an answer is written are compared with lists of modules that are
heavy to import and that the first answers do not need (the grammars and their parser,
the image and PDF libraries, the ignore-file matcher, the LSP stack for the MCP server,
the tools that change files). docs/performance.md says what each start costs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from steadyhand.tools.table import COMMANDS

#: Never needed before the first answers, on any face.
HEAVY = (
    "tree_sitter",
    "tree_sitter_python",
    "PIL",
    "pypdf",
    "pathspec",
    "watchdog",
    "importlib.metadata",
    "steadyhand.syntax.engine",
    "steadyhand.guards.syntax",
    "steadyhand.text.matching",
    "steadyhand.text.slips",
    "steadyhand.tools.mutation",
    "steadyhand.tools.edit",
    "steadyhand.tools.write",
    "steadyhand.tools.listing",
    "steadyhand.tools.search",
    "steadyhand.tree.walk",
    "steadyhand.history.lookup",
)

#: The LSP stack, which ``steadyhand mcp`` never loads.
LSP_STACK = ("lsprotocol", "pygls", "cattrs", "attrs")

#: Run ``steadyhand mcp`` in this process, keeping the names of the modules loaded each
#: time an answer is written (in the file ``argv[1]``, when the server ends).
_RECORDING_MCP = """
import atexit, json, sys
from steadyhand.mcp import jsonrpc

seen = []
write = jsonrpc.OutWriter.write

def recording(self, data):
    seen.append(sorted(sys.modules))
    return write(self, data)

jsonrpc.OutWriter.write = recording
out = sys.argv[1]
atexit.register(lambda: open(out, "w").write(json.dumps(seen)))
from steadyhand.cli import main
sys.exit(main(sys.argv[2:]))
"""


def _loaded(modules: list[str], names: tuple[str, ...]) -> list[str]:
    """Which of ``names`` (a package or module each) are among ``modules``."""
    return sorted(
        name for name in names if any(m == name or m.startswith(name + ".") for m in modules)
    )


def _modules_after(code: str) -> list[str]:
    """The modules loaded once ``code`` ran in a fresh interpreter."""
    show = "import json, sys; print(json.dumps(sorted(sys.modules)))"
    out = subprocess.run(
        [sys.executable, "-c", f"{code}\n{show}"],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    modules: list[str] = json.loads(out.stdout.splitlines()[-1])
    return modules


def _request(proc: subprocess.Popen[bytes], msg_id: int, method: str, params: Any) -> Any:
    assert proc.stdin is not None and proc.stdout is not None
    line = {"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params}
    proc.stdin.write(json.dumps(line).encode() + b"\n")
    proc.stdin.flush()
    while True:
        answer = json.loads(proc.stdout.readline())
        if answer.get("id") == msg_id:
            return answer


def test_the_command_line_alone_loads_no_event_loop() -> None:
    modules = _modules_after("import steadyhand.cli")
    assert _loaded(modules, ("asyncio", *HEAVY, *LSP_STACK)) == []


def test_the_mcp_server_module_loads_no_tool_and_no_heavy_library() -> None:
    modules = _modules_after("import steadyhand.mcp.server")
    assert _loaded(modules, (*HEAVY, *LSP_STACK, "steadyhand.tools.read")) == []


def test_the_language_server_starts_without_the_tools_or_heavy_libraries() -> None:
    code = (
        "from steadyhand.lsp.server import create_server\n"
        "from steadyhand.lsp.transport import serve_stdio\n"
        "create_server()"
    )
    assert _loaded(_modules_after(code), HEAVY) == []


def test_steadyhand_mcp_answers_its_first_read_having_loaded_only_what_it_needs(
    tmp_path: Path,
) -> None:
    source = tmp_path / "module.py"
    source.write_text("".join(f"value_{i} = {i}\n" for i in range(1000)))
    record = tmp_path / "modules.json"
    argv = [sys.executable, "-c", _RECORDING_MCP, str(record), "mcp", "--attach", "auto"]
    proc = subprocess.Popen(
        [*argv, str(tmp_path)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        cwd=tmp_path,
        env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
    )
    try:
        _request(
            proc,
            1,
            "initialize",
            {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "test", "version": "1"},
            },
        )
        assert proc.stdin is not None
        proc.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
        read = _request(
            proc, 2, "tools/call", {"name": "read_file", "arguments": {"file_path": str(source)}}
        )
        assert read["result"]["isError"] is False, read
        time.sleep(1)  # two turns of the event loop, however busy the machine
        _request(proc, 3, "ping", {})
    finally:
        assert proc.stdin is not None
        proc.stdin.close()
        proc.wait(timeout=30)
    at_initialize, at_read, at_ping = json.loads(record.read_text())
    assert _loaded(at_initialize, (*HEAVY, *LSP_STACK, "steadyhand.tools.read")) == []
    assert _loaded(at_read, (*HEAVY, *LSP_STACK)) == []
    # The read still has the file's syntax tree built for the edit that may follow: the
    # check is loaded once its answer went out, and the tree built while nothing happens.
    assert _loaded(at_ping, ("steadyhand.guards.syntax",)) == ["steadyhand.guards.syntax"]


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_every_command_finds_its_tool(command: str) -> None:
    assert callable(COMMANDS[command].tool)

"""The servers under test, how to start them, and one call helper per protocol."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rpc import Framing, RpcClient

ROOT = Path(__file__).resolve().parent.parent
BENCH = ROOT / "bench"
CACHE = ROOT / ".cache"
NPM_DIR = CACHE / "bench-npm"
PEER_PACKAGE = "@modelcontextprotocol/server-filesystem"
#: The peer version measured; change it deliberately (results depend on it).
PEER_VERSION = "2026.8.31"
MCP_PROTOCOL = "2025-06-18"


@dataclass(frozen=True)
class Spec:
    name: str
    argv: tuple[str, ...]
    framing: Framing
    #: initializationOptions for LSP servers
    options: dict[str, Any] = field(default_factory=dict)
    #: the process's environment (None: this one's)
    env: dict[str, str] | None = None

    @property
    def is_mcp(self) -> bool:
        return self.framing == "ndjson"


def python() -> str:
    return sys.executable


def steadyhand(name: str = "steadyhand", **options: Any) -> Spec:
    argv = (python(), "-m", "steadyhand", "serve", "--log-level", "WARNING")
    return Spec(name, argv, "lsp", dict(options))


def emulated_macos() -> dict[str, str]:
    """The environment of a server on an emulated macOS (tests/emulate/sitecustomize.py)."""
    emulate = str(ROOT / "tests" / "emulate")
    path = os.pathsep.join(p for p in (emulate, os.environ.get("PYTHONPATH", "")) if p)
    return {**os.environ, "STEADYHAND_EMULATE": "macos", "PYTHONPATH": path}


def steadyhand_mcp(name: str, root: str, config: str, attach: str = "never") -> Spec:
    """``steadyhand mcp`` (MCP over stdio) with ``root`` and the settings file ``config``."""
    argv = (python(), "-m", "steadyhand", "mcp", "--attach", attach, "--config", config, root)
    return Spec(name, argv, "ndjson")


def bare_pygls(transport: str) -> Spec:
    argv = (python(), str(BENCH / "bare_pygls.py"), "--transport", transport)
    return Spec(f"pygls-{transport}", argv, "lsp")


def peer(allowed_dir: str) -> Spec:
    entry = NPM_DIR / "node_modules" / PEER_PACKAGE / "dist" / "index.js"
    return Spec("mcp-peer", ("node", str(entry), allowed_dir), "ndjson")


def ensure_peer() -> str:
    """Install the MCP peer into the git-ignored npm cache (once); returns its version."""
    pkg = NPM_DIR / "node_modules" / PEER_PACKAGE / "package.json"
    if pkg.exists():
        import json

        version = str(json.loads(pkg.read_text())["version"])
        if version == PEER_VERSION:
            return version
    if shutil.which("npm") is None or shutil.which("node") is None:
        raise RuntimeError("node and npm are needed for the MCP peer (Node 20 or later)")
    NPM_DIR.mkdir(parents=True, exist_ok=True)
    manifest = NPM_DIR / "package.json"
    if not manifest.exists():
        manifest.write_text('{"name": "steadyhand-bench-peer", "private": true}\n')
    subprocess.run(
        ["npm", "install", "--no-audit", "--no-fund", "--silent", f"{PEER_PACKAGE}@{PEER_VERSION}"],
        cwd=NPM_DIR,
        check=True,
    )
    return PEER_VERSION


def node_version() -> str:
    try:
        out = subprocess.run(["node", "--version"], capture_output=True, text=True, check=True)
    except (OSError, subprocess.CalledProcessError):
        return "?"
    return out.stdout.strip()


@dataclass
class Running:
    spec: Spec
    client: RpcClient
    startup_s: float
    init_result: Any

    @property
    def pid(self) -> int:
        return self.client.pid

    def commands(self) -> list[str]:
        caps = (self.init_result or {}).get("capabilities", {})
        return list((caps.get("executeCommandProvider") or {}).get("commands", []))

    def close(self) -> None:
        self.client.close(lsp_shutdown=not self.spec.is_mcp)


def start(spec: Spec, workspace: str, log_dir: str | None = None) -> Running:
    """Start a server and complete its handshake; start-up time ends at the answered
    initialize."""
    stderr = os.path.join(log_dir, f"{spec.name}.stderr.log") if log_dir else None
    t0 = time.perf_counter()
    client = RpcClient(spec.argv, spec.framing, cwd=workspace, stderr_path=stderr, env=spec.env)
    if spec.is_mcp:
        result = client.request(
            "initialize",
            {
                "protocolVersion": MCP_PROTOCOL,
                "capabilities": {},
                "clientInfo": {"name": "steadyhand-bench", "version": "1"},
            },
        )
        startup = time.perf_counter() - t0
        client.notify("notifications/initialized")
    else:
        uri = Path(workspace).as_uri()
        result = client.request(
            "initialize",
            {
                "processId": os.getpid(),
                "rootUri": uri,
                "capabilities": {},
                "workspaceFolders": [{"uri": uri, "name": "bench"}],
                "initializationOptions": spec.options or None,
            },
        )
        startup = time.perf_counter() - t0
        client.notify("initialized", {})
    return Running(spec, client, startup, result)


class CallFailed(RuntimeError):
    pass


def sh_call(srv: Running, command: str, params: dict[str, Any]) -> dict[str, Any]:
    """A Steadyhand command; raises CallFailed unless the result is ok."""
    res = srv.client.request(
        "workspace/executeCommand", {"command": command, "arguments": [params]}
    )
    if not isinstance(res, dict) or not res.get("ok"):
        raise CallFailed(f"{command} failed: {res}")
    return res


def mcp_call(srv: Running, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """An MCP tools/call; raises CallFailed on a tool error."""
    res = srv.client.request("tools/call", {"name": tool, "arguments": arguments})
    if not isinstance(res, dict) or res.get("isError"):
        raise CallFailed(f"{tool} failed: {str(res)[:300]}")
    return res

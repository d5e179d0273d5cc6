"""The server starts, advertises its commands and answers a trivial call."""

from __future__ import annotations

import asyncio
from pathlib import Path

from pytest_lsp import LanguageClient

from steadyhand.protocol.commands import ALL_COMMANDS, PING, READ
from tests.conftest import call, client_with


async def test_advertises_commands(client: LanguageClient) -> None:
    caps = client.init_result.capabilities  # type: ignore[attr-defined]
    assert caps is not None and caps.execute_command_provider is not None
    assert set(ALL_COMMANDS) <= set(caps.execute_command_provider.commands)


async def test_ping(client: LanguageClient) -> None:
    result = await call(client, PING)
    assert result["ok"] is True and result["message"] == "pong"


async def test_ping_tells_where_watching_stands(client: LanguageClient, workspace: Path) -> None:
    """Watching starts with the first read and covers every folder of the workspace."""
    before = await call(client, PING)
    assert before["watcher"] == {"state": "idle", "folders": 0}
    for sub in ("a", "a/b", "c"):
        (workspace / sub).mkdir()
    (workspace / "a" / "b" / "f.txt").write_text("x\n")
    assert (await call(client, READ, file_path="a/b/f.txt"))["ok"]
    status: dict[str, object] = {}
    ping: dict[str, object] = {}
    for _ in range(250):  # the set-up runs in the background
        ping = await call(client, PING)
        status = ping["watcher"]
        if status["state"] != "starting":
            break
        await asyncio.sleep(0.02)
    # inotify counts its watches (the root, a, a/b and c); a watchdog observer (macOS,
    # Windows) watches the tree as one and cannot tell
    folders = 4 if ping["platform"]["watch"] == "inotify" else None  # type: ignore[index]
    assert status == {"state": "watching", "folders": folders}


unwatched = client_with({"watch": False})


async def test_ping_says_when_watching_is_off(unwatched: LanguageClient, workspace: Path) -> None:
    (workspace / "f.txt").write_text("x\n")
    assert (await call(unwatched, READ, file_path="f.txt"))["ok"]
    status = (await call(unwatched, PING))["watcher"]
    assert status == {"state": "off", "folders": 0}

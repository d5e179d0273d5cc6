"""The server starts, advertises its commands and answers a trivial call."""

from __future__ import annotations

from pytest_lsp import LanguageClient

from steadyhand.protocol.commands import ALL_COMMANDS
from tests.conftest import call


async def test_advertises_commands(client: LanguageClient) -> None:
    caps = client.init_result.capabilities  # type: ignore[attr-defined]
    assert caps is not None and caps.execute_command_provider is not None
    assert set(ALL_COMMANDS) <= set(caps.execute_command_provider.commands)


async def test_ping(client: LanguageClient) -> None:
    result = await call(client, "steadyhand.ping")
    assert result["ok"] is True and result["message"] == "pong"

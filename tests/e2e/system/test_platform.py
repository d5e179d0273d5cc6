"""The server says which system it runs on and the mechanism of each promise there."""

from __future__ import annotations

import os
import sys

from pytest_lsp import LanguageClient

from steadyhand.protocol.commands import PING
from tests.conftest import call

_EXPECTED = {"linux": "linux", "darwin": "macos", "win32": "windows"}


async def test_ping_names_the_system_and_its_mechanisms(client: LanguageClient) -> None:
    status = await call(client, PING)
    platform = status["platform"]
    emulated = os.environ.get("STEADYHAND_EMULATE") == "macos"
    assert platform["os"] == ("macos" if emulated else _EXPECTED.get(sys.platform, sys.platform))
    for promise in ("checked_open", "atomic_replace", "locks", "watch", "state_dir"):
        assert isinstance(platform[promise], str) and platform[promise], promise
    if emulated:
        assert "F_GETPATH" in platform["checked_open"]

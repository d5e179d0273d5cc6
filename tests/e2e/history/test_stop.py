"""A server asked to stop right after answering a change still records it: the history
entry written after the answer is written before the process ends."""

from __future__ import annotations

import asyncio
import signal
from pathlib import Path

import pytest

from steadyhand.protocol.commands import EDIT, READ, UNDO
from tests.torture.harness import Server


@pytest.mark.slow
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP], ids=["SIGTERM", "SIGHUP"])
async def test_a_change_answered_just_before_a_stop_can_be_undone(
    tmp_path: Path, sig: signal.Signals
) -> None:
    ws, state = tmp_path / "ws", tmp_path / "state"
    ws.mkdir()
    f = ws / "a.txt"
    options = {"historyDir": str(tmp_path / "history")}
    for round_ in range(5):  # the signal lands at once, every time
        f.write_text(f"orig {round_}\n")
        server = await Server.start(ws, state_dir=state, options=options)
        await server.call(READ, file_path=str(f))
        r = await server.call(EDIT, file_path=str(f), old_string="orig", new_string="agent")
        assert r["ok"], r
        server.proc.send_signal(sig)
        assert await asyncio.wait_for(server.proc.wait(), 30) == 0
        again = await Server.start(ws, state_dir=state, options=options)
        try:
            undone = await again.call(UNDO, file_path=str(f))
            assert undone["ok"], (round_, undone)
            assert f.read_text() == f"orig {round_}\n"
        finally:
            await again.stop()

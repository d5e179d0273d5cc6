"""The demo (the README's first command) passes, and leaves nothing in the user's state."""

from __future__ import annotations

from pathlib import Path

import pytest

from steadyhand.demo.run import run_demo


def test_the_demo_passes_and_keeps_its_history_in_its_own_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    assert run_demo() == 0
    assert "All steps behaved as expected." in capsys.readouterr().out
    state = tmp_path / "state" / "steadyhand"
    left = sorted(p.name for p in state.iterdir()) if state.exists() else []
    assert [name for name in left if name != "temps"] == []  # no history store stays
    # the server exited cleanly, so the journal it kept in case of a crash is gone too
    assert list((state / "temps").glob("*.folders")) == []

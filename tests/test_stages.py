"""tests/stages.py, the runner of ``make test``'s stages: statuses and what it says of them."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

STAGES = Path(__file__).resolve().parent / "stages.py"


def run(tmp_path: Path, *stages: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(STAGES), "--logs", str(tmp_path / "logs"), *stages],
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_every_stage_passing_passes_and_each_is_timed(tmp_path: Path) -> None:
    done = run(tmp_path, "&side=echo beside", "first=true", "second=echo hello")
    assert done.returncode == 0, done.stdout + done.stderr
    summary = done.stdout.split("wall time of each stage:")[1]
    for name in ("side", "first", "second", "total"):
        assert f"[stages]   {name}" in summary, summary
    assert summary.count("passed") == 3, summary
    assert "beside" in done.stdout.split("(ran beside the others)")[1]


def test_pytest_running_no_tests_fails_loudly(tmp_path: Path) -> None:
    done = run(tmp_path, "pytest=exit 5", "after=true")
    assert done.returncode == 1, done.stdout
    assert "FAILED (exit 5: pytest ran no tests)" in done.stdout, done.stdout
    # a later stage still runs, and another stage's 5 is only a failing status
    assert "after: " in done.stdout and "passed" in done.stdout
    other = run(tmp_path, "lint=exit 5")
    assert other.returncode == 1 and "FAILED (exit 5)\n" in other.stdout, other.stdout


def test_a_failed_required_stage_stops_the_rest(tmp_path: Path) -> None:
    done = run(tmp_path, "!set-up=false", f"pytest=touch {tmp_path / 'ran'}")
    assert done.returncode == 1, done.stdout
    assert "not run" in done.stdout and "FAILED (exit 1)" in done.stdout
    assert not (tmp_path / "ran").exists()


def test_a_malformed_stage_is_refused(tmp_path: Path) -> None:
    done = run(tmp_path, "no-command")
    assert done.returncode != 0 and "NAME=COMMAND" in done.stderr

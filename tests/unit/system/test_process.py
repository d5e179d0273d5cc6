"""Whether a process runs, asked without touching it."""

from __future__ import annotations

import os
import subprocess
import sys

from steadyhand.system.process import alive


def test_this_process_runs_and_an_ended_one_does_not() -> None:
    assert alive(os.getpid())
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait(timeout=30)
    assert not alive(child.pid)


def test_a_number_that_is_no_process() -> None:
    for pid in (0, -1, -(2**40), 2**40, 2**63):
        assert not alive(pid), pid


def test_a_process_of_another_user_runs_too() -> None:
    if sys.platform != "win32":
        assert alive(1)  # the first process runs (signal 0 is refused to users: it still runs)

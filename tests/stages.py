"""Run the stages of ``make test``, some side by side, and print how long each took.

    python tests/stages.py [--logs DIR] STAGE...

A STAGE is ``NAME=COMMAND`` (a shell command). One written ``&NAME=COMMAND`` runs in the
background, beside the stages that follow it, with its output kept in ``DIR/NAME.log``
and printed once the foreground stages are done (so that it never cuts into their
output); the others run one after the other, in the foreground. One written
``!NAME=COMMAND`` runs in the foreground and, should it fail, no later stage starts (the
set-up the others need); otherwise every stage runs even after one has failed. The exit
status is 1 if any failed. At the end, one line per stage: its wall time and whether it
passed. A stage named ``pytest...`` that exits 5 (pytest's status when no test ran: a path
or a ``-k``/``-m`` that matches nothing) failed, and is said to have run no tests.

``make test`` runs the static checks and the extension's checks beside pytest: on a
machine of two cores they fill the time pytest's workers spend waiting on the processes
they drive.
"""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

#: pytest's exit status when it collected no test, or deselected every one.
NO_TESTS_RAN = 5


@dataclass
class Stage:
    name: str
    command: str
    background: bool
    required: bool = False
    started: float = 0.0
    ended: float | None = None
    status: int | None = None
    proc: subprocess.Popen[bytes] | None = None
    log: Path | None = None
    log_file: IO[bytes] | None = field(default=None, repr=False)

    def start(self, logs: Path) -> None:
        self.started = time.monotonic()
        if self.background:
            self.log = logs / f"{self.name}.log"
            self.log_file = self.log.open("wb")
            self.proc = subprocess.Popen(
                self.command, shell=True, stdout=self.log_file, stderr=subprocess.STDOUT
            )
            # its end is noted when it comes, not when the foreground lets us look
            threading.Thread(target=self.wait, daemon=True).start()
        else:
            self.proc = subprocess.Popen(self.command, shell=True)

    def wait(self) -> int:
        assert self.proc is not None
        status = self.proc.wait()
        if self.ended is None:
            self.ended = time.monotonic()
            self.status = status
        return status

    @property
    def verdict(self) -> str:
        if self.status == 0:
            return "passed"
        if self.status == NO_TESTS_RAN and self.name.startswith("pytest"):
            return f"FAILED (exit {self.status}: pytest ran no tests)"
        return f"FAILED (exit {self.status})"

    @property
    def seconds(self) -> float:
        return (self.ended or time.monotonic()) - self.started


def parse(argv: list[str]) -> tuple[Path, list[Stage]]:
    logs = Path(".test-logs")
    stages: list[Stage] = []
    args = iter(argv)
    for arg in args:
        if arg == "--logs":
            logs = Path(next(args))
            continue
        background, required = arg.startswith("&"), arg.startswith("!")
        name, sep, command = arg.lstrip("&!").partition("=")
        if not sep or not name or not command:
            raise SystemExit(f"stages.py: a stage is [&!]NAME=COMMAND, not {arg!r}")
        stages.append(Stage(name, command, background, required))
    if not stages:
        raise SystemExit(__doc__)
    return logs, stages


def main(argv: list[str]) -> int:
    logs, stages = parse(argv)
    logs.mkdir(parents=True, exist_ok=True)
    began = time.monotonic()
    for stage in stages:
        stage.start(logs)
        if not stage.background:
            stage.wait()
            print(f"[stages] {stage.name}: {stage.seconds:.1f} s, {stage.verdict}", flush=True)
            if stage.required and stage.status != 0:
                break
    for stage in stages:
        if stage.background and stage.proc is not None:
            stage.wait()
            if stage.log_file is not None:
                stage.log_file.close()
            assert stage.log is not None
            print(f"\n[stages] ---- {stage.name} (ran beside the others) ----", flush=True)
            sys.stdout.buffer.write(stage.log.read_bytes())
            sys.stdout.flush()
    total = time.monotonic() - began
    width = max(len("total"), *(len(s.name) for s in stages))
    print("\n[stages] wall time of each stage:")
    for stage in stages:
        if stage.proc is None:
            print(f"[stages]   {stage.name:<{width}}  {'':>9}  not run")
            continue
        where = " (beside)" if stage.background else ""
        print(f"[stages]   {stage.name:<{width}}  {stage.seconds:7.1f} s  {stage.verdict}{where}")
    print(f"[stages]   {'total':<{width}}  {total:7.1f} s", flush=True)
    return 0 if all(s.status == 0 for s in stages) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""The system calls of the write path, behind one seam.

All disk writes go through a :class:`Syscalls` object. The default one calls the OS;
:class:`FaultPlan` lets tests make a named call fail (ENOSPC, EIO, a short write, ...)
on its n-th use, inside a real server process, selected by the ``STEADYHAND_FAULTS``
environment variable (see docs/reliability.md). Nothing else in the server touches
``os.write``/``os.rename`` for user files.
"""

from __future__ import annotations

import errno
import os
import threading
from dataclasses import dataclass, field


class Syscalls:
    """Thin wrappers over the OS calls used to write files."""

    def open(self, path: str, flags: int, mode: int = 0o600) -> int:
        return os.open(path, flags, mode)

    def write(self, fd: int, data: bytes | memoryview) -> int:
        return os.write(fd, data)

    def fsync(self, fd: int) -> None:
        os.fsync(fd)

    def fchmod(self, fd: int, mode: int) -> None:
        os.fchmod(fd, mode)

    def close(self, fd: int) -> None:
        os.close(fd)

    def rename(self, src: str, dst: str) -> None:
        os.replace(src, dst)

    def unlink(self, path: str) -> None:
        os.unlink(path)

    def mkdir(self, path: str, mode: int = 0o777) -> None:
        os.mkdir(path, mode)


@dataclass
class Fault:
    call: str  # a Syscalls method name
    error: int  # errno, or 0 for a short write
    at: int = 1  # fail on this use of the call (1 = first)
    seen: int = 0


@dataclass
class FaultPlan(Syscalls):
    """Syscalls that fail as planned; each fault fires once."""

    faults: list[Fault] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def _check(self, call: str) -> Fault | None:
        with self._lock:
            for f in self.faults:
                if f.call == call and f.seen < f.at:
                    f.seen += 1
                    if f.seen == f.at:
                        if f.error:
                            raise OSError(f.error, os.strerror(f.error) + " (injected)")
                        return f
        return None

    def open(self, path: str, flags: int, mode: int = 0o600) -> int:
        self._check("open")
        return super().open(path, flags, mode)

    def write(self, fd: int, data: bytes | memoryview) -> int:
        if self._check("write") is not None and len(data) > 1:
            return super().write(fd, memoryview(data)[: len(data) // 2])
        return super().write(fd, data)

    def fsync(self, fd: int) -> None:
        self._check("fsync")
        super().fsync(fd)

    def fchmod(self, fd: int, mode: int) -> None:
        self._check("fchmod")
        super().fchmod(fd, mode)

    def close(self, fd: int) -> None:
        self._check("close")
        super().close(fd)

    def rename(self, src: str, dst: str) -> None:
        self._check("rename")
        super().rename(src, dst)

    def mkdir(self, path: str, mode: int = 0o777) -> None:
        self._check("mkdir")
        super().mkdir(path, mode)


def parse_faults(spec: str) -> FaultPlan:
    """``"write:ENOSPC:1,rename:EIO:2,write:short:1"`` -> a :class:`FaultPlan`."""
    faults: list[Fault] = []
    for item in filter(None, (s.strip() for s in spec.split(","))):
        call, err, *rest = item.split(":")
        code = 0 if err == "short" else getattr(errno, err)
        faults.append(Fault(call, code, int(rest[0]) if rest else 1))
    return FaultPlan(faults)


def from_environment() -> Syscalls:
    spec = os.environ.get("STEADYHAND_FAULTS", "")
    return parse_faults(spec) if spec else Syscalls()

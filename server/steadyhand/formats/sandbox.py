"""Decoding images and PDFs in a process of their own, bounded in time and memory.

A hostile image or PDF can cost far more than its size: a PNG of a few hundred KB
declares hundreds of megapixels, a PDF of a few KB has pages that share one content
stream of megabytes, parsed again for each page. A thread cannot be stopped, so the
decoding runs in a child process (:mod:`steadyhand.formats.worker`), one per read:

- time: the server waits at most :data:`SECONDS`, then kills the process, so the work
  really stops (on every system);
- memory: the process limits its own address space to :data:`MEMORY_BYTES` before it
  reads the data (Linux; macOS accepts the limit without always enforcing it; Windows
  has no such limit here, so there the time bound and the checks made before decoding —
  the image's declared size, the PDF page's content size — are the bound); an
  allocation past it fails and the read answers ``too_large``;
- the server keeps answering meanwhile: the read waits in a worker thread, and at most
  :data:`PARALLEL` decoding processes run at once.

The server never imports Pillow or pypdf for this, so it stays small however large the
files it is asked to read.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Literal

from steadyhand.formats.worker import OUT_OF_MEMORY
from steadyhand.protocol.errors import ErrorCode, ToolError

#: How long one read's decoding may take, in seconds.
SECONDS = 15.0
#: The decoding process's address space, in bytes.
MEMORY_BYTES = 256 * 1024 * 1024
#: Decoding processes running at once, at most (others wait their turn).
PARALLEL = 2

_SLOTS = threading.BoundedSemaphore(PARALLEL)


@dataclass
class OverLimit(Exception):
    """The decoding passed its time or memory bound and was stopped."""

    what: Literal["time", "memory"]
    seconds: float
    memory_bytes: int
    #: The progress messages the process wrote before it was stopped.
    progress: list[dict[str, Any]] = field(default_factory=list)

    def __str__(self) -> str:
        return f"over the {self.what} limit"


class DecoderFailed(Exception):
    """The decoding process ended without an answer (a crash), or reported a bug."""


def command() -> list[str]:
    """How the decoding process is started: this interpreter, without the current folder
    on its path (``-P``: a file in the workspace is never imported in its place)."""
    return [sys.executable, "-P", "-m", "steadyhand.formats.worker"]


def _popen_options() -> dict[str, Any]:
    if sys.platform == "win32":
        return {"creationflags": subprocess.CREATE_NO_WINDOW}
    return {}


def _messages(out: bytes) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    for line in out.splitlines():
        try:
            message = json.loads(line)
        except ValueError:
            continue  # a line cut short when the process was stopped
        if isinstance(message, dict):
            found.append(message)
    return found


def run(
    job: str,
    params: dict[str, Any],
    data: bytes,
    *,
    seconds: float = SECONDS,
    memory_bytes: int = MEMORY_BYTES,
) -> Any:
    """Run ``job`` on ``data`` in a decoding process and return its result. Raises the
    job's refusal (:class:`ToolError`), :class:`OverLimit`, or :class:`DecoderFailed`.
    Blocks: call it from a worker thread."""
    header = {
        "job": job,
        "params": params,
        "size": len(data),
        "seconds": seconds,
        "memory": memory_bytes,
    }
    with _SLOTS:
        started = time.monotonic()
        try:
            proc = subprocess.Popen(
                command(),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                close_fds=True,
                **_popen_options(),
            )
        except OSError as exc:
            raise DecoderFailed(f"the decoding process could not start: {exc}") from exc
        payload = json.dumps(header).encode("utf-8") + b"\n" + data
        try:
            out, _ = proc.communicate(payload, timeout=seconds)
        except subprocess.TimeoutExpired:
            proc.kill()
            out, _ = proc.communicate()
            raise OverLimit("time", seconds, memory_bytes, _messages(out)) from None
        except BaseException:
            proc.kill()
            proc.wait()
            raise
    messages = _messages(out)
    last = messages[-1] if messages else {}
    progress = messages[:-1]
    if "result" in last:
        return last["result"]
    if "error" in last:
        raise refusal(last["error"])
    if last.get("over") == "memory":
        raise OverLimit("memory", seconds, memory_bytes, progress)
    if "bug" in last:
        raise DecoderFailed(str(last["bug"]))
    code = proc.returncode
    if _cpu_signal(code) or time.monotonic() - started >= seconds:
        raise OverLimit("time", seconds, memory_bytes, messages)
    if code == OUT_OF_MEMORY:
        raise OverLimit("memory", seconds, memory_bytes, messages)
    raise DecoderFailed(f"the decoding process stopped without an answer (exit code {code})")


def refusal(err: Any) -> ToolError:
    """The refusal a decoding process reported (``{code, message, fields}``), read
    strictly: anything else is :class:`DecoderFailed`."""
    try:
        fields = err.get("fields") or {}
        if not isinstance(fields, dict) or not all(isinstance(k, str) for k in fields):
            raise TypeError("fields")
        return ToolError(ErrorCode(err["code"]), str(err["message"]), **fields)
    except (AttributeError, KeyError, TypeError, ValueError) as exc:
        raise DecoderFailed(f"a malformed refusal: {exc}") from None


def _cpu_signal(code: int | None) -> bool:
    """Whether ``code`` says the system ended the process for its CPU time."""
    if sys.platform == "win32" or code is None:
        return False
    import signal

    return code == -signal.SIGXCPU

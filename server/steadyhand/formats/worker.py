"""The decoding process: images and PDFs are decoded here, never in the server.

Run as ``python -P -m steadyhand.formats.worker`` by :mod:`steadyhand.formats.sandbox`,
one process per read. It reads one JSON line (the job, its parameters, its limits and
the size of the data) and the data from stdin, bounds itself (address space and CPU
time, where the system has them), does the job and writes JSON lines to stdout: progress
(``{"done": page}``), then one last line, ``{"result": …}``, ``{"error": …}`` (a
refusal: code, message, fields), ``{"over": "memory"}`` or ``{"bug": …}``.

Nothing here is trusted by the server beyond plain JSON: a decoder that a hostile file
takes over can make a wrong answer, not run code in the server.
"""

from __future__ import annotations

import gc
import json
import math
import os
import sys
from collections.abc import Callable
from typing import Any, BinaryIO

from steadyhand.protocol.errors import ToolError

Emit = Callable[[dict[str, Any]], None]


def bound_self(memory_bytes: int, seconds: float) -> None:
    """Limit this process's address space to ``memory_bytes`` and its CPU time to
    ``seconds`` (and a little): allocations past the first fail (``MemoryError``), and
    the system ends the process past the second even if no one is left to stop it.

    Linux and macOS have these limits (macOS accepts an address-space limit but does not
    always enforce it); on Windows there are none here, and the time bound of the parent
    alone applies."""
    if sys.platform == "win32":
        return
    import resource

    cpu = math.ceil(seconds) + 5
    for which, value in ((resource.RLIMIT_AS, memory_bytes), (resource.RLIMIT_CPU, cpu)):
        try:
            _soft, hard = resource.getrlimit(which)
            if hard != resource.RLIM_INFINITY:
                value = min(value, hard)
            resource.setrlimit(which, (value, hard))
        except (ValueError, OSError):
            pass  # this system does not take the limit: the parent's bound holds


def _image_job(params: dict[str, Any], data: bytes, emit: Emit) -> Any:
    from PIL import Image

    from steadyhand.formats import image as image_fmt

    # Decoding bombs are judged by the pixel limit and the memory bound, not by
    # Pillow's own warning threshold.
    Image.MAX_IMAGE_PIXELS = image_fmt.HARD_PIXEL_LIMIT
    budget = image_fmt.Budget(*params["budget"])
    items: list[dict[str, Any]] = params["items"]
    out: list[dict[str, Any]] = []
    at = 0
    for item in items:
        size = int(item["size"])
        chunk = data[at : at + size]
        at += size
        try:
            img = image_fmt.deliver(str(item["path"]), chunk, budget)
            out.append({"image": img.to_wire()})
        except ToolError as err:
            out.append({"error": _refusal(err)})
        except MemoryError:
            out.append({"over": "memory"})
        emit({"done": len(out)})
    return out


def _pdf_job(params: dict[str, Any], data: bytes, emit: Emit) -> Any:
    from steadyhand.formats import pdf as pdf_fmt

    count, pages = pdf_fmt.extract(
        str(params["path"]),
        data,
        params.get("pages"),
        int(params["max_pages"]),
        text_cap=int(params["text_cap"]),
        progress=lambda n: emit({"done": n}),
        announce=lambda total, numbers: emit({"count": total, "numbers": numbers}),
    )
    return {"count": count, "pages": [p.to_wire() for p in pages]}


JOBS: dict[str, Callable[[dict[str, Any], bytes, Emit], Any]] = {
    "images": _image_job,
    "pdf": _pdf_job,
}


def _refusal(err: ToolError) -> dict[str, Any]:
    return {"code": err.code.value, "message": err.message, "fields": err.fields}


#: The exit status of a process that ran out of memory and could not even say so.
OUT_OF_MEMORY = 3
#: Memory set aside at the start and given back when an allocation fails, so that the
#: process can still write its answer.
_RESERVE = 4 * 1024 * 1024


def serve(stdin: BinaryIO, stdout: BinaryIO) -> int:
    header = json.loads(stdin.readline())
    bound_self(int(header["memory"]), float(header["seconds"]))
    reserve: bytearray | None = bytearray(_RESERVE)

    def emit(message: dict[str, Any]) -> None:
        stdout.write(json.dumps(message).encode("utf-8") + b"\n")
        stdout.flush()

    answer: dict[str, Any] | None = None
    try:
        data = stdin.read(int(header["size"]))
        answer = {"result": JOBS[header["job"]](header["params"], data, emit)}
    except ToolError as err:
        answer = {"error": _refusal(err)}
    except MemoryError:
        answer = None  # said below, once the frames holding the memory are gone
    except Exception as exc:  # a bug: said to the server, which logs it
        answer = {"bug": f"{type(exc).__name__}: {exc}"[:2000]}
    data = b""
    if answer is None:
        reserve = None
        gc.collect()
        answer = {"over": "memory"}
    try:
        emit(answer)
    except MemoryError:
        os._exit(OUT_OF_MEMORY)
    del reserve
    return 0


def main() -> int:
    return serve(sys.stdin.buffer, sys.stdout.buffer)


if __name__ == "__main__":
    sys.exit(main())

"""A slow Steadyhand server for editor tests: runs the real server and holds back each
``workspace/executeCommand`` request naming one of the slow commands for a while before
passing it on (and everything the editor sends after it, so the order stays as sent).

    python slow_server.py SECONDS COMMAND[,COMMAND...] -- steadyhand serve [ARGS...]

Everything else passes through unchanged, both ways.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from typing import BinaryIO


def read_frame(stream: BinaryIO) -> bytes | None:
    """One LSP frame (headers and body) as read, or None at the end of the stream."""
    head = b""
    while not head.endswith(b"\r\n\r\n"):
        byte = stream.read(1)
        if not byte:
            return None
        head += byte
    length = 0
    for line in head.decode("ascii").split("\r\n"):
        name, _, value = line.partition(":")
        if name.strip().lower() == "content-length":
            length = int(value.strip())
    body = stream.read(length)
    return head + body


def slow(frame: bytes, commands: set[str]) -> bool:
    body = frame.split(b"\r\n\r\n", 1)[1]
    try:
        message = json.loads(body)
    except ValueError:
        return False
    if not isinstance(message, dict) or message.get("method") != "workspace/executeCommand":
        return False
    params = message.get("params")
    return isinstance(params, dict) and params.get("command") in commands


def main() -> int:
    seconds, names, dash, *server = sys.argv[1:]
    assert dash == "--" and server, __doc__
    commands = set(names.split(","))
    proc = subprocess.Popen(server, stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0)
    assert proc.stdin is not None and proc.stdout is not None
    to_server, from_server = proc.stdin, proc.stdout

    def answers() -> None:
        while chunk := from_server.read(65536):  # unbuffered: whatever has arrived
            sys.stdout.buffer.write(chunk)
            sys.stdout.buffer.flush()

    threading.Thread(target=answers, daemon=True).start()
    while (frame := read_frame(sys.stdin.buffer)) is not None:
        if slow(frame, commands):
            time.sleep(float(seconds))
        try:
            to_server.write(frame)
            to_server.flush()
        except BrokenPipeError:
            break
    to_server.close()
    return proc.wait()


if __name__ == "__main__":
    sys.exit(main())

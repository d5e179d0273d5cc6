"""JSON on the wire: orjson when it is installed (several times faster both ways), the
standard library otherwise and for whatever orjson declines or might read differently.

orjson refuses what the standard library accepts beyond strict JSON (NaN, lone
surrogate escapes) and reads an integer beyond 64 bits as a float; a message it refuses,
or in which it found any float, is parsed again by the standard library, so the
protocol's checks always see exactly what the client sent."""

from __future__ import annotations

import json
from typing import Any

try:
    import orjson
except ImportError:  # pragma: no cover - a dependency, but the server works without it
    orjson = None  # type: ignore[assignment]

#: The largest message either face takes, in bytes (an LSP frame's announced body, an MCP
#: line); a larger one is answered with a parse error and skipped.
MAX_MESSAGE_BYTES = 1 << 31


def _int(text: str) -> int | float:
    """A JSON integer; one with more digits than Python converts (4,300) is taken as
    infinitely large, as a float literal too large for a float is (``1e999``): the
    message is still parsed and answered, and the parameter check refuses the number."""
    try:
        return int(text)
    except ValueError:
        return float("-inf") if text.startswith("-") else float("inf")


def loads(body: bytes) -> Any:
    """One JSON message, parsed as the standard library parses it (an integer too long
    to convert is infinitely large, so the request is still answered)."""
    if orjson is not None:
        try:
            data = orjson.loads(body)
        except (orjson.JSONDecodeError, RecursionError):
            pass
        else:
            if not _has_float(data):
                return data
    return json.loads(body, parse_int=_int)


def _has_float(value: Any) -> bool:
    """Whether a value orjson made holds a float anywhere (it makes exact dicts and lists)."""
    todo = [value]
    while todo:
        v = todo.pop()
        kind = type(v)
        if kind is float:
            return True
        if kind is dict:
            todo.extend(v.values())
        elif kind is list:
            todo.extend(v)
    return False


def dumps(message: Any) -> bytes | None:
    """``message`` as compact JSON (UTF-8), or None if it is not plain JSON data."""
    if orjson is not None:
        try:
            return orjson.dumps(message)
        except (TypeError, orjson.JSONEncodeError):
            pass
    try:
        return json.dumps(message).encode("utf-8")
    except (TypeError, ValueError):
        return None

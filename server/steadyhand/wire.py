"""JSON on the wire, outgoing: orjson when it is installed (several times faster), the
standard library otherwise and for whatever orjson declines (lone surrogates, integers
beyond 64 bits). Incoming messages are parsed by the standard library alone: orjson
would turn an integer beyond 64 bits into a float, and the protocol's checks must see
what the client sent."""

from __future__ import annotations

import json
from typing import Any

try:
    import orjson
except ImportError:  # pragma: no cover - a dependency, but the server works without it
    orjson = None  # type: ignore[assignment]


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

"""Result objects: every tool call answers ``{ok, message, error?, path?, ...}``."""

from __future__ import annotations

from typing import Any

from steadyhand.protocol.errors import ToolError

Result = dict[str, Any]


def success(message: str, **fields: Any) -> Result:
    return {"ok": True, "message": message, **fields}


def failure(err: ToolError, path: str | None = None) -> Result:
    out: Result = {"ok": False, "error": str(err.code), "message": err.message}
    p = err.fields.get("path", path)
    if p is not None:
        out["path"] = p
    for k, v in err.fields.items():
        if k != "path":
            out[k] = v
    return out

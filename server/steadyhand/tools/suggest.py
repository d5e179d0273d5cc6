"""Helping a model recover from a wrong path in one try."""

from __future__ import annotations

import difflib
import os

from steadyhand.protocol.errors import ErrorCode, ToolError


def similar_names(path: str, most: int = 3) -> list[str]:
    folder, name = os.path.split(path)
    try:
        entries = os.listdir(folder)
    except OSError:
        return []
    close = difflib.get_close_matches(name, entries, n=most, cutoff=0.6)
    return [os.path.join(folder, c) for c in close]


def not_found(path: str) -> ToolError:
    near = similar_names(path)
    hint = f" Did you mean {' or '.join(near)}?" if near else " Check the path."
    return ToolError(
        ErrorCode.NOT_FOUND,
        f"{path} does not exist.{hint} To create a new file, use write.",
        path=path,
    )

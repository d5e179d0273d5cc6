"""JSON with comments (JSONC): the configuration files of TypeScript, VS Code and the
dev containers, which their tools read with comments and trailing commas. Pure.

The JSON grammar reads comments already; :func:`without_trailing_commas` takes out the
trailing commas (each turned into a space, so every offset, line and column stays where
it was) before such a file is checked.
"""

from __future__ import annotations

import fnmatch
import os

#: File names (as written, wildcards allowed) of JSONC files wherever they are.
NAMES = (
    "tsconfig.json",
    "tsconfig.*.json",
    "tsconfig-*.json",
    "jsconfig.json",
    "jsconfig.*.json",
    "devcontainer.json",
    ".devcontainer.json",
    "*.jsonc",
    "*.code-workspace",
    ".eslintrc.json",
    "tslint.json",
    "api-extractor.json",
    "typedoc.json",
    "language-configuration.json",
)
#: Folders whose JSON files are all JSONC.
FOLDERS = frozenset({".vscode", ".devcontainer"})


def is_jsonc(path: str) -> bool:
    """Whether ``path`` names a JSONC file (by its name, or the folder it is in)."""
    base = os.path.basename(path)
    if any(fnmatch.fnmatchcase(base, pattern) for pattern in NAMES):
        return True
    folder = os.path.basename(os.path.dirname(path))
    return folder in FOLDERS and base.lower().endswith(".json")


def without_trailing_commas(text: str) -> str:
    """``text`` with every comma after a value that only comments and spaces separate
    from a closing `}` or `]` turned into a space (commas in strings and comments, and
    a comma after no value, as in `[,]`, stay)."""
    out = list(text)
    pending = -1  # a comma after a value, not yet followed but by spaces and comments
    last = ""  # the last character that is neither a space nor in a comment
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == '"':
            i += 1
            while i < n and text[i] != '"' and text[i] != "\n":
                i += 2 if text[i] == "\\" else 1
            pending, last = -1, '"'
            i += 1
            continue
        if c == "/" and text.startswith("//", i):
            end = text.find("\n", i)
            i = n if end < 0 else end
            continue
        if c == "/" and text.startswith("/*", i):
            end = text.find("*/", i + 2)
            i = n if end < 0 else end + 2
            continue
        if c in " \t\r\n\ufeff":
            i += 1
            continue
        if c in "}]" and pending >= 0:
            out[pending] = " "
        pending = i if c == "," and last not in ("", ",", "[", "{", ":") else -1
        last = c
        i += 1
    return "".join(out)

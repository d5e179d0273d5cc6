"""The files made from the tool source: the VS Code extension's language-model tools
and the server's commands (``package.json``'s ``contributes.languageModelTools``, its
activation events, the commands it contributes hidden from the Command Palette, and
``src/tools/generated.ts``) and the tool tables of the docs.

Each function returns the text a file should have; :func:`emit` writes them, or with
``check`` only names the files that differ (a test runs that, so a change to the source
that was not emitted fails).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from steadyhand.protocol.spec.faces import VSCODE
from steadyhand.protocol.spec.model import (
    Param,
    Tool,
    description,
    input_schema,
    item_class,
    json_type,
    params_of,
    shown_params,
)
from steadyhand.protocol.spec.table import BY_COMMAND, TOOLS

PACKAGE_JSON = Path("vscode-extension/package.json")
GENERATED_TS = Path("vscode-extension/src/tools/generated.ts")
MCP_DOC = Path("docs/mcp.md")
VSCODE_DOC = Path("docs/vscode.md")

_EMIT = "make tool-schemas"
_LM_EVENT = "onLanguageModelTool:"


def lm_tools() -> list[Tool]:
    """The commands VS Code offers as language-model tools."""
    return [t for t in TOOLS if t.vscode is not None]


def language_model_tools() -> list[dict[str, Any]]:
    """``contributes.languageModelTools``."""
    out = []
    for t in lm_tools():
        assert t.vscode is not None
        out.append(
            {
                "name": t.vscode.name,
                "displayName": f"{t.title} (Steadyhand)",
                "toolReferenceName": t.vscode.reference,
                "canBeReferencedInPrompt": True,
                "icon": t.vscode.icon,
                "tags": list(t.vscode.tags),
                "userDescription": t.vscode.user_description,
                "modelDescription": description(t, VSCODE, TOOLS),
                "inputSchema": input_schema(t, VSCODE, TOOLS),
            }
        )
    return out


def server_commands() -> list[dict[str, Any]]:
    """``contributes.commands`` for the server's commands: every one is a VS Code command
    (hidden from the Command Palette, as each takes an object argument)."""
    return [
        {"command": t.command, "title": f"{t.title} (command API)", "category": "Steadyhand"}
        for t in BY_COMMAND.values()
    ]


def package_json(text: str) -> str:
    """``package.json`` (its current ``text``) with the language-model tools and their
    activation events, and the server's commands (contributed, hidden from the Command
    Palette), from the source; everything else as it was."""
    pkg = json.loads(text)
    contributes = pkg["contributes"]
    tools = language_model_tools()
    contributes["languageModelTools"] = tools
    events = [e for e in pkg.get("activationEvents", []) if not e.startswith(_LM_EVENT)]
    pkg["activationEvents"] = events + [f"{_LM_EVENT}{t['name']}" for t in tools]
    ours = {t.command for t in TOOLS}
    commands = [c for c in contributes["commands"] if c["command"] not in ours]
    contributes["commands"] = commands + server_commands()
    palette = contributes["menus"]["commandPalette"]
    hidden = [{"command": t.command, "when": "false"} for t in BY_COMMAND.values()]
    contributes["menus"]["commandPalette"] = [
        m for m in palette if m["command"] not in ours
    ] + hidden
    return json.dumps(pkg, indent=2, ensure_ascii=False) + "\n"


def _ts(value: Any) -> str:
    """A TypeScript literal: keys bare, strings as JSON writes them."""
    if isinstance(value, dict):
        inner = ", ".join(f"{k}: {_ts(v)}" for k, v in value.items())
        return "{ " + inner + " }" if inner else "{}"
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_ts(v) for v in value) + "]"
    return json.dumps(value, ensure_ascii=False)


def _field(p: Param, depth: int) -> str:
    arg = p.arg
    out: dict[str, Any] = {"name": p.name, "type": _json_type_of(p), "required": p.required}
    if arg.minimum is not None:
        out["min"] = arg.minimum
    if arg.min_length is not None:
        out["minLength"] = arg.min_length
    if arg.max_length is not None:
        out["maxLength"] = arg.max_length
    if arg.pattern is not None:
        out["pattern"] = arg.pattern
    if arg.values:
        out["values"] = list(arg.values)
    if arg.min_items is not None:
        out["minItems"] = arg.min_items
    pad = "  " * depth
    if out["type"] == "array":
        items = params_of(item_class(p.hint), VSCODE)
        head = _ts(out)[:-2]  # without the closing " }"
        body = "".join(f"{pad}    {_field(i, depth + 2)},\n" for i in items)
        return f"{head}, items: [\n{body}{pad}  ] }}"
    return _ts(out)


def _json_type_of(p: Param) -> str:
    return json_type(p.hint)


def generated_ts() -> str:
    """``src/tools/generated.ts``: the language-model tools' fields for the extension's
    own check of a tool input (``table.ts``)."""
    lines = [
        "/**",
        " * The language-model tools: generated from the server's tool source",
        " * (server/steadyhand/protocol/spec) by `" + _EMIT + "`. Do not edit: a test fails",
        " * when this file differs from what the source gives.",
        " */",
        "import type { ToolSpec } from './table';",
        "",
        "export const TOOLS: readonly ToolSpec[] = [",
    ]
    for t in lm_tools():
        assert t.vscode is not None
        lines += [
            "  {",
            f"    tool: {_ts(t.vscode.name)},",
            f"    command: {_ts(t.command)},",
            f"    mutates: {_ts(not t.hints.read_only)},",
        ]
        if t.aliases:
            lines.append(f"    aliases: {_ts(dict(t.aliases))},")
        lines.append("    fields: [")
        lines += [f"      {_field(p, 3)}," for p in shown_params(t, VSCODE)]
        lines += ["    ],", "  },"]
    lines += ["];", ""]
    lines += [
        "/** Every command the server advertises (each is a VS Code command too). */",
        "export const SERVER_COMMAND_NAMES: readonly string[] = [",
        *[f"  {_ts(command)}," for command in BY_COMMAND],
        "];",
        "",
    ]
    return "\n".join(lines)


def _markdown_table(header: list[str], rows: list[list[str]]) -> str:
    out = ["| " + " | ".join(header) + " |", "| " + " | ".join("---" for _ in header) + " |"]
    out += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(out)


def mcp_table() -> str:
    """docs/mcp.md's table of the MCP tools."""
    rows = []
    for t in TOOLS:
        if t.mcp is None:
            continue
        hints = [
            word
            for on, word in (
                (t.hints.read_only, "read-only"),
                (t.hints.destructive, "destructive"),
                (t.hints.idempotent, "idempotent"),
            )
            if on
        ]
        rows.append([f"`{t.mcp}`", f"`{t.command}`", ", ".join(hints) or "—"])
    return _markdown_table(["MCP tool", "LSP command", "annotations"], rows)


def _inputs(params: list[Param], aliases: dict[str, str]) -> str:
    parts = []
    for p in params:
        name = f"`{p.name}{'' if p.required else '?'}`"
        if p.hint is not None and _json_type_of(p) == "array":
            inner = ", ".join(
                i.name + ("" if i.required else "?") for i in params_of(item_class(p.hint), VSCODE)
            )
            name += f" (`[{{{inner}}}]`)"
        also = [a for a, n in aliases.items() if n == p.name]
        if also:
            name += " (or " + ", ".join(f"`{a}`" for a in also) + ")"
        parts.append(name)
    return ", ".join(parts)


def vscode_table() -> str:
    """docs/vscode.md's table of the language-model tools."""
    rows = []
    for t in lm_tools():
        assert t.vscode is not None
        rows.append(
            [
                f"`{t.vscode.name}`",
                f"`{t.command}`",
                _inputs(shown_params(t, VSCODE), dict(t.aliases)),
            ]
        )
    return _markdown_table(["tool", "command", "input"], rows)


def _between_markers(name: str, table: Callable[[], str]) -> Callable[[str], str]:
    start = f"<!-- {name}: made by `{_EMIT}` from the tool source -->"
    end = f"<!-- end of {name} -->"
    pattern = re.compile(re.escape(start) + r"\n.*?\n" + re.escape(end), re.S)

    def rewrite(text: str) -> str:
        if not pattern.search(text):
            raise ValueError(f"the markers of {name} are missing: {start} ... {end}")
        return pattern.sub(lambda _: f"{start}\n{table()}\n{end}", text, count=1)

    return rewrite


#: Each file made from the source: how its new text comes from its current one.
FILES: dict[Path, Callable[[str], str]] = {
    PACKAGE_JSON: package_json,
    GENERATED_TS: lambda _old: generated_ts(),
    MCP_DOC: _between_markers("the MCP tools", mcp_table),
    VSCODE_DOC: _between_markers("the language-model tools", vscode_table),
}


def emit(root: Path, *, check: bool = False) -> list[Path]:
    """Write every file made from the source under ``root`` (the repository); with
    ``check``, write nothing. Returns the files whose text differed."""
    differ = []
    for rel, make in FILES.items():
        path = root / rel
        old = path.read_text(encoding="utf-8") if path.exists() else ""
        new = make(old)
        if new != old:
            differ.append(rel)
            if not check:
                with open(path, "w", encoding="utf-8", newline="\n") as out:
                    out.write(new)
    return differ


__all__ = ["emit", "generated_ts", "language_model_tools", "mcp_table", "vscode_table"]

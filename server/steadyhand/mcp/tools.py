"""The MCP tools: their names, schemas, descriptions and hints, and how one call runs.

Every tool is one of Steadyhand's commands (``tools/table.py``) under the name MCP hosts
know, with the same snake_case arguments; names, schemas, descriptions and hints all come
from the tool source (``protocol/spec``), which says too why a command is not an MCP
tool. :func:`call_tool` runs it through the one command table and shapes its result as
an MCP ``CallToolResult``: ``content`` is the result's ``message`` (images as image
content), ``structuredContent`` the result object, ``isError`` set on every refusal. The
same function serves ``steadyhand mcp`` standalone and the socket of a running
``steadyhand serve`` (``rendezvous.py``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from steadyhand.context import ToolContext
from steadyhand.paths.resolve import Roots, expand
from steadyhand.protocol import spec
from steadyhand.protocol.errors import ToolError
from steadyhand.protocol.params import ParamsError
from steadyhand.tools.table import COMMANDS, parse, run

#: Error codes only the MCP face gives: arguments that do not fit, and (attached) an
#: editor's server that is gone.
INVALID_PARAMS = "invalid_params"
NOT_ATTACHED = "not_attached"


@dataclass(frozen=True, slots=True)
class McpTool:
    """A command as MCP hosts know it; everything it states comes from the tool source
    (``protocol/spec``)."""

    name: str
    command: str
    title: str
    #: readOnlyHint, destructiveHint, idempotentHint (openWorldHint is always false).
    hints: tuple[bool, bool, bool]
    #: Whether a missing ``session`` means the connection's own session (else: any).
    own_session: bool
    source: spec.Tool


def _mcp_tool(tool: spec.Tool) -> McpTool:
    assert tool.mcp is not None
    h = tool.hints
    hints = (h.read_only, h.destructive, h.idempotent)
    return McpTool(tool.mcp, tool.command, tool.title, hints, tool.own_session, tool)


_TOOLS: tuple[McpTool, ...] = tuple(_mcp_tool(t) for t in spec.TOOLS if t.mcp is not None)


TOOLS: dict[str, McpTool] = {t.name: t for t in _TOOLS}


def input_schema(tool: McpTool) -> dict[str, Any]:
    return spec.input_schema(tool.source, spec.MCP, spec.TOOLS)


def output_schema(tool: McpTool) -> dict[str, Any]:
    return spec.output_schema(tool.source, spec.MCP)


#: Protocol revisions that know ``outputSchema``/``structuredContent``/``title``, and
#: tool annotations.
_STRUCTURED_SINCE = "2025-06-18"
_ANNOTATIONS_SINCE = "2025-03-26"


def structured_for(protocol: str) -> bool:
    """Whether a connection of this revision takes ``structuredContent`` (and knows the
    ``outputSchema`` it follows)."""
    return protocol >= _STRUCTURED_SINCE


def for_revision(answer: dict[str, Any], protocol: str) -> dict[str, Any]:
    """A ``CallToolResult`` as a connection of this revision knows it: before 2025-06-18
    there is no ``structuredContent``; the text carries the message alone."""
    if structured_for(protocol) or "structuredContent" not in answer:
        return answer
    return {k: v for k, v in answer.items() if k != "structuredContent"}


def _path_arguments() -> tuple[str, ...]:
    names: set[str] = set()
    for t in _TOOLS:
        params = spec.shown_params(t.source, spec.MCP)
        paths = {p.name for p in params if p.arg.path}
        names |= paths | {alias for alias, name in t.source.aliases.items() if name in paths}
    return tuple(sorted(names))


#: Arguments that name a file or folder, under any name the server takes for them.
PATH_ARGUMENTS = _path_arguments()


def absolute_path(value: str, base: str) -> str | None:
    """``value`` made absolute against ``base`` when the path resolver would take it as
    relative to the first root (a plain relative path, or a ``file:`` URI holding one);
    None when it is to be passed on as it is: it needs no root (absolute, ``~``), or the
    resolver refuses it whatever the root (the server says why)."""
    try:
        expand(value, _NO_ROOTS)
    except ToolError:
        pass  # relative (it needs a root), or refused in any case
    else:
        return None
    try:
        return expand(value, Roots((base,)))
    except ToolError:
        return None


_NO_ROOTS = Roots(())


def absolute_paths(params: Any, base: str) -> dict[str, Any] | None:
    """A ``tools/call``'s params with each relative file path made absolute against
    ``base`` (this side's first root), for a server whose own first root may be another;
    None when nothing needs to change."""
    if not isinstance(params, dict):
        return None
    args = params.get("arguments")
    if not isinstance(args, dict):
        return None
    changed: dict[str, Any] = {}
    for key in PATH_ARGUMENTS:
        value = args.get(key)
        if isinstance(value, str):
            joined = absolute_path(value, base)
            if joined is not None:
                changed[key] = joined
        elif isinstance(value, list):  # several files (``file_paths``)
            each = [absolute_path(v, base) if isinstance(v, str) else None for v in value]
            if any(j is not None for j in each):
                changed[key] = [v if j is None else j for v, j in zip(value, each, strict=True)]
    if not changed:
        return None
    return {**params, "arguments": {**args, **changed}}


def listed(protocol: str) -> list[dict[str, Any]]:
    """The ``tools/list`` entries for a connection of this protocol revision."""
    out = []
    for t in _TOOLS:
        entry: dict[str, Any] = {
            "name": t.name,
            "description": spec.description(t.source, spec.MCP, spec.TOOLS),
            "inputSchema": input_schema(t),
        }
        if protocol >= _ANNOTATIONS_SINCE:
            read_only, destructive, idempotent = t.hints
            entry["annotations"] = {
                "title": t.title,
                "readOnlyHint": read_only,
                "destructiveHint": destructive,
                "idempotentHint": idempotent,
                "openWorldHint": False,
            }
        if protocol >= _STRUCTURED_SINCE:
            entry["title"] = t.title
            entry["outputSchema"] = output_schema(t)
        out.append(entry)
    return out


class UnknownTool(Exception):
    """A ``tools/call`` names no tool: a protocol error (-32602), not a tool result."""

    def __init__(self, name: object) -> None:
        known = ", ".join(TOOLS)
        super().__init__(f"Unknown tool: {name!r}. The tools are: {known}.")


def session_name(base: str, given: object) -> object:
    """The session a call runs in: ``base`` (the connection's), or a sub-agent's session
    namespaced under it, so that two connections never share one. A name that is the
    connection's own already (as results show it) is kept."""
    if not isinstance(given, str) or not given:
        return given  # left for the parameter check to refuse
    if given == base or given.startswith(base + "/"):
        return given
    return f"{base}/{given}"


def arguments_for(tool: McpTool, raw: Any, base: str) -> Any:
    """The command's arguments: the tool's, with the session made the connection's."""
    if not isinstance(raw, dict):
        return raw
    if "session" in raw:
        return {**raw, "session": session_name(base, raw["session"])}
    if tool.own_session:
        return {**raw, "session": base}
    return raw


async def call_tool(ctx: ToolContext, params: Any, base_session: str) -> dict[str, Any]:
    """Run one ``tools/call`` (its ``params``) in ``ctx``; the ``CallToolResult``.
    Raises :class:`UnknownTool` when ``params`` names no tool."""
    name = params.get("name") if isinstance(params, dict) else None
    tool = TOOLS.get(name) if isinstance(name, str) else None
    if tool is None:
        raise UnknownTool(name)
    command = COMMANDS[tool.command]
    raw = params.get("arguments")
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        return params_error(tool.name, ParamsError("`arguments` must be one JSON object."))
    try:
        parsed = parse(command, arguments_for(tool, raw, base_session))
    except ParamsError as exc:
        return params_error(tool.name, exc)
    return shaped(await run(ctx, command, parsed))


def params_error(tool: str, exc: ParamsError) -> dict[str, Any]:
    """A tool error for arguments that do not fit: it names the field and the fix."""
    text = f"{exc} Fix the arguments and call {tool} again."
    fields = {"field": exc.field_name} if exc.field_name is not None else {}
    return tool_error(INVALID_PARAMS, text, **fields)


def tool_error(error: str, text: str, **fields: Any) -> dict[str, Any]:
    """The ``CallToolResult`` of a call refused before any command ran: ``error`` its
    code, ``text`` the sentence for the model."""
    return shaped({"ok": False, "error": error, "message": text, **fields})


def shaped(result: dict[str, Any]) -> dict[str, Any]:
    """A command's result as a ``CallToolResult``."""
    content: list[dict[str, Any]] = [{"type": "text", "text": result.get("message", "")}]
    if result.get("type") == "image" and isinstance(result.get("data"), str):
        content.append(
            {"type": "image", "data": result["data"], "mimeType": result.get("media_type")}
        )
        result = {k: v for k, v in result.items() if k != "data"}  # delivered once, above
    images = result.get("images")
    if isinstance(images, list) and images:
        kept = []
        for img in images:
            if isinstance(img, dict) and isinstance(img.get("data"), str):
                content.append(
                    {"type": "image", "data": img["data"], "mimeType": img.get("media_type")}
                )
                img = {k: v for k, v in img.items() if k != "data"}
            kept.append(img)
        result = {**result, "images": kept}
    return {"content": content, "structuredContent": result, "isError": not result.get("ok")}


def with_note(answer: dict[str, Any], note: str) -> dict[str, Any]:
    """``answer`` (a ``CallToolResult``) with ``note`` put before its text."""
    content = list(answer.get("content") or [])
    if content and content[0].get("type") == "text":
        content[0] = {**content[0], "text": f"{note}\n\n{content[0].get('text', '')}"}
    else:
        content.insert(0, {"type": "text", "text": note})
    out = {**answer, "content": content}
    structured = answer.get("structuredContent")
    if isinstance(structured, dict):
        out["structuredContent"] = {
            **structured,
            "message": f"{note}\n\n{structured.get('message', '')}",
        }
    return out

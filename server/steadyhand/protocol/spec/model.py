"""What a tool is, once for every face, and how a face's view of it is derived.

A :class:`Tool` names a command and its parameter class (``protocol/params.py``, where
each parameter's type, default, bound and description are written), and adds what only
the tool as a whole has: its name on each face, its title and description for a model,
its hints and its result fields. A :class:`Face` is one way a model reaches the tools
(LSP commands, MCP tools, VS Code's language-model tools): its names, the sentences only
it needs, and the parameters it never shows, each with the reason.

Everything a face states is computed here from those two: the JSON Schema of the
arguments (:func:`input_schema`), of the result (:func:`output_schema`) and the
description (:func:`description`). Nothing is written twice.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, get_type_hints

from steadyhand.protocol.commands import DEFAULT_SESSION
from steadyhand.protocol.errors import ErrorCode
from steadyhand.protocol.params import Arg, Rule, arg_of

JsonSchema = dict[str, Any]


@dataclass(frozen=True, slots=True)
class Face:
    """One way a model reaches the tools."""

    #: ``lsp``, ``mcp`` or ``vscode``: the key tools use to name themselves on it.
    key: str
    #: How the docs name it.
    label: str
    #: Sentences only this face needs, put into descriptions where ``{name}`` stands.
    fragments: Mapping[str, str] = field(default_factory=dict)
    #: Parameters this face never shows, each with the reason (the face supplies them,
    #: or they would mislead its models).
    hidden: Mapping[str, str] = field(default_factory=dict)
    #: A shorter bound than the server's on a string parameter's length, with the reason
    #: (the face adds to the value before the server sees it).
    max_length: Mapping[str, tuple[int, str]] = field(default_factory=dict)
    #: Error codes only this face gives, besides the server's.
    errors: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Hints:
    """How a tool touches the workspace (MCP's annotations; VS Code: whether the tool
    changes files)."""

    read_only: bool = False
    destructive: bool = False
    idempotent: bool = False


READ_ONLY = Hints(read_only=True, idempotent=True)


@dataclass(frozen=True, slots=True)
class VsCodeTool:
    """What VS Code shows of a language-model tool beyond its schema."""

    name: str
    #: ``#name`` in a chat prompt.
    reference: str
    icon: str
    tags: tuple[str, ...]
    #: The sentence the user sees in the tools picker.
    user_description: str


@dataclass(frozen=True, slots=True)
class Tool:
    """One command, as every face offers it."""

    #: Short name, for ``{key}`` in descriptions (another tool's name on the same face).
    key: str
    #: The LSP command.
    command: str
    #: Its parameter class (``protocol/params.py``).
    params: type[Any]
    title: str
    #: For the model; ``{name}`` is filled in per face (:func:`description`).
    description: str
    hints: Hints
    #: Result fields beyond ``ok``, ``message``, ``error`` and ``path``: JSON Schema each,
    #: with its description.
    result: Mapping[str, JsonSchema] = field(default_factory=dict)
    #: The MCP tool's name (None: not an MCP tool; ``absent`` says why).
    mcp: str | None = None
    vscode: VsCodeTool | None = None
    #: Why the tool is not on a face that does not offer it, by face key.
    absent: Mapping[str, str] = field(default_factory=dict)
    #: Parameters one face does not show for this tool, with the reason, by face key.
    hide: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    #: Parameters a face's schema requires though the class gives them a default (the
    #: face leaves out the one that could stand in for them), by face key.
    require: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    #: False for a second view of a command that another entry offers over LSP (a face
    #: may split one command into tools for its models; LSP has the command once).
    lsp: bool = True

    def name(self, face: Face) -> str | None:
        """The tool's name on ``face`` (None: not offered there)."""
        if face.key == "lsp":
            return self.command if self.lsp else None
        if face.key == "mcp":
            return self.mcp
        if face.key == "vscode":
            return self.vscode.name if self.vscode else None
        raise ValueError(f"unknown face {face.key!r}")

    @property
    def short(self) -> str:
        """The command's name without ``steadyhand.`` (what the server's messages say)."""
        return self.command.removeprefix("steadyhand.")

    @property
    def own_session(self) -> bool:
        """Whether ``session`` is the session the call runs in (default ``"default"``),
        rather than a filter (default: every session's)."""
        fields = {f.name: f for f in dataclasses.fields(self.params)}
        return "session" in fields and fields["session"].default == DEFAULT_SESSION

    @property
    def rules(self) -> tuple[Rule, ...]:
        """Conditions across parameters (a parameter needed in some cases only, two that
        exclude each other), which the schemas leave to the descriptions."""
        rules: tuple[Rule, ...] = getattr(self.params, "RULES", ())
        return rules

    @property
    def aliases(self) -> Mapping[str, str]:
        """Other spellings the server takes for a parameter (never advertised)."""
        aliases: Mapping[str, str] = getattr(self.params, "ALIASES", {})
        return aliases


@dataclass(frozen=True, slots=True)
class Param:
    """One parameter as a face shows it."""

    name: str
    arg: Arg
    hint: Any
    required: bool
    default: Any


def params_of(
    cls: type[Any],
    face: Face,
    hide: Mapping[str, str] | None = None,
    require: tuple[str, ...] = (),
) -> list[Param]:
    """The parameters of ``cls`` that ``face`` shows, in declaration order; ``require``:
    those it requires though they have a default."""
    hints = get_type_hints(cls)
    out = []
    for f in dataclasses.fields(cls):
        if f.name in face.hidden or (hide is not None and f.name in hide):
            continue
        arg = arg_of(cls, f.name)
        if arg is None:
            raise TypeError(f"{cls.__name__}.{f.name} has no Arg: say what it means to a model")
        required = f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
        default = None if required else f.default
        required = required or f.name in require
        out.append(Param(f.name, arg, hints[f.name], required, default))
    return out


def shown_params(tool: Tool, face: Face) -> list[Param]:
    return params_of(tool.params, face, tool.hide.get(face.key), tool.require.get(face.key, ()))


class _Names(dict[str, str]):
    """The fill-ins of a description: tool keys and fragments; a missing one is an error
    (a description naming a tool the face does not have)."""

    def __init__(self, face: Face, tool: Tool | None, tools: typing.Iterable[Tool]) -> None:
        super().__init__(face.fragments)
        for t in tools:
            name = t.name(face)
            if name is not None:
                self[t.key] = name
        if tool is not None:
            name = tool.name(face)
            self["aka"] = (
                f" The server's messages call this tool {tool.short}."
                if name is not None and name != tool.short and face.key != "lsp"
                else ""
            )

    def __missing__(self, key: str) -> str:
        raise KeyError(f"a description names {{{key}}}, which this face does not have")


def fill(text: str, face: Face, tools: typing.Iterable[Tool], tool: Tool | None = None) -> str:
    """``text`` with each ``{name}`` filled in for ``face``."""
    return text.format_map(_Names(face, tool, tools))


def description(tool: Tool, face: Face, tools: typing.Iterable[Tool]) -> str:
    return fill(tool.description, face, tools, tool)


def json_type(tp: Any) -> str:
    if typing.get_origin(tp) in (types.UnionType, typing.Union):
        (inner,) = [a for a in typing.get_args(tp) if a is not type(None)]
        return json_type(inner)
    if tp is bool:
        return "boolean"
    if tp is int:
        return "integer"
    if tp is str:
        return "string"
    if typing.get_origin(tp) is list:
        return "array"
    raise TypeError(f"no JSON type for {tp!r}")


def item_type(tp: Any) -> Any:
    """The type of a list parameter's items."""
    if typing.get_origin(tp) in (types.UnionType, typing.Union):
        (tp,) = [a for a in typing.get_args(tp) if a is not type(None)]
    (item,) = typing.get_args(tp)
    return item


def item_class(tp: Any) -> type[Any]:
    """The class of a list parameter's items, objects with named fields."""
    item = item_type(tp)
    if not (dataclasses.is_dataclass(item) and isinstance(item, type)):
        raise TypeError(f"list items are objects with named fields, not {item!r}")
    return item


def param_schema(p: Param, face: Face, tools: typing.Iterable[Tool]) -> JsonSchema:
    """One parameter's JSON Schema on ``face``."""
    tools = list(tools)
    schema: JsonSchema = {"type": json_type(p.hint), **p.arg.schema()}
    if schema["type"] == "array":
        item = item_type(p.hint)
        if dataclasses.is_dataclass(item):
            schema["items"] = object_schema(params_of(item_class(p.hint), face), face, tools)
        else:
            schema["items"] = {"type": json_type(item)}
    if p.name in face.max_length:
        bound, _why = face.max_length[p.name]
        schema["maxLength"] = min(schema.get("maxLength", bound), bound)
    if p.default is not None and p.name != "session" and not p.required:
        schema["default"] = p.default
    schema["description"] = fill(p.arg.doc, face, tools)
    return schema


def object_schema(params: list[Param], face: Face, tools: typing.Iterable[Tool]) -> JsonSchema:
    tools = list(tools)
    return {
        "type": "object",
        "properties": {p.name: param_schema(p, face, tools) for p in params},
        "required": [p.name for p in params if p.required],
        "additionalProperties": False,
    }


def input_schema(tool: Tool, face: Face, tools: typing.Iterable[Tool]) -> JsonSchema:
    """The JSON Schema of the tool's arguments on ``face``: every parameter the face
    shows, with its type and bound; unknown keys refused. What it cannot say: conditions
    across parameters (``Tool.rules``, stated in the descriptions), aliases, and that the
    server takes ``null`` for a parameter left out."""
    return object_schema(shown_params(tool, face), face, tools)


#: The fields every result has.
COMMON_RESULT: dict[str, JsonSchema] = {
    "ok": {"type": "boolean", "description": "Whether the call did what was asked."},
    "message": {
        "type": "string",
        "description": "What happened, or why not and what to do next.",
    },
    "path": {"type": "string", "description": "The file's absolute real path."},
}


def output_schema(tool: Tool, face: Face) -> JsonSchema:
    """The JSON Schema of the tool's result object (MCP's ``structuredContent``)."""
    errors = sorted({str(c) for c in ErrorCode} | set(face.errors))
    return {
        "type": "object",
        "properties": {
            **COMMON_RESULT,
            "error": {
                "type": "string",
                "enum": errors,
                "description": "Why not, as a stable code (only when ok is false).",
            },
            **tool.result,
        },
        "required": ["ok", "message"],
    }

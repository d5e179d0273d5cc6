"""The tool source holds the faces together: every command is described once, each face's
schema accepts exactly what the server's parser accepts, and the files made from the
source (the VS Code extension's tools, the docs' tool tables) are what it gives."""

from __future__ import annotations

import dataclasses
import json
import re
import types
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from steadyhand.protocol import commands, spec
from steadyhand.protocol import params as P
from steadyhand.protocol.spec import emit
from steadyhand.tools.table import COMMANDS, parse
from tests.unit.protocol import schema_samples as samples

ROOT = Path(__file__).resolve().parents[3]

#: The checks on values before they were written beside each parameter: the behaviour
#: every bound must keep exactly.
_PAGES = re.compile(r"^\s*\d+\s*(?:-\s*\d*\s*)?(?:,\s*\d+\s*(?:-\s*\d*\s*)?)*$")
_BEFORE: dict[str, tuple[Any, str]] = {
    "offset": (lambda v: v >= 0, "a line number (1 is the first line; 0 counts as 1)"),
    "limit": (lambda v: v >= 1, "a positive line count"),
    "session": (lambda v: 0 < len(v) <= 256, "a non-empty name of at most 256 characters"),
    "parent": (lambda v: 0 < len(v) <= 256, "a non-empty name of at most 256 characters"),
    "expected_replacements": (lambda v: v >= 1, "a positive number of replacements"),
    "edits": (lambda v: len(v) >= 1, "a non-empty list of {old_string, new_string} objects"),
    "checkpoint": (lambda v: 0 < len(v) <= 256, "a non-empty name of at most 256 characters"),
    "since": (lambda v: 0 < len(v) <= 256, "a checkpoint id or label (at most 256 characters)"),
    "id": (lambda v: 0 < len(v) <= 64, "a change id as changes or history lists it"),
    "label": (lambda v: len(v) <= 256, "a label of at most 256 characters"),
    "pages": (
        lambda v: _PAGES.match(v) is not None and re.search(r"\d{10}", v) is None,
        'page numbers such as "3", "1-5", "7-" or "1,4-6" (each of at most 9 digits)',
    ),
    "cell_id": (
        lambda v: 0 < len(v) <= 256,
        "a cell id as read shows it (at most 256 characters)",
    ),
    "edit_mode": (
        lambda v: v in ("replace", "insert", "delete"),
        '"replace", "insert" or "delete"',
    ),
    "cell_type": (lambda v: v in ("code", "markdown", "raw"), '"code", "markdown" or "raw"'),
    "file_paths": (
        lambda v: 1 <= len(v) <= 20,
        "a list of 1 to 20 paths (read more in further calls)",
    ),
    "depth": (lambda v: v >= 1, "a positive depth (1: the folder's own entries)"),
    "pattern": (lambda v: 0 < len(v) <= 10_000, "a non-empty pattern of at most 10,000 characters"),
    "glob": (lambda v: 0 < len(v) <= 4096, "a non-empty glob such as *.py or src/**/*.ts"),
    "context": (lambda v: 0 <= v <= 100, "a number of lines from 0 to 100"),
    "before": (lambda v: 0 <= v <= 100, "a number of lines from 0 to 100"),
    "after": (lambda v: 0 <= v <= 100, "a number of lines from 0 to 100"),
}
#: Checks of one class's parameter made after the others (``__post_init__``), now beside
#: the parameter like the rest: the values taken and the sentence are the same.
_BEFORE_IN_CLASS: dict[tuple[str, str], tuple[Any, str]] = {
    ("ListParams", "type"): (
        lambda v: v in ("files", "folders", "all"),
        'one of "files", "folders", "all"',
    ),
    ("ListParams", "sort"): (lambda v: v in ("name", "modified"), 'one of "name", "modified"'),
    ("SearchParams", "output_mode"): (
        # Grep's "files_with_matches" is taken for "files" before the check
        lambda v: v in ("files", "content", "count", "files_with_matches"),
        'one of "files", "content", "count"',
    ),
}
_INTS = ("offset", "limit", "expected_replacements", "depth", "context", "before", "after")

_CLASSES = sorted({t.params for t in spec.TOOLS} | {P.EditItem}, key=lambda c: c.__name__)


def _fields(cls: type[Any]) -> list[tuple[type[Any], dataclasses.Field[Any]]]:
    return [(cls, f) for f in dataclasses.fields(cls)]


_ALL_FIELDS = [pair for cls in _CLASSES for pair in _fields(cls)]


@pytest.mark.parametrize(
    ("cls", "f"), _ALL_FIELDS, ids=[f"{c.__name__}.{f.name}" for c, f in _ALL_FIELDS]
)
@given(data=st.data())
@settings(max_examples=60)
def test_every_bound_is_the_check_it_was(
    cls: type[Any], f: dataclasses.Field[Any], data: st.DataObject
) -> None:
    arg = P.arg_of(cls, f.name)
    assert arg is not None, f"{cls.__name__}.{f.name} says nothing to a model"
    before = _BEFORE_IN_CLASS.get((cls.__name__, f.name), _BEFORE.get(f.name))
    if (cls.__name__, f.name) == ("SearchParams", "type"):
        before = None  # a file type: no check (ListParams' `type` is another parameter)
    assert arg.bounded is (before is not None)
    if before is None:
        return
    check, what = before
    assert arg.what == what
    value = data.draw(
        st.one_of(
            st.integers(-3, 3),
            st.integers(98, 102),
            st.text(max_size=300),
            st.sampled_from(_EDGES),
            # page lists, well formed or nearly: digits (any script), blanks, commas, dashes
            st.from_regex(r"[\d\s,\-]{0,30}", fullmatch=True),
            st.from_regex(_PAGES),
        )
        if f.name not in ("edits", "file_paths")
        else st.lists(st.none(), max_size=25)
    )
    if isinstance(value, int) != (f.name in _INTS):
        return  # another type: refused before any bound
    assert arg.holds(value) == bool(check(value)), value


_EDGES = [
    "",
    "x" * 64,
    "x" * 65,
    "x" * 256,
    "x" * 257,
    "x" * 4096,
    "x" * 4097,
    "x" * 10_000,
    "x" * 10_001,
    "files",
    "folders",
    "all",
    "name",
    "modified",
    "content",
    "count",
    "files_with_matches",
    "replace",
    "insert",
    "code",
    "3",
    "1-5",
    "7-",
    " 1 , 4 - 6 ",
    "123456789",
    "1234567890",
    "1-1234567890",
    "3\n",
    "٣",
    "1-2-3",
]


def test_every_command_is_described_once_and_answered() -> None:
    assert sorted(spec.BY_COMMAND) == sorted(commands.ALL_COMMANDS)
    assert {t.command for t in spec.TOOLS} == set(spec.BY_COMMAND)
    assert set(COMMANDS) == set(commands.ALL_COMMANDS)
    for t in spec.TOOLS:
        assert COMMANDS[t.command].params is t.params
    for face in spec.FACES:
        names = [t.name(face) for t in spec.TOOLS if t.name(face) is not None]
        assert len(names) == len(set(names)), face.key


def test_a_tool_missing_from_a_face_says_why_and_so_does_a_hidden_parameter() -> None:
    for t in spec.TOOLS:
        for face in spec.FACES:
            if t.name(face) is None:
                assert len(t.absent.get(face.key, "")) > 20, (t.command, face.key)
            else:
                assert face.key not in t.absent, (t.command, face.key)
        for face_key, hidden in t.hide.items():
            fields = {f.name for f in dataclasses.fields(t.params)}
            for name, why in hidden.items():
                assert name in fields and len(why) > 20, (t.command, face_key, name)
    for face in spec.FACES:
        for name, why in face.hidden.items():
            assert len(why) > 20, (face.key, name)


def _taken(tool: spec.Tool) -> set[str]:
    return {f.name for f in dataclasses.fields(tool.params)} | set(tool.aliases)


def _faces_of(tool: spec.Tool) -> list[spec.Face]:
    return [f for f in (spec.LSP, spec.VSCODE) if tool.name(f) is not None]


def _cases() -> list[tuple[spec.Tool, spec.Face]]:
    return [(t, f) for t in spec.TOOLS for f in _faces_of(t)]


def _run_on(face: spec.Face, tool: spec.Tool, raw: dict[str, Any]) -> Any:
    """``raw`` as the face hands it to the parser: VS Code adds the session it runs in."""
    if face is spec.VSCODE and "session" in face.hidden:
        raw = {**raw, "session": "default"}
    return parse(COMMANDS[tool.command], raw)


def _rules_hold(tool: spec.Tool, raw: dict[str, Any]) -> bool:
    """Whether the conditions across parameters hold (a parameter needed in some cases
    only, two that exclude each other: what the schemas leave to the descriptions)."""
    defaults = {
        f.name: f.default
        for f in dataclasses.fields(tool.params)
        if f.default is not dataclasses.MISSING
    }
    seen = types.SimpleNamespace(**{**defaults, **raw})
    return not any(rule.broken(seen) for rule in tool.rules)


_FEW = settings(max_examples=40, suppress_health_check=[HealthCheck.too_slow])


@pytest.mark.parametrize(
    ("tool", "face"), _cases(), ids=[f"{f.key}:{t.short}" for t, f in _cases()]
)
@given(data=st.data())
@_FEW
def test_what_the_schema_accepts_the_server_accepts(
    tool: spec.Tool, face: spec.Face, data: st.DataObject
) -> None:
    schema = spec.input_schema(tool, face, spec.TOOLS)
    raw = data.draw(samples.valid(schema))
    jsonschema.Draft202012Validator(schema).validate(raw)
    if _rules_hold(tool, raw):
        _run_on(face, tool, raw)
    else:
        with pytest.raises(P.ParamsError) as info:
            _run_on(face, tool, raw)
        assert info.value.field_name in {r.field for r in tool.rules}


@pytest.mark.parametrize(
    ("tool", "face"), _cases(), ids=[f"{f.key}:{t.short}" for t, f in _cases()]
)
@given(data=st.data())
@_FEW
def test_what_the_schema_refuses_the_server_refuses(
    tool: spec.Tool, face: spec.Face, data: st.DataObject
) -> None:
    schema = spec.input_schema(tool, face, spec.TOOLS)
    raw, where = data.draw(broken(schema, _taken(tool)))
    assert not jsonschema.Draft202012Validator(schema).is_valid(raw), (raw, where)
    with pytest.raises(P.ParamsError):
        _run_on(face, tool, raw)


@st.composite
def broken(draw: st.DrawFn, schema: samples.Schema, taken: set[str]) -> tuple[Any, str]:
    """A valid object broken in one place: an unknown key, a value of the wrong type or
    out of its bound, at the top or inside a list's item."""
    raw = draw(samples.valid(schema))
    target, path = schema, ""
    items = [
        (k, p)
        for k, p in schema["properties"].items()
        if p["type"] == "array" and p["items"]["type"] == "object" and raw.get(k)
    ]
    if items and draw(st.booleans()):
        key, prop = draw(st.sampled_from(items))
        target, path = prop["items"], f"{key}[0]."
        inner = dict(raw[key][0])
        raw = {**raw, key: [inner, *raw[key][1:]]}
        holder = inner
    else:
        holder = raw
    kinds = ["unknown"]
    props = target["properties"]
    if props:
        kinds.append("type")
    bounded = [k for k, p in props.items() if samples.out_of_bounds(p) is not None]
    if bounded:
        kinds.append("bound")
    kind = draw(st.sampled_from(kinds))
    if kind == "unknown":
        key = draw(samples.unknown_key(target, taken if not path else set()))
        holder[key] = draw(st.integers() | st.text(max_size=3))
    elif kind == "type":
        key = draw(st.sampled_from(sorted(props)))
        holder[key] = draw(samples.wrong_type(props[key]))
    else:
        key = draw(st.sampled_from(sorted(bounded)))
        strategy = samples.out_of_bounds(props[key])
        assert strategy is not None
        holder[key] = draw(strategy)
    return raw, f"{kind} {path}{key}"


def test_a_hidden_parameter_is_not_offered_and_every_other_is() -> None:
    for t in spec.TOOLS:
        fields = [f.name for f in dataclasses.fields(t.params)]
        for face in spec.FACES:
            if t.name(face) is None:
                continue
            shown = spec.input_schema(t, face, spec.TOOLS)["properties"]
            hidden = set(face.hidden) | set(t.hide.get(face.key, {}))
            assert list(shown) == [f for f in fields if f not in hidden], (t.command, face.key)


#: Tools that change the tree (move, delete): their results carry no diff of a text.
_TREE_TOOLS = {commands.MOVE, commands.DELETE}


def test_every_changing_tool_offers_include_diff_on_every_face() -> None:
    for t in spec.TOOLS:
        if not t.hints.destructive or t.command in _TREE_TOOLS:
            continue
        assert "include_diff" in _taken(t), t.command
        for face in spec.FACES:
            if t.name(face) is not None:
                schema = spec.input_schema(t, face, spec.TOOLS)
                assert "include_diff" in schema["properties"], (t.command, face.key)


def test_descriptions_name_only_tools_of_their_face() -> None:
    for face in spec.FACES:
        ours = {t.name(face) for t in spec.TOOLS} - {None}
        others = (
            {t.name(f) for f in spec.FACES if f is not face for t in spec.TOOLS} - ours - {None}
        )
        for t in spec.TOOLS:
            if t.name(face) is None:
                continue
            text = spec.description(t, face, spec.TOOLS)
            props = json.dumps(spec.input_schema(t, face, spec.TOOLS))
            for other in others:
                if other.startswith("steadyhand"):  # a command or an LM tool's name
                    assert not re.search(rf"\b{re.escape(other)}\b", text + props), (
                        t.command,
                        face.key,
                        other,
                    )


def test_the_files_made_from_the_source_are_what_it_gives() -> None:
    differ = emit.emit(ROOT, check=True)
    assert differ == [], (
        f"{', '.join(map(str, differ))} differ from the tool source: run `make tool-schemas`"
    )


def test_package_json_declares_the_language_model_tools_of_the_source() -> None:
    pkg = json.loads((ROOT / emit.PACKAGE_JSON).read_text(encoding="utf-8"))
    assert pkg["contributes"]["languageModelTools"] == emit.language_model_tools()
    names = [t.vscode.name for t in spec.TOOLS if t.vscode is not None]
    events = [e for e in pkg["activationEvents"] if e.startswith("onLanguageModelTool:")]
    assert events == [f"onLanguageModelTool:{n}" for n in names]
    contributed = {c["command"] for c in pkg["contributes"]["commands"]}
    hidden = {
        m["command"] for m in pkg["contributes"]["menus"]["commandPalette"] if m["when"] == "false"
    }
    assert set(commands.ALL_COMMANDS) <= contributed & hidden


def test_the_extensions_field_table_is_the_source() -> None:
    text = (ROOT / emit.GENERATED_TS).read_text(encoding="utf-8")
    assert text == emit.generated_ts()
    for t in spec.TOOLS:
        if t.vscode is None:
            continue
        block = text.split(f"tool: {json.dumps(t.vscode.name)}")[1].split("\n  },")[0]
        fields = re.findall(r'^      \{ name: "(\w+)"', block, re.M)
        assert fields == [p.name for p in spec.shown_params(t, spec.VSCODE)], t.command


def test_the_docs_name_every_tool() -> None:
    protocol = (ROOT / "docs" / "protocol.md").read_text(encoding="utf-8")
    mcp = (ROOT / "docs" / "mcp.md").read_text(encoding="utf-8")
    vscode = (ROOT / "docs" / "vscode.md").read_text(encoding="utf-8")
    all_commands = protocol.split("## All commands")[1].split("\n## ")[0]
    for t in spec.TOOLS:
        assert f"`{t.command}`" in all_commands, t.command
        if t.mcp is not None:
            assert f"| `{t.mcp}` | `{t.command}` |" in mcp, t.mcp
        if t.vscode is not None:
            assert f"| `{t.vscode.name}` | `{t.command}` |" in vscode, t.vscode.name
    assert emit.mcp_table() in mcp
    assert emit.vscode_table() in vscode
    generated = mcp.split("<!-- the MCP tools:")[1].split("<!-- end of the MCP tools -->")[0]
    listed = re.findall(r"^\| `(\w+)` \| `steadyhand\.", generated, re.M)
    assert listed == [t.mcp for t in spec.TOOLS if t.mcp is not None]


def test_the_extensions_readme_lists_what_each_tool_takes() -> None:
    readme = (ROOT / "vscode-extension" / "README.md").read_text(encoding="utf-8")
    for t in spec.TOOLS:
        if t.vscode is None:
            continue
        row = re.search(rf"^\| `{t.vscode.name}` \|([^\n]*)", readme, re.M)
        assert row is not None, t.vscode.name
        named = set(re.findall(r"`(\w+)`", row.group(1)))
        fields = {f.name for f in dataclasses.fields(t.params)}
        item_fields = {f.name for f in dataclasses.fields(P.EditItem)}
        shown = {p.name for p in spec.shown_params(t, spec.VSCODE)}
        assert shown <= named, (t.vscode.name, shown - named)
        assert not (named & (fields - shown) - item_fields), (t.vscode.name, named - shown)


def test_a_bound_says_what_it_must_be() -> None:
    with pytest.raises(ValueError, match="says what its value must be"):
        P.Arg("x", minimum=1)
    with pytest.raises(P.ParamsError, match="`pages` must be page numbers"):
        P.structure(P.ReadParams, {"file_path": "a", "pages": "1-1234567890"})
    assert P.structure(P.ReadParams, {"file_path": "a", "pages": "٣"}).pages == "٣"


def test_every_changing_tool_names_every_refusal_of_the_writer() -> None:
    """A tool that replaces or deletes files may meet each refusal of the one writer
    (``io_error``; ``file_in_use`` where another program holds the file, on Windows): its
    description names them on every face, so a model knows what the code means."""
    for t in spec.TOOLS:
        if not t.hints.destructive:
            continue
        for face in spec.FACES:
            if t.name(face) is None:
                continue
            text = spec.description(t, face, spec.TOOLS)
            for code in ("io_error", "file_in_use"):
                assert re.search(rf"\b{code}\b", text), (t.command, face.key, code)

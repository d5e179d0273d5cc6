"""The MCP tools as ``tools/list`` states them: valid JSON Schemas, the LSP commands'
arguments, and schemas that accept exactly what the command table's parser accepts once a
call has gone the MCP face's way (``arguments_for``)."""

from __future__ import annotations

import dataclasses
import os
from typing import Any

import jsonschema
import mcp_types
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from steadyhand.mcp import tools
from steadyhand.protocol import commands as names
from steadyhand.protocol import params as P
from steadyhand.protocol.errors import ErrorCode
from steadyhand.tools.table import COMMANDS, parse

REVISIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
BASE = "mcp-1a2b3c"  # a connection's session: ``mcp-`` and 6 hex digits


@pytest.mark.parametrize("protocol", REVISIONS)
def test_the_tools_list_answer_is_valid_mcp_and_valid_json_schema(protocol: str) -> None:
    listed = tools.listed(protocol)
    mcp_types.ListToolsResult.model_validate({"tools": listed})
    for entry in listed:
        jsonschema.Draft202012Validator.check_schema(entry["inputSchema"])
        assert entry["inputSchema"]["type"] == "object"
        assert entry["inputSchema"]["additionalProperties"] is False
        if "outputSchema" in entry:
            jsonschema.Draft202012Validator.check_schema(entry["outputSchema"])
            assert entry["outputSchema"]["type"] == "object"
        # hosts refuse combinators at the top of a tool's schema
        assert not {"anyOf", "oneOf", "allOf", "if", "not"} & set(entry["inputSchema"])


def _lsp_params(command: str) -> list[str]:
    return [f.name for f in dataclasses.fields(COMMANDS[command].params)]


def test_every_mcp_tool_takes_every_argument_of_its_command() -> None:
    """Every argument of a command is offered by its MCP tool, or by its tools together
    where one command is several tools (``steadyhand.read``: one file, several files)."""
    listed = {t["name"]: t for t in tools.listed("2025-11-25")}
    offered: dict[str, set[str]] = {}
    for name, tool in tools.TOOLS.items():
        props = list(listed[name]["inputSchema"]["properties"])
        assert props == [p for p in _lsp_params(tool.command) if p in props], name
        offered.setdefault(tool.command, set()).update(props)
    for command, names_offered in offered.items():
        assert names_offered == set(_lsp_params(command)), command
    for name in ("edit_file", "multi_edit", "write_file", "notebook_edit", "undo", "rewind"):
        assert "include_diff" in listed[name]["inputSchema"]["properties"], name
    undo = listed["undo"]["inputSchema"]
    assert "id" in undo["properties"] and undo["required"] == []
    assert listed["changes"]["annotations"]["readOnlyHint"] is True
    assert listed["change"]["inputSchema"]["required"] == ["id"]
    assert {t.command for t in tools.TOOLS.values()} >= {names.CHANGES, names.CHANGE}


def test_a_result_of_every_error_code_fits_the_output_schema() -> None:
    for entry in tools.listed("2025-11-25"):
        validator = jsonschema.Draft202012Validator(entry["outputSchema"])
        for code in [*ErrorCode, tools.INVALID_PARAMS, tools.NOT_ATTACHED]:
            validator.validate({"ok": False, "error": str(code), "message": "why, and next"})
        assert not validator.is_valid({"ok": False, "error": "no_such_code", "message": "m"})


def test_a_relative_path_is_made_absolute_under_every_name_a_tool_takes_it() -> None:
    """Attached to an editor's server whose first root is another, a relative path means
    this side's root whatever the argument is called: ``changes``'s ``path`` (or its
    ``file_path``), a notebook's ``notebook_path``, a listing's, a search's or a new
    folder's ``path``, each of ``file_paths``."""
    for name, args, key in (
        ("changes", {"path": "src"}, "path"),
        ("changes", {"file_path": "src/a.py"}, "file_path"),
        ("notebook_edit", {"notebook_path": "n.ipynb", "cell_id": "c"}, "notebook_path"),
        ("change", {"id": "abcdef", "file_path": "a.py"}, "file_path"),
        ("list_files", {"path": "src"}, "path"),
        ("grep", {"pattern": "x", "path": "src"}, "path"),
        ("create_directory", {"path": "new/dir"}, "path"),
    ):
        out = tools.absolute_paths({"name": name, "arguments": args}, "/b")
        assert out is not None, (name, key)
        assert out["arguments"][key] == os.path.join("/b", args[key])
    several = {"name": "read_multiple_files", "arguments": {"file_paths": ["a.py", "/c/d.py", 3]}}
    out = tools.absolute_paths(several, "/b")
    assert out is not None
    assert out["arguments"]["file_paths"] == [os.path.join("/b", "a.py"), "/c/d.py", 3]


# -- the schemas against the parser ------------------------------------------------------

from tests.unit.protocol import schema_samples as samples  # noqa: E402
from tests.unit.protocol.test_tool_source import _rules_hold, _taken, broken  # noqa: E402

_TOOLS = sorted(tools.TOOLS.values(), key=lambda t: t.name)
_FEW = settings(max_examples=40, suppress_health_check=[HealthCheck.too_slow])


def _schema(tool: tools.McpTool) -> dict[str, Any]:
    return tools.input_schema(tool)


def _run(tool: tools.McpTool, raw: dict[str, Any]) -> Any:
    """The arguments as ``call_tool`` hands them to the parser."""
    return parse(COMMANDS[tool.command], tools.arguments_for(tool, raw, BASE))


@pytest.mark.parametrize("tool", _TOOLS, ids=lambda t: t.name)
@given(data=st.data())
@_FEW
def test_what_an_mcp_schema_accepts_the_server_accepts(
    tool: tools.McpTool, data: st.DataObject
) -> None:
    schema = _schema(tool)
    raw = data.draw(samples.valid(schema))
    jsonschema.Draft202012Validator(schema).validate(raw)
    if _rules_hold(tool.source, raw):
        _run(tool, raw)
    else:
        with pytest.raises(P.ParamsError):
            _run(tool, raw)


@pytest.mark.parametrize("tool", _TOOLS, ids=lambda t: t.name)
@given(data=st.data())
@_FEW
def test_what_an_mcp_schema_refuses_the_server_refuses(
    tool: tools.McpTool, data: st.DataObject
) -> None:
    schema = _schema(tool)
    raw, where = data.draw(broken(schema, _taken(tool.source)))
    assert not jsonschema.Draft202012Validator(schema).is_valid(raw), (raw, where)
    with pytest.raises(P.ParamsError):
        _run(tool, raw)


def test_the_longest_session_name_the_schema_takes_fits_the_server_once_namespaced() -> None:
    for tool in _TOOLS:
        prop = _schema(tool)["properties"].get("session")
        if prop is None:
            continue
        longest = "s" * prop["maxLength"]
        _run(tool, {**_required(tool), "session": longest})
        with pytest.raises(P.ParamsError, match="at most 256 characters"):
            _run(tool, {**_required(tool), "session": longest + "s"})


_MINIMAL: dict[str, Any] = {
    "file_path": "a",
    "old_string": "a",
    "new_string": "b",
    "content": "",
    "edits": [{"old_string": "a", "new_string": "b"}],
    "checkpoint": "c",
    "id": "abcdef",
    "file_paths": ["a"],
    "pattern": "x",
    "path": "p",
}


def _required(tool: tools.McpTool) -> dict[str, Any]:
    """The fewest arguments a call of ``tool`` is taken with."""
    raw = {k: _MINIMAL[k] for k in _schema(tool)["required"]}
    needed = {"undo": {"file_path": "a"}, "notebook_edit": {"cell_id": "c"}}
    return raw | needed.get(tool.name, {})

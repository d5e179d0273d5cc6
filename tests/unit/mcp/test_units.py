"""The pure parts of the MCP face: line framing, answer ids, session names, which server
holds a path, and what each protocol revision is told."""

from __future__ import annotations

import os

from hypothesis import given
from hypothesis import strategies as st

from steadyhand.mcp import jsonrpc as rpc
from steadyhand.mcp import tools
from steadyhand.mcp.attach import answer_id
from steadyhand.mcp.rendezvous import Descriptor

ids = st.one_of(st.integers(min_value=-(2**53), max_value=2**53), st.text(max_size=20))
lines = st.lists(st.binary(min_size=1, max_size=30).filter(lambda b: b"\n" not in b), max_size=8)


@given(lines, st.lists(st.integers(min_value=1, max_value=40), max_size=10))
def test_lines_come_out_whole_however_the_bytes_arrive(sent: list[bytes], cuts: list[int]) -> None:
    got: list[bytes] = []
    framer = rpc.LineFramer(got.append, lambda exc: None)
    data = b"".join(line + b"\n" for line in sent)
    at = 0
    for cut in cuts:
        framer.data_received(data[at : at + cut])
        at += cut
    framer.data_received(data[at:])
    assert got == [line for line in sent if line != b"\r"]


@given(ids, st.dictionaries(st.text(max_size=5), st.text(max_size=20), max_size=3))
def test_an_answers_id_is_read_from_its_start(msg_id: int | str, result: dict[str, str]) -> None:
    line = rpc.encode(rpc.result_message(msg_id, result)).rstrip(b"\n")
    assert answer_id(line) == msg_id
    error = rpc.encode(rpc.error_message(msg_id, -32602, "no")).rstrip(b"\n")
    assert answer_id(error) == msg_id


names = st.text(alphabet=st.characters(blacklist_characters="/"), min_size=1, max_size=12)


@given(names, names, st.text(max_size=30), st.text(max_size=30))
def test_two_connections_never_share_a_session(a: str, b: str, g1: str, g2: str) -> None:
    one, two = f"mcp-{a}", f"mcp-{b}"
    n1, n2 = tools.session_name(one, g1), tools.session_name(two, g2)
    if not g1 or not g2:
        assert (n1, n2) == (g1, g2) or "" in (n1, n2)  # empty: refused by the parameter check
        return
    assert n1 == one or str(n1).startswith(one + "/")
    if a != b:
        assert n1 != n2


def test_missing_session_is_the_connections_own_only_where_it_means_this_session() -> None:
    base = "mcp-abc"
    read = tools.arguments_for(tools.TOOLS["read_file"], {"file_path": "x"}, base)
    assert read["session"] == base
    undo = tools.arguments_for(tools.TOOLS["undo"], {"file_path": "x"}, base)
    assert "session" not in undo  # undo without a session: anyone's last change, as over LSP
    sub = tools.arguments_for(tools.TOOLS["undo"], {"file_path": "x", "session": "h"}, base)
    assert sub["session"] == "mcp-abc/h"


@given(st.lists(st.sampled_from(["a", "b", "ab", "c"]), min_size=1, max_size=4))
def test_the_deepest_root_holding_a_path(parts: list[str]) -> None:
    path = "/" + "/".join(parts)
    roots = ("/a", "/a/b", "/ab", "/b/c")
    d = Descriptor(1, "s", roots, "", "", 0.0, "f")
    held = [r for r in roots if path == r or path.startswith(r + os.sep)]
    assert d.covers(path) == (max(held, key=len) if held else None)


def test_each_revision_is_told_what_it_knows() -> None:
    old = tools.listed("2024-11-05")
    assert all(set(t) == {"name", "description", "inputSchema"} for t in old)
    mid = tools.listed("2025-03-26")
    assert all("annotations" in t and "outputSchema" not in t for t in mid)
    new = tools.listed("2025-11-25")
    assert all({"annotations", "outputSchema", "title"} <= set(t) for t in new)


def test_shape_problems() -> None:
    assert rpc.shape_problem([]) is not None
    assert rpc.shape_problem({"jsonrpc": "1.0", "id": 1, "method": "x"}) is not None
    assert rpc.shape_problem({"jsonrpc": "2.0", "id": True, "method": "x"}) is not None
    assert rpc.shape_problem({"jsonrpc": "2.0", "id": 1, "method": 3}) is not None
    assert rpc.shape_problem({"jsonrpc": "2.0", "id": 1, "method": "x", "params": 3}) is not None
    assert rpc.shape_problem({"jsonrpc": "2.0"}) is not None
    assert rpc.shape_problem({"jsonrpc": "2.0", "id": 1, "method": "x", "params": {}}) is None
    assert rpc.shape_problem({"jsonrpc": "2.0", "id": "a", "result": None}) is None


async def test_arguments_that_are_not_an_object_are_a_tool_error() -> None:
    for raw in ([{"file_path": "x"}], "x", 3):
        params = {"name": "read_file", "arguments": raw}
        answer = await tools.call_tool(None, params, "mcp-a")  # type: ignore[arg-type]
        assert answer["isError"] is True
        assert answer["structuredContent"]["error"] == "invalid_params"
        assert "`arguments` must be one JSON object" in answer["content"][0]["text"]


def test_a_line_over_the_limit_is_dropped_and_the_next_ones_read() -> None:
    """A host (or anything else) sending a line that never ends cannot grow the server's
    memory without bound: past the limit the line is dropped, said once, and reading goes
    on at the next line."""
    from steadyhand.mcp.jsonrpc import LineFramer

    lines: list[bytes] = []
    too_long: list[int] = []
    framer = LineFramer(
        lines.append, lambda exc: None, on_too_long=lambda: too_long.append(1), max_line=16
    )
    framer.data_received(b'{"a":1}\n{"b":')
    framer.data_received(b"x" * 10)
    framer.data_received(b"y" * 10)  # over 16 bytes, still no line end
    framer.data_received(b"z" * 100)
    framer.data_received(b'zz\n{"c":3}\n')
    framer.data_received(b"w" * 40 + b"\n")  # one chunk over the limit, then its end
    framer.data_received(b'{"d":4}\n')
    assert lines == [b'{"a":1}', b'{"c":3}', b'{"d":4}']
    assert too_long == [1, 1]

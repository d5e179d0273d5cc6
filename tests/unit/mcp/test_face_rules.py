"""The MCP face's decisions, on their own: which roots answer is in force, what a roots
answer names, which paths are made absolute against this side's root (exactly those the
resolver would take against the first root), what each revision is sent, how a held
framer hands on its lines, how the stdout writer bounds its backlog, and which settings
keys are typos."""

from __future__ import annotations

import asyncio
import os

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from steadyhand.config import setting_keys, unknown_settings
from steadyhand.mcp import jsonrpc as rpc
from steadyhand.mcp import tools
from steadyhand.mcp.server import RootsAnswers, roots_from
from steadyhand.paths.resolve import Roots, expand
from steadyhand.protocol.errors import ToolError

# -- roots --------------------------------------------------------------------------------


@given(st.lists(st.integers(min_value=1, max_value=12), max_size=30))
def test_the_newest_answered_request_is_in_force_whatever_the_order(order: list[int]) -> None:
    answers = RootsAnswers()
    for _ in range(12):
        answers.send()
    in_force = 0
    for seq in order:
        taken = answers.take(seq)
        assert taken is (seq > in_force)
        in_force = max(in_force, seq)
        assert answers.answered == in_force
    assert answers.newest_answered is (in_force == 12)


def test_a_roots_answer_is_a_list_of_roots_or_nothing() -> None:
    here = os.path.realpath("/")
    assert roots_from({"roots": [{"uri": "file:///"}]}) == [here]
    assert roots_from({"roots": []}) == []
    for bad in (None, 5, "x", [], {"roots": 5}, {"roots": "file:///"}, {"roots": {"uri": 1}}):
        assert roots_from(bad) is None, bad
    # entries that name no local folder are left out, the others kept in order
    listed = {"roots": [5, None, {"uri": 3}, {"uri": "file://otherhost/x"}, {"uri": "file:///"}]}
    assert roots_from(listed) == [here]


def test_a_roots_answer_is_taken_up_to_its_bound() -> None:
    from steadyhand.mcp.server import MAX_ROOTS

    many = {"roots": [{"uri": f"file:///r{i}"} for i in range(MAX_ROOTS * 3)]}
    got = roots_from(many)
    assert got is not None and len(got) == MAX_ROOTS


# -- relative paths -----------------------------------------------------------------------

paths = st.one_of(
    st.text(max_size=30),
    st.sampled_from(
        [
            "a.txt",
            "./a.txt",
            "../a.txt",
            "sub/../a.txt",
            "~/a.txt",
            "~",
            "/abs/a.txt",
            "file:///x/a.txt",
            "FILE:a.txt",
            "//server/share",
            "\\\\server\\share",
            " a.txt",
            "a\x00b",
            "\ud800.txt",
            "",
            "   ",
        ]
    ),
)


def _expanded(path: str, roots: Roots) -> str | tuple[str, str]:
    try:
        return expand(path, roots)
    except ToolError as exc:
        return ("refused", str(exc.code))


@settings(max_examples=400)
@given(paths)
def test_a_path_made_absolute_resolves_as_it_would_against_this_sides_root(path: str) -> None:
    """Sent to a server whose first root is another (A), the rewritten path means what the
    path means to a server whose first root is this side's (B)."""
    a, b = os.path.realpath("/srv/a"), os.path.realpath("/srv/b")
    joined = tools.absolute_path(path, b)
    sent = path if joined is None else joined
    assert _expanded(sent, Roots((a, b))) == _expanded(path, Roots((b,)))


def test_only_file_paths_of_a_call_are_rewritten() -> None:
    params = {"name": "edit_file", "arguments": {"file_path": "x.py", "old_string": "a.txt"}}
    out = tools.absolute_paths(params, "/b")
    assert out == {
        "name": "edit_file",
        "arguments": {"file_path": os.path.join("/b", "x.py"), "old_string": "a.txt"},
    }
    assert params["arguments"]["file_path"] == "x.py"  # the host's message is left alone
    for unchanged in (
        {"name": "read_file", "arguments": {"file_path": "/abs"}},
        {"name": "checkpoint", "arguments": {}},
        {"name": "read_file", "arguments": "x"},
        {"name": "read_file"},
        None,
        [],
    ):
        assert tools.absolute_paths(unchanged, "/b") is None


# -- revisions ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("protocol", "structured"),
    [("2024-11-05", False), ("2025-03-26", False), ("2025-06-18", True), ("2025-11-25", True)],
)
def test_structured_content_from_2025_06_18(protocol: str, structured: bool) -> None:
    answer = tools.shaped({"ok": True, "message": "done", "path": "/x"})
    got = tools.for_revision(answer, protocol)
    assert ("structuredContent" in got) is structured
    assert got["content"] == answer["content"] and got["isError"] is False
    listed = tools.listed(protocol)
    assert all(("outputSchema" in t) is structured for t in listed)


# -- holding a framer ---------------------------------------------------------------------


@settings(max_examples=300)
@given(
    st.lists(st.binary(min_size=1, max_size=12).filter(lambda b: b"\n" not in b), max_size=20),
    st.lists(st.integers(min_value=1, max_value=25), max_size=12),
    st.lists(st.sampled_from(["hold", "release", "hold2", "release2", "none"]), max_size=40),
)
def test_a_held_framer_hands_on_every_line_once_in_order_and_none_while_held(
    sent: list[bytes], cuts: list[int], actions: list[str]
) -> None:
    got: list[bytes] = []
    steps = iter(actions)
    framer: rpc.LineFramer

    def on_line(line: bytes) -> None:
        assert not framer.held, "a line was handed on while held"
        got.append(line)
        act(next(steps, "none"))  # a line's handler may hold or release (answers back up)

    def act(action: str) -> None:
        if action.startswith("hold"):
            framer.hold(action[-1] if action.endswith("2") else "a")
        elif action.startswith("release"):
            framer.release(action[-1] if action.endswith("2") else "a")

    framer = rpc.LineFramer(on_line, lambda exc: None)
    data = b"".join(line + b"\n" for line in sent)
    at = 0
    for cut in [*cuts, len(data)]:
        framer.data_received(data[at : at + cut])
        at += cut
        act(next(steps, "none"))
    for _ in range(len(actions) + 1):  # a handler may hold again once, per action left
        framer.release("a")
        framer.release("2")
    expected = [line for line in sent if line != b"\r"]
    assert got == expected
    assert framer.taking.is_set()


def test_a_held_framer_pauses_its_transport_and_resumes_it() -> None:
    class Reading(asyncio.ReadTransport):
        def __init__(self) -> None:
            super().__init__()
            self.calls: list[str] = []

        def pause_reading(self) -> None:
            self.calls.append("pause")

        def resume_reading(self) -> None:
            self.calls.append("resume")

    got: list[bytes] = []
    framer = rpc.LineFramer(got.append, lambda exc: None)
    transport = Reading()
    framer.connection_made(transport)
    framer.hold("output")
    framer.hold("busy")
    framer.data_received(b"one\ntwo\n")
    assert got == [] and transport.calls == ["pause"] and not framer.taking.is_set()
    framer.release("output")
    assert got == [] and transport.calls == ["pause"]
    framer.release("busy")
    assert got == [b"one", b"two"] and transport.calls == ["pause", "resume"]


# -- the stdout writer --------------------------------------------------------------------


def test_the_writer_bounds_its_backlog_and_loses_nothing() -> None:
    async def run() -> None:
        loop = asyncio.get_running_loop()
        r, w = os.pipe()
        full: list[bool] = []
        out = rpc.OutWriter(w, high=256 << 10, low=64 << 10, on_full=full.append)
        out.start(loop)
        line = b"x" * 50_000
        sent = 0
        # the reader is not reading: the writer queues, then says it is full
        while not out.full:
            out.write_line(line)
            sent += len(line) + 1
        assert full == [True]
        assert out.waiting <= out.high + len(line) + 1
        received = bytearray()
        os.set_blocking(r, False)
        while len(received) < sent:
            try:
                received += os.read(r, 1 << 16)
            except BlockingIOError:
                await asyncio.sleep(0.01)
        assert full == [True, False] and out.waiting == 0
        assert bytes(received) == (line + b"\n") * (sent // (len(line) + 1))
        out.close()
        assert os.get_blocking(w)  # left as it was found
        os.close(r)
        os.close(w)

    asyncio.run(run())


def test_the_writer_stops_at_a_closed_reader() -> None:
    async def run() -> None:
        r, w = os.pipe()
        out = rpc.OutWriter(w)
        out.start(asyncio.get_running_loop())
        os.close(r)
        out.write_line(b"lost")
        assert out.broken and out.waiting == 0
        out.close()
        os.close(w)

    asyncio.run(run())


# -- settings keys ------------------------------------------------------------------------


def test_a_mistyped_key_is_named_with_the_closest() -> None:
    got = dict(
        unknown_settings(
            {"denyGlob": 1, "deny_globs": 1, "maxReadByte": 1, "fsync": 1, "zzzz": 1, "fsink": 1}
        )
    )
    assert got == {
        "denyGlob": "denyGlobs",
        "maxReadByte": "maxReadBytes",
        "zzzz": None,
        "fsink": "fsync",
    }


def test_every_setting_has_a_key() -> None:
    keys = setting_keys()
    assert "denyGlobs" in keys and "saveAfterEdit" in keys and "fsync" in keys
    assert unknown_settings(dict.fromkeys(keys, 1)) == []

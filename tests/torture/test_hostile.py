"""Hostile and malformed input over stdio: the server never dies, answers every message it
can attribute (an error for anything malformed: Parse error / Invalid Request with a null
id when the id cannot be read), and stays responsive.

Hypothesis drives one long-lived server (on a loop in a background thread) with raw
bytes: malformed JSON, wrong types, huge strings, deep nesting, invalid UTF-8, lone
surrogates, NUL bytes, odd ids and shapes.
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Coroutine, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from steadyhand.protocol.commands import ALL_COMMANDS, EDIT, PING, READ, WRITE
from tests.torture.harness import Server, record, size

T = TypeVar("T")

FIELDS = ["file_path", "old_string", "new_string", "content", "offset", "limit", "session"]
FIELDS += ["replace_all", "parent", "filePath", "path", ""]


class LoopThread:
    """An event loop in a thread, so sync hypothesis tests can drive the async client."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()

    def run(self, coro: Coroutine[Any, Any, T], timeout: float = 120) -> T:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    def close(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join()
        self.loop.close()


class Fuzzed:
    def __init__(self, loop: LoopThread, server: Server, ws: Path) -> None:
        self.loop, self.server, self.ws = loop, server, ws
        self.sent = 0
        self.answers: dict[str, int] = {}


@pytest.fixture(scope="module")
def fuzzed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Fuzzed]:
    root = tmp_path_factory.mktemp("hostile")
    ws = root / "ws"
    ws.mkdir()
    (ws / "a.txt").write_text("alpha \u201cquoted\u201d\nbeta\n")
    loop = LoopThread()
    server = loop.run(Server.start(ws, state_dir=root / "state"))
    fz = Fuzzed(loop, server, ws)
    yield fz
    try:
        assert server.alive, server.stderr()
        loop.run(server.stop())
    finally:
        loop.close()
    record(
        "hostile input",
        messages=fz.sent,
        answered=sum(fz.answers.values()),
        server_deaths=0,
        **{k.replace(" ", "_"): v for k, v in sorted(fz.answers.items())},
    )


def _exchange(fz: Fuzzed, keys: list[int | str | None], body: bytes) -> dict[str, Any]:
    """Send ``body``; return the answer to one of ``keys`` (None: a null id)."""
    resp = fz.loop.run(fz.server.request_raw(keys, body, timeout=20))
    fz.sent += 1
    kind = "result" if "result" in resp else f"error {resp['error']['code']}"
    fz.answers[kind] = fz.answers.get(kind, 0) + 1
    assert fz.server.alive
    return resp


def _ping(fz: Fuzzed) -> None:
    r = fz.loop.run(fz.server.call(PING))
    assert r["ok"] and r["message"] == "pong", r


# -- strategies ------------------------------------------------------------------------

hostile_text = st.one_of(
    st.text(max_size=40),
    st.text(alphabet=st.characters(codec=None, categories=["Cs", "Cc", "Co"]), max_size=20),
    st.sampled_from(
        [
            "",
            "\x00",
            "a\x00b",
            "\ud800",
            "\udfff\ud800",
            "../../etc/passwd",
            "/etc/shadow",
            "\\\\srv\\share",
            "file:///proc/self/mem",
            "~",
            "a.txt",
            "\u202e\u2028",
        ]
    ),
    st.integers(min_value=1, max_value=64).map(lambda n: "x" * (n * 4096)),
)
json_leaf = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=False),
    hostile_text,
)
json_value = st.recursive(
    json_leaf,
    lambda kids: st.one_of(
        st.lists(kids, max_size=4), st.dictionaries(st.sampled_from(FIELDS), kids, max_size=5)
    ),
    max_leaves=12,
)
params_object = st.dictionaries(st.sampled_from(FIELDS), json_value, max_size=6)
arguments = st.one_of(
    st.lists(params_object, min_size=1, max_size=1),
    st.lists(json_value, max_size=3),
    json_value,
)
command = st.one_of(st.sampled_from(sorted(ALL_COMMANDS)), hostile_text)


@st.composite
def messages(draw: st.DrawFn) -> tuple[list[int | str | None], bytes, bool]:
    """(the ids an answer may carry, the body, whether it is malformed) for one hostile
    message. Only a known command may succeed; everything else must get an error."""
    key = draw(st.one_of(st.integers(min_value=1000, max_value=2**31), st.text(min_size=1)))
    kind = draw(
        st.sampled_from(["command", "params shape", "bad id", "garbage", "utf8", "deep", "cut"])
    )
    if kind == "command":
        params = {"command": draw(command), "arguments": draw(arguments)}
        msg = {"jsonrpc": "2.0", "id": key, "method": "workspace/executeCommand", "params": params}
        return [key], json.dumps(msg).encode(), params["command"] not in ALL_COMMANDS
    if kind == "params shape":
        method = draw(st.sampled_from(["workspace/executeCommand", "textDocument/hover", "x"]))
        msg = {"jsonrpc": draw(st.sampled_from(["2.0", "1.0", 2])), "id": key, "method": method}
        msg["params"] = draw(json_value)
        return [key], json.dumps(msg).encode(), True
    if kind == "bad id":
        bad = draw(st.one_of(st.floats(allow_nan=False), st.lists(st.integers()), st.booleans()))
        msg = {"jsonrpc": "2.0", "id": bad, "method": "workspace/executeCommand", "params": {}}
        return [None], json.dumps(msg).encode(), True
    if kind == "garbage":
        junk = draw(st.binary(min_size=1, max_size=200))
        return [None], b"\x01" + junk, True  # never valid JSON
    if kind == "utf8":
        bad = draw(st.sampled_from([b"\xff", b"\xc3\x28", b"\xed\xa0\x80", b"\xf8\x88\x80\x80"]))
        # (an encoded surrogate is accepted by Python's JSON reader: then id 1 answers)
        body = b'{"jsonrpc":"2.0","id":1,"method":"x","params":{"a":"' + bad + b'"}}'
        return [None, 1], body, True
    if kind == "deep":
        depth = draw(st.sampled_from([50, 900, 5000, 200_000]))
        inner = b"[" * depth + b"]" * depth
        body = (
            b'{"jsonrpc":"2.0","id":%d,"method":"workspace/executeCommand",'
            b'"params":{"command":"%s","arguments":[%s]}}'
        ) % (key if isinstance(key, int) else 7, READ.encode(), inner)
        return [key if isinstance(key, int) else 7, None], body, True
    body = json.dumps({"jsonrpc": "2.0", "id": key, "method": "initialize"}).encode()
    cut = draw(st.integers(min_value=1, max_value=len(body) - 1))
    return [None], body[:cut], True


@settings(
    max_examples=size(400, 5000),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
    derandomize=True,
)
@given(msg=messages())
def test_fuzzed_messages_are_all_answered(fuzzed: Fuzzed, msg: tuple[Any, bytes, bool]) -> None:
    keys, body, malformed = msg
    resp = _exchange(fuzzed, keys, body)
    if malformed:  # an error: a JSON-RPC one, or a refusal result object
        result = resp.get("result")
        refused = isinstance(result, dict) and result.get("ok") is False
        assert "error" in resp or refused, (body[:300], resp)
    if resp.get("id") is None:
        assert resp["error"]["code"] in (-32700, -32600), resp
    else:
        assert resp["id"] in keys
        result = resp.get("result")
        if isinstance(result, dict) and result.get("ok") is False:
            # a refusal is a result object with a stable code and a message
            assert isinstance(result.get("error"), str) and result.get("message"), result
            assert "failed unexpectedly" not in result["message"], result


def test_big_and_odd_parameters(fuzzed: Fuzzed) -> None:
    """10 MB old_string, 10 MB content, NUL bytes and surrogates in every field."""
    fz = fuzzed
    srv = fz.server
    r = fz.loop.run(srv.call(READ, file_path="a.txt"))
    assert r["ok"], r
    huge = "x" * (10 * 1024 * 1024)
    r = fz.loop.run(srv.call(EDIT, file_path="a.txt", old_string=huge, new_string="y"))
    assert r["ok"] is False and r["error"] == "no_match", str(r)[:300]
    r = fz.loop.run(srv.call(EDIT, file_path="a.txt", old_string="beta", new_string=huge))
    assert r["ok"], str(r)[:300]
    r = fz.loop.run(srv.call(WRITE, file_path="a.txt", content="back\x00 to small\n"))
    assert r["ok"] is False and r["error"] == "binary", str(r)[:300]  # it would be binary
    r = fz.loop.run(srv.call(WRITE, file_path="a.txt", content="back to small\n"))
    assert r["ok"], str(r)[:300]
    assert (fz.ws / "a.txt").read_bytes() == b"back to small\n"
    r = fz.loop.run(srv.call(WRITE, file_path="s.txt", content="lone \ud800 surrogate"))
    assert r["ok"] is False and r["error"] == "io_error" and not (fz.ws / "s.txt").exists(), r
    r = fz.loop.run(srv.call(READ, file_path="a\x00\ud800b"))
    assert r["error"] == "invalid_path", r
    r = fz.loop.run(srv.call(READ, file_path="a.txt", session="a\x00\ud800b"))
    assert r["ok"], r  # any session name works
    _ping(fz)
    fz.sent += 8


def test_still_responsive_after_the_storm(fuzzed: Fuzzed) -> None:
    _ping(fuzzed)
    (fuzzed.ws / "b.txt").write_text("one\n")
    r = fuzzed.loop.run(fuzzed.server.call(READ, file_path="b.txt", session="after"))
    assert r["ok"], r
    e = fuzzed.loop.run(
        fuzzed.server.call(
            EDIT, file_path="b.txt", old_string="one", new_string="two", session="after"
        )
    )
    assert e["ok"] and (fuzzed.ws / "b.txt").read_text() == "two\n", e

"""Tool calls run at once on the direct lane; one that has to wait is driven on by a task.

In-process: the server's protocol with a writer that keeps what it is given, messages
handed to the transport's ``handle_body`` as the stdio loop would.
"""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Any

import pytest

from steadyhand.lsp.server import SteadyhandServer, create_server
from steadyhand.lsp.transport import handle_body
from steadyhand.protocol.commands import CREATE_DIRECTORY, EDIT, INFO, LIST, READ, SEARCH, WRITE
from steadyhand.runtime.tasks import Resume


class _Writer:
    def __init__(self) -> None:
        self.frames: list[dict[str, Any]] = []

    def write(self, data: bytes) -> None:
        self.frames.append(json.loads(data[data.index(b"\r\n\r\n") + 4 :]))

    def close(self) -> None:
        pass


class _Lane:
    def __init__(self, ws: Path, state: Path) -> None:
        self.server: SteadyhandServer = create_server()
        self.out = _Writer()
        self.server.protocol.set_writer(self.out)  # type: ignore[arg-type]
        self.next_id = 0
        self.ws = ws
        self.state = state

    def send(self, method: str, params: Any, *, request: bool = True) -> int:
        msg: dict[str, Any] = {"jsonrpc": "2.0", "method": method, "params": params}
        if request:
            self.next_id += 1
            msg["id"] = self.next_id
        handle_body(self.server.protocol, json.dumps(msg).encode())
        return self.next_id

    def command(self, name: str, args: dict[str, Any]) -> int:
        return self.send("workspace/executeCommand", {"command": name, "arguments": [args]})

    def answer(self, msg_id: int) -> dict[str, Any] | None:
        return next((f for f in self.out.frames if f.get("id") == msg_id), None)

    async def wait_answer(self, msg_id: int) -> dict[str, Any]:
        for _ in range(1000):
            found = self.answer(msg_id)
            if found is not None:
                return found
            await asyncio.sleep(0.001)
        raise AssertionError(f"no answer to {msg_id}: {self.out.frames}")

    async def initialize(self) -> None:
        rid = self.send(
            "initialize",
            {
                "processId": None,
                "rootUri": self.ws.as_uri(),
                "capabilities": {},
                "initializationOptions": {
                    "fsync": False,
                    "watch": False,
                    "historyDir": str(self.state),
                },
            },
        )
        await self.wait_answer(rid)
        self.send("initialized", {}, request=False)


@pytest.fixture
async def lane(tmp_path: Path) -> _Lane:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.txt").write_text("one\ntwo\n")
    lane = _Lane(ws, tmp_path / "state")
    await lane.initialize()
    return lane


async def test_a_call_that_never_waits_is_answered_before_handle_body_returns(
    lane: _Lane,
) -> None:
    rid = lane.command(READ, {"file_path": str(lane.ws / "a.txt")})
    answer = lane.answer(rid)  # no turn of the event loop in between
    assert answer is not None and answer["result"]["ok"], lane.out.frames
    assert "two" in answer["result"]["message"]
    assert rid not in lane.server.protocol._request_futures
    # a refusal is an answer too, written at once
    rid = lane.command(
        EDIT,
        {"file_path": str(lane.ws / "nope.txt"), "old_string": "a", "new_string": "b"},
    )
    refused = lane.answer(rid)
    assert refused is not None and refused["result"]["error"] == "not_found", refused


async def _hold_lock(lane: _Lane, path: str) -> tuple[asyncio.Task[None], asyncio.Event]:
    """Hold the file's lock in a task, as another tool call would, until the event is set."""
    release = asyncio.Event()
    held = asyncio.Event()

    async def hold() -> None:
        async with lane.server.ctx.locks.hold(os.path.realpath(path)):
            held.set()
            await release.wait()

    holder = asyncio.create_task(hold())
    await held.wait()
    return holder, release


async def test_a_call_that_waits_for_the_file_lock_is_answered_once_it_is_free(
    lane: _Lane,
) -> None:
    path = str(lane.ws / "a.txt")
    first = lane.command(READ, {"file_path": path})
    assert lane.answer(first) is not None
    holder, release = await _hold_lock(lane, path)
    rid = lane.command(EDIT, {"file_path": path, "old_string": "two", "new_string": "deux"})
    await asyncio.sleep(0.01)
    assert lane.answer(rid) is None  # still waiting for the lock
    assert rid in lane.server.protocol._request_futures  # so a cancel can find it
    release.set()
    answer = await lane.wait_answer(rid)
    await holder
    assert answer["result"]["ok"], answer
    assert (lane.ws / "a.txt").read_text() == "one\ndeux\n"
    assert rid not in lane.server.protocol._request_futures


async def test_a_call_that_waited_sees_what_the_holder_did_to_the_path(lane: _Lane) -> None:
    """What the path was when the call came in is looked at again after the wait: the
    holder may have deleted the file, or made one."""
    path = str(lane.ws / "a.txt")
    lane.command(READ, {"file_path": path})
    holder, release = await _hold_lock(lane, path)
    edit = lane.command(EDIT, {"file_path": path, "old_string": "two", "new_string": "deux"})
    os.unlink(path)  # while the edit waits
    release.set()
    await holder
    gone = await lane.wait_answer(edit)
    assert gone["result"]["error"] == "not_found", gone

    holder, release = await _hold_lock(lane, path)
    create = lane.command(WRITE, {"file_path": path, "content": "mine\n"})
    (lane.ws / "a.txt").write_text("theirs\n")  # made while the write waits
    release.set()
    await holder
    made = await lane.wait_answer(create)
    # not created over theirs: the file is there again, and not as this session read it
    assert made["result"]["error"] == "stale", made
    assert (lane.ws / "a.txt").read_text() == "theirs\n"


async def test_a_waiting_call_can_be_cancelled_and_changes_nothing(lane: _Lane) -> None:
    path = str(lane.ws / "a.txt")
    lane.command(READ, {"file_path": path})
    holder, release = await _hold_lock(lane, path)
    rid = lane.command(EDIT, {"file_path": path, "old_string": "two", "new_string": "deux"})
    lane.send("$/cancelRequest", {"id": rid}, request=False)
    answer = await lane.wait_answer(rid)
    assert answer["error"]["code"] == -32800, answer
    release.set()
    await holder
    assert (lane.ws / "a.txt").read_text() == "one\ntwo\n"
    assert len(lane.server.ctx.locks) == 0  # the cancelled call gave its place back


async def test_a_started_coroutine_is_driven_to_its_end() -> None:
    loop = asyncio.get_running_loop()
    gate: asyncio.Future[int] = loop.create_future()
    log: list[str] = []

    async def work() -> int:
        log.append("start")
        got = await gate
        await asyncio.sleep(0)
        log.append(f"got {got}")
        return got * 2

    coro = work()
    waiting_on = coro.send(None)  # runs up to `await gate`
    assert waiting_on is gate and log == ["start"]
    task = loop.create_task(Resume(coro, waiting_on))
    await asyncio.sleep(0)
    assert not task.done()
    gate.set_result(21)
    assert await task == 42
    assert log == ["start", "got 21"]


async def test_cancellation_and_errors_reach_the_started_coroutine() -> None:
    loop = asyncio.get_running_loop()
    cleaned: list[str] = []

    async def waits_forever() -> None:
        try:
            await loop.create_future()
        finally:
            cleaned.append("finally")

    for before_first_step in (False, True):
        coro = waits_forever()
        task = loop.create_task(Resume(coro, coro.send(None)))
        if not before_first_step:
            await asyncio.sleep(0)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
    assert cleaned == ["finally", "finally"]

    gate: asyncio.Future[None] = loop.create_future()

    async def fails() -> None:
        await gate
        raise ValueError("boom")

    coro2 = fails()
    task2 = loop.create_task(Resume(coro2, coro2.send(None)))
    gate.set_result(None)
    with pytest.raises(ValueError, match="boom"):
        await task2


@pytest.mark.parametrize(
    ("name", "meant"),
    [
        ("steadyhand.ls", LIST),
        ("steadyhand.glob", LIST),
        ("steadyhand.list_directory", LIST),
        ("steadyhand.grep", SEARCH),
        ("steadyhand.stat", INFO),
        ("steadyhand.mkdir", CREATE_DIRECTORY),
        ("steadyhand.create_directory", CREATE_DIRECTORY),
    ],
)
def test_other_names_of_the_workspace_tools(name: str, meant: str) -> None:
    from steadyhand.lsp.dispatch import closest_command
    from steadyhand.protocol.commands import ALL_COMMANDS

    assert closest_command(name, list(ALL_COMMANDS)) == meant

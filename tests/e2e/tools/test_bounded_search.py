"""A refused edit on a file of very long lines never holds up other requests.

Explaining a ``no_match`` compares ``old_string`` with the file; on minified code or
data (one line of tens of kilobytes) an unbounded comparison is quadratic in the line's
length. Every such search is bounded by size and time and runs off the event loop, so
the refusal comes back with advice, and a ping sent meanwhile is answered at once.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from pytest_lsp import LanguageClient

from steadyhand.protocol.commands import EDIT, PING, READ
from steadyhand.protocol.commands import MULTI_EDIT as MULTI
from tests.conftest import call
from tests.nearmiss.corpus import minified

#: Generous: the answer comes in well under a second; the unbounded search took minutes.
TIMEOUT = 60.0


def slipped(line: str) -> str:
    """``line`` with one character changed in its middle (no tier recovers it)."""
    mid = len(line) // 2
    return line[:mid] + ("Q" if line[mid] != "Q" else "R") + line[mid + 1 :]


async def _timed(order: list[str], name: str, work: Any) -> dict[str, Any]:
    result: dict[str, Any] = await work
    order.append(name)
    return result


async def test_no_match_on_a_40kb_line_answers_and_a_ping_is_not_held_up(
    client: LanguageClient, workspace: Path
) -> None:
    line = minified(40_000)
    f = workspace / "bundle.min.js"
    f.write_text(line + "\n")
    assert (await call(client, READ, file_path="bundle.min.js"))["ok"]
    order: list[str] = []
    # Three refused edits (the whole line with one slip, as a model copies minified
    # code), then a ping: the edits queue on the file's lock and search off the loop.
    edits = [
        asyncio.ensure_future(
            _timed(
                order,
                f"edit{k}",
                call(
                    client,
                    EDIT,
                    file_path="bundle.min.js",
                    old_string=slipped(line),
                    new_string="x",
                ),
            )
        )
        for k in range(3)
    ]
    await asyncio.sleep(0)  # the edit requests go out first
    ping = asyncio.ensure_future(_timed(order, "ping", call(client, PING)))
    results = await asyncio.wait_for(asyncio.gather(ping, *edits), TIMEOUT)
    assert results[0]["ok"] is True and results[0]["message"] == "pong"
    for r in results[1:]:
        assert r["ok"] is False and r["error"] == "no_match", r
        # The refusal still says what to do next: the closest text, or that the lines
        # are too long to compare, with the way to retry.
        assert "old_string" in r["message"] and "retry" in r["message"].lower(), r["message"]
        assert len(r["message"]) < 6_000
    assert f.read_text() == line + "\n"
    assert order.index("ping") < order.index("edit2"), order


async def test_no_match_fragment_of_a_long_line_shows_where_it_nearly_is(
    client: LanguageClient, workspace: Path
) -> None:
    """A stretch of a long line with a slip is placed within the line: the refusal
    quotes the text around the difference, so the retry needs no read."""
    line = minified(40_000, seed=3)
    f = workspace / "data.min.js"
    f.write_text(line)
    assert (await call(client, READ, file_path="data.min.js"))["ok"]
    start = 25_000
    piece = line[start : start + 300]
    old = piece[:150] + "@@" + piece[152:]
    r = await asyncio.wait_for(
        call(client, EDIT, file_path="data.min.js", old_string=old, new_string="z"), TIMEOUT
    )
    assert r["ok"] is False and r["error"] == "no_match", r
    assert r["closest_lines"] == [1, 1], r
    assert any(piece[140:150] in d for d in r["differences"]), r["differences"]
    assert f.read_text() == line


async def test_multi_edit_no_match_on_long_lines_answers_and_a_read_is_not_held_up(
    client: LanguageClient, workspace: Path
) -> None:
    line = minified(40_000, seed=11)
    (workspace / "a.min.js").write_text(line + "\n" + line[::-1] + "\n")
    (workspace / "notes.txt").write_text("hello\n")
    assert (await call(client, READ, file_path="a.min.js"))["ok"]
    order: list[str] = []
    multi = [
        asyncio.ensure_future(
            _timed(
                order,
                f"multi{k}",
                call(
                    client,
                    MULTI,
                    file_path="a.min.js",
                    edits=[{"old_string": slipped(line[::-1]), "new_string": "y"}],
                ),
            )
        )
        for k in range(3)
    ]
    await asyncio.sleep(0)
    read = asyncio.ensure_future(_timed(order, "read", call(client, READ, file_path="notes.txt")))
    results = await asyncio.wait_for(asyncio.gather(read, *multi), TIMEOUT)
    assert results[0]["ok"] and "hello" in results[0]["message"], results[0]
    for r in results[1:]:
        assert r["ok"] is False and r["error"] == "no_match" and r["edit_index"] == 0, r
    assert order.index("read") < order.index("multi2"), order

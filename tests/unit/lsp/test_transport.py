"""The stdio framer: however the pipe splits the stream, every message is handed on whole,
once, in order; headers in any order or case; a stop ends the handling."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import steadyhand.lsp.transport as transport
from steadyhand.lsp.transport import MessageFramer

bodies = st.lists(st.binary(min_size=0, max_size=300), min_size=1, max_size=8)
header_styles = st.sampled_from(
    [
        b"Content-Length: %d\r\n\r\n",
        b"content-length:%d\r\n\r\n",
        b"Content-Type: application/vscode-jsonrpc; charset=utf-8\r\nCONTENT-LENGTH: %d\r\n\r\n",
        b"Content-Length: %d\r\nContent-Type: x\r\n\r\n",
        b"\r\nContent-Length: %d\n\n",  # a stray blank line first, bare newlines
    ]
)


def _frame(body: bytes, style: bytes) -> bytes:
    return style % len(body) + body


class _Collect:
    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.got: list[bytes] = []
        self.errors: list[str] = []
        self.stop = threading.Event()
        self.stop_after: int | None = None
        monkeypatch.setattr(transport, "handle_body", self._handle)
        monkeypatch.setattr(transport, "frame_error", lambda _, e: self.errors.append(e.reason))

    def framer(self) -> tuple[MessageFramer, asyncio.Future[None]]:
        """A framer handing its messages here (in a running event loop), and its end."""
        done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        return MessageFramer(None, self.stop, done), done  # type: ignore[arg-type]

    def _handle(self, protocol: Any, body: bytes) -> None:
        self.got.append(bytes(body))
        if self.stop_after is not None and len(self.got) >= self.stop_after:
            self.stop.set()


def _feed(framer: MessageFramer, stream: bytes, cuts: list[int]) -> None:
    pos = 0
    for cut in sorted(set(c % (len(stream) + 1) for c in cuts)):
        if cut > pos:
            framer.data_received(stream[pos:cut])
            pos = cut
    if pos < len(stream):
        framer.data_received(stream[pos:])


@settings(max_examples=200, deadline=None)
@given(bodies, st.lists(header_styles, min_size=8, max_size=8), st.lists(st.integers(0, 5000)))
def test_any_split_gives_the_same_messages_in_order(
    messages: list[bytes], styles: list[bytes], cuts: list[int]
) -> None:
    with pytest.MonkeyPatch.context() as m:
        sink = _Collect(m)

        async def run() -> None:
            framer, done = sink.framer()
            stream = b"".join(_frame(b, s) for b, s in zip(messages, styles, strict=False))
            _feed(framer, stream, cuts)
            assert sink.got == messages
            assert not done.done()
            framer.connection_lost(None)
            assert done.done()

        asyncio.run(run())


async def test_a_large_body_in_small_pieces_is_handed_on_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    sink = _Collect(monkeypatch)
    framer, _ = sink.framer()
    big = bytes(range(256)) * 40_000  # about 10 MB
    framer.data_received(b"Content-Length: %d\r\n\r\n" % len(big))
    for i in range(0, len(big), 65_536):
        framer.data_received(big[i : i + 65_536])
        assert sink.got == ([] if i + 65_536 < len(big) else [big])
    framer.data_received(_frame(b'{"next":1}', b"Content-Length: %d\r\n\r\n"))
    assert sink.got == [big, b'{"next":1}']


async def test_a_stop_ends_the_handling(monkeypatch: pytest.MonkeyPatch) -> None:
    sink = _Collect(monkeypatch)
    sink.stop_after = 2  # as the `exit` notification does
    framer, done = sink.framer()
    frames = b"".join(_frame(b"%d" % i, b"Content-Length: %d\r\n\r\n") for i in range(4))
    framer.data_received(frames)
    assert sink.got == [b"0", b"1"]
    assert done.done()
    framer.data_received(_frame(b"4", b"Content-Length: %d\r\n\r\n"))
    assert sink.got == [b"0", b"1"]


async def test_a_bad_or_negative_length_is_answered_and_skipped(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    sink = _Collect(monkeypatch)
    framer, _ = sink.framer()
    framer.data_received(b"Content-Length: -5\r\n\r\nContent-Length: x\r\n\r\n")
    framer.data_received(_frame(b"ok", b"Content-Length: %d\r\n\r\n"))
    assert sink.got == [b"ok"]
    assert len(sink.errors) == 2 and all("not a number" in e for e in sink.errors)


async def test_a_stop_while_bad_frames_are_answered(monkeypatch: pytest.MonkeyPatch) -> None:
    sink = _Collect(monkeypatch)
    sink.stop_after = 1
    framer, done = sink.framer()
    framer.data_received(b"junk\r\n" + _frame(b"0", b"Content-Length: %d\r\n\r\n") + b"junk\r\n")
    assert sink.got == [b"0"] and len(sink.errors) == 1
    assert done.done()

"""The frame parser: however the stream is split, every well-framed message comes out whole,
once, in order; a frame whose header cannot be read gives one error and the parser picks up
at the next frame; a Content-Length is a plain decimal number of bytes and nothing else."""

from __future__ import annotations

from hypothesis import assume, given, settings
from hypothesis import strategies as st

from steadyhand.lsp.framing import (
    MAX_BODY_BYTES,
    MAX_HEADER_BYTES,
    FrameError,
    FrameParser,
    content_length,
)

#: Bodies that never hold a frame header themselves.
bodies = st.binary(max_size=200).filter(lambda b: b"content-length" not in b.lower())
styles = st.sampled_from(
    [
        b"Content-Length: %d\r\n\r\n",
        b"content-length:%d\r\n\r\n",
        b"Content-Type: application/vscode-jsonrpc; charset=utf-8\r\nCONTENT-LENGTH: %d\r\n\r\n",
        b"Content-Length: %d\r\nContent-Type: x\r\n\r\n",
        b"\r\nContent-Length:\t%d \n\n",
    ]
)
#: Frames whose header gives no usable length (the body that follows is skipped).
BAD_HEADERS = [
    b"Content-Length: abc\r\n\r\n",
    b"Content-Length: -5\r\n\r\n",
    b"Content-Length: 1_0\r\n\r\n",
    b"Content-Length: +10\r\n\r\n",
    b"Content-Length: 0x10\r\n\r\n",
    b"Content-Length: 1e3\r\n\r\n",
    b"Content-Length: \xd9\xa3\r\n\r\n",  # an Arabic-Indic digit
    b"Content-Length: 99999999999999999999\r\n\r\n",
    b"Content-Type: x\r\n\r\n",
    b"not a header\r\n\r\n",
    b"",  # a body with no header at all
]
bad_frames = st.tuples(st.sampled_from(BAD_HEADERS), bodies).map(
    lambda hb: hb[0] + (b"" if hb[0] else b"{") + hb[1]
)


def _frame(body: bytes, style: bytes = b"Content-Length: %d\r\n\r\n") -> bytes:
    return style % len(body) + body


def _parse(stream: bytes, cuts: list[int]) -> list[bytes | FrameError]:
    parser = FrameParser()
    out: list[bytes | FrameError] = []
    pos = 0
    for cut in sorted({c % (len(stream) + 1) for c in cuts}):
        if cut > pos:
            out += parser.feed(stream[pos:cut])
            pos = cut
    out += parser.feed(stream[pos:])
    return out


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(bodies, styles), max_size=8), st.lists(st.integers(0, 3000)))
def test_any_split_gives_every_message_in_order(
    frames: list[tuple[bytes, bytes]], cuts: list[int]
) -> None:
    stream = b"".join(_frame(b, s) for b, s in frames)
    assert _parse(stream, cuts) == [b for b, _ in frames]


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.tuples(bodies, st.booleans()), min_size=1, max_size=8),
    st.lists(bad_frames, min_size=8, max_size=8),
    st.lists(st.integers(0, 3000)),
)
def test_each_bad_frame_gives_one_error_and_the_next_frames_come_through(
    frames: list[tuple[bytes, bool]], bad: list[bytes], cuts: list[int]
) -> None:
    stream = b""
    expected: list[bytes | str] = []
    for (body, after_bad), junk in zip(frames, bad, strict=False):
        if after_bad:
            stream += junk
            expected.append("error")
        stream += _frame(body)
        expected.append(body)
    got = [("error" if isinstance(x, FrameError) else x) for x in _parse(stream, cuts)]
    assert got == expected


@settings(max_examples=300, deadline=None)
@given(
    st.binary(max_size=300).filter(lambda b: b"content-length" not in b.lower()),
    st.lists(bodies, min_size=1, max_size=4),
    st.lists(st.integers(0, 3000)),
)
def test_after_any_garbage_the_frames_that_follow_come_through(
    junk: bytes, frames: list[bytes], cuts: list[int]
) -> None:
    stream = junk + b"".join(_frame(b) for b in frames)
    got = [x for x in _parse(stream, cuts) if not isinstance(x, FrameError)]
    assert got == frames


def test_a_body_without_a_header_is_answered_at_once() -> None:
    """No newline needed: a line that cannot begin a header is known to be none."""
    out = list(FrameParser().feed(b'{"jsonrpc":"2.0","id":1,"method":"x"}'))
    assert len(out) == 1 and isinstance(out[0], FrameError)


def test_an_endless_header_line_is_an_error_in_bounded_memory() -> None:
    parser = FrameParser()
    out: list[bytes | FrameError] = []
    for _ in range(100):
        out += parser.feed(b"X" * 1000)
    assert len(out) == 1 and isinstance(out[0], FrameError) and "over" in out[0].reason
    assert len(parser._rest) < 2 * MAX_HEADER_BYTES
    assert list(parser.feed(_frame(b"ok"))) == [b"ok"]


def test_skipped_bytes_are_not_kept() -> None:
    parser = FrameParser()
    assert len(list(parser.feed(b"Content-Length: x\r\n\r\n"))) == 1
    for _ in range(1000):
        assert list(parser.feed(b"y" * 10_000)) == []
    assert len(parser._rest) < 100
    assert list(parser.feed(_frame(b"ok"))) == [b"ok"]


def test_two_different_lengths_are_an_error() -> None:
    out = list(FrameParser().feed(b"Content-Length: 3\r\nContent-Length: 4\r\n\r\nabc"))
    assert isinstance(out[0], FrameError) and "two different" in out[0].reason


def test_an_empty_body() -> None:
    assert list(FrameParser().feed(_frame(b"") + _frame(b"x"))) == [b"", b"x"]


@given(st.integers(0, MAX_BODY_BYTES))
def test_a_length_is_its_digits(n: int) -> None:
    assert content_length(b" %d\r\n" % n) == n


@given(st.binary(max_size=30))
def test_a_length_is_only_ascii_digits(value: bytes) -> None:
    got = content_length(value)
    digits = value.strip(b" \t\r\n")
    if isinstance(got, int):
        assert digits.isascii() and digits.isdigit() and int(digits) == got
    else:
        assume(value)
        assert not (digits.isascii() and digits.isdigit()) or int(digits) > MAX_BODY_BYTES


def test_lengths_python_would_accept_are_refused() -> None:
    for value in [b"1_0", b"+5", b"-5", b"\xd9\xa3", b"5.0", b"", b"0x1", b"1 2"]:
        assert isinstance(content_length(value), str), value
    assert isinstance(content_length(b"%d" % (MAX_BODY_BYTES + 1)), str)
    assert isinstance(content_length(b"9" * 5000), str)

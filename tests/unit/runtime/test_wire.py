"""JSON on the wire: the fast path and the standard library read and write the same."""

from __future__ import annotations

import json

import pytest

from steadyhand.runtime.wire import dumps, loads


def test_dumps_round_trips_and_declines_what_is_not_json() -> None:
    message = {"id": 1, "result": {"ok": True, "message": "tab\tand é and \U0001f600"}}
    out = dumps(message)
    assert out is not None and json.loads(out) == message
    lone = dumps({"s": "\ud800"})  # not UTF-8: escaped by the standard encoder
    assert lone is not None and json.loads(lone) == {"s": "\ud800"}
    assert dumps({"x": object()}) is None


def test_integers_beyond_64_bits_stay_integers() -> None:
    out = dumps({"n": 2**70})
    assert out is not None and json.loads(out) == {"n": 2**70}


@pytest.mark.parametrize(
    "body",
    [
        b'{"a": [1, 2.5, "x\\u00e9", null, true], "b": {"c": [{"d": -0.0}]}}',
        b'{"big": 123456789012345678901234567890}',  # beyond 64 bits: stays an integer
        b'{"lone": "\\ud800"}',  # a lone surrogate escape
        b'{"n": NaN}',
        b'{"k": 1, "k": 2}',
    ],
)
def test_loads_reads_what_the_standard_library_reads(body: bytes) -> None:
    got, expected = loads(body), json.loads(body)
    assert repr(got) == repr(expected)


def test_loads_refuses_what_is_not_json() -> None:
    with pytest.raises(ValueError):
        loads(b"{not json")

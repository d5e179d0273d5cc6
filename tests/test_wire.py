"""JSON on the wire: the fast encoder and the standard one give the same messages."""

from __future__ import annotations

import json

from steadyhand.wire import dumps


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

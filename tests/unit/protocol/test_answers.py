"""The client's answers to the server's requests, read strictly: only the shapes LSP (and
Steadyhand's save request) allow count; every other shape is MalformedAnswer."""

from __future__ import annotations

from collections import namedtuple
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from steadyhand.protocol.answers import (
    SHOWN_CHARS,
    MalformedAnswer,
    apply_edit_answer,
    save_refusal,
    shown,
)

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=10,
)


@given(json_values)
def test_an_apply_answer_is_applied_only_when_it_says_true(answer: Any) -> None:
    try:
        applied, _ = apply_edit_answer(answer)
    except MalformedAnswer:
        assert not (isinstance(answer, dict) and isinstance(answer.get("applied"), bool))
        return
    assert isinstance(answer, dict) and answer["applied"] is applied


def test_apply_answers() -> None:
    assert apply_edit_answer({"applied": True}) == (True, None)
    assert apply_edit_answer({"applied": False, "failureReason": "moved"}) == (False, "moved")
    assert apply_edit_answer({"applied": False, "failureReason": 3}) == (False, "3")
    for bad in [{}, {"applied": "no"}, {"applied": 1}, {"applied": None}, None, [], "yes", 1]:
        with pytest.raises(MalformedAnswer):
            apply_edit_answer(bad)
    Result = namedtuple("Result", ["applied"])
    assert apply_edit_answer(Result(True)) == (True, None)


@given(json_values)
def test_a_save_answer_saves_only_the_uris_it_lists(answer: Any) -> None:
    uri = "file:///a.txt"
    try:
        why = save_refusal(answer, uri)
    except MalformedAnswer:
        saved = answer.get("saved") if isinstance(answer, dict) else None
        assert not (
            saved == {} or (isinstance(saved, list) and all(isinstance(u, str) for u in saved))
        )
        return
    assert isinstance(answer, dict)
    assert (why is None) == (isinstance(answer["saved"], list) and uri in answer["saved"])


def test_save_answers() -> None:
    uri = "file:///a.txt"
    assert save_refusal({"saved": [uri]}, uri) is None
    assert save_refusal({"saved": []}, uri) == "no reason given"
    assert save_refusal({"saved": {}, "results": {}}, uri) == "no reason given"  # Lua
    answer = {"saved": [], "results": [{"uri": uri, "saved": False, "error": "typed"}]}
    assert save_refusal(answer, uri) == "typed"
    for bad in [None, [], {}, {"saved": "all"}, {"saved": [1]}, "yes", {"results": []}]:
        with pytest.raises(MalformedAnswer):
            save_refusal(bad, uri)


def test_a_long_answer_is_cut_in_messages() -> None:
    assert len(shown({"x": "y" * 10_000})) == SHOWN_CHARS
    assert shown(None) == "null"

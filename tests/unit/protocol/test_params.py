"""Parameter validation: what is accepted comes through unchanged, what does not fit is
refused naming the field, for every command's parameters."""

from __future__ import annotations

import dataclasses
import re
import typing
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from steadyhand.protocol import params as P

CLASSES = [
    P.ReadParams,
    P.EditParams,
    P.MultiEditParams,
    P.WriteParams,
    P.ForkParams,
    P.CloseParams,
    P.PingParams,
    P.HistoryParams,
    P.UndoParams,
    P.CheckpointParams,
    P.RewindParams,
    P.ChangesParams,
    P.ChangeParams,
    P.NotebookEditParams,
    P.ListParams,
    P.SearchParams,
    P.InfoParams,
    P.CreateDirectoryParams,
]

_values = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 3),
    st.floats(allow_nan=False),
    st.sampled_from(["", "x", "a.txt", "1-2", "replace"]),
    st.lists(st.fixed_dictionaries({"old_string": st.just("a"), "new_string": st.just("b")})),
    st.dictionaries(st.just("k"), st.integers()),
)


def _fits(value: Any, tp: Any) -> bool:
    """Whether a JSON value has the type ``tp`` as the protocol reads it."""
    if typing.get_origin(tp) in (typing.Union, __import__("types").UnionType):
        return value is None or any(
            _fits(value, a) for a in typing.get_args(tp) if a is not type(None)
        )
    if tp is bool:
        return type(value) is bool
    if tp is int:
        return type(value) is int
    if tp is str:
        return type(value) is str
    if typing.get_origin(tp) is list:
        return type(value) is list
    return True


@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: c.__name__)
@given(data=st.data())
def test_accepted_values_come_through_and_misfits_name_their_field(
    cls: type[Any], data: st.DataObject
) -> None:
    fields = {f.name: f for f in dataclasses.fields(cls)}
    hints = typing.get_type_hints(cls)
    keys = data.draw(st.lists(st.sampled_from([*fields, "bogus"]), unique=True))
    raw = {k: data.draw(_values) for k in keys}
    try:
        out = P.structure(cls, raw)
    except P.ParamsError as err:
        assert err.field_name is not None
        # an item of a list of plain values is named with its place: `file_paths[0]`
        item = re.fullmatch(r"(\w+)\[\d+\]", err.field_name)
        if item is not None and item.group(1) in raw:
            assert typing.get_origin(hints[item.group(1)]) is not None
            return
        assert err.field_name in raw or err.field_name in fields
        if err.field_name in fields and err.field_name in raw:
            value = raw[err.field_name]
            # a value of the right type is refused only by a bound on its value, or by a
            # condition across parameters (`file_path` or `file_paths` for read)
            across = {r.field for r in getattr(cls, "RULES", ())}
            assert (
                not _fits(value, hints[err.field_name])
                or "must be" in str(err)
                or err.field_name in across
            )
        return
    assert "bogus" not in raw
    for name, f in fields.items():
        given_value = raw.get(name)
        if given_value is None:
            assert f.default is not dataclasses.MISSING or f.default_factory is not (
                dataclasses.MISSING
            )
            continue
        assert _fits(given_value, hints[name])
        got = getattr(out, name)
        if name == "edits":
            assert [(e.old_string, e.new_string) for e in got] == [
                (e["old_string"], e["new_string"]) for e in given_value
            ]
        else:
            assert got == given_value and type(got) is type(given_value)


def test_plain_types_are_not_confused() -> None:
    with pytest.raises(P.ParamsError) as info:
        P.structure(P.ReadParams, {"file_path": "a", "offset": True})
    assert info.value.field_name == "offset"
    with pytest.raises(P.ParamsError) as info:
        P.structure(P.EditParams, {"file_path": "a", "old_string": "x", "new_string": 1})
    assert info.value.field_name == "new_string"
    with pytest.raises(P.ParamsError) as info:
        P.structure(
            P.EditParams, {"file_path": "a", "old_string": "x", "new_string": "y", "replace_all": 1}
        )
    assert info.value.field_name == "replace_all"
    ok = P.structure(P.ReadParams, {"file_path": "a", "offset": 3, "limit": None})
    assert (ok.offset, ok.limit) == (3, None)
    forked = P.structure(P.ForkParams, {"session": "s", "readOnly": True})
    assert forked.read_only is True


def test_messages_for_odd_argument_shapes() -> None:
    with pytest.raises(P.ParamsError, match=r'a list holding one JSON object .* "arguments": \[\{'):
        P.parse_arguments(P.ReadParams, ("file_path",))
    with pytest.raises(P.ParamsError, match=r"Allowed: none\."):
        P.parse_arguments(P.PingParams, ({"file_path": "x"},))
    with pytest.raises(P.ParamsError, match=r"1 is the first line; 0 counts as 1"):
        P.parse_arguments(P.ReadParams, ({"file_path": "x", "offset": -1},))


def test_a_missing_key_inside_a_list_item_names_the_item() -> None:
    with pytest.raises(
        P.ParamsError, match=r"Missing required parameter `new_string` .* in `edits\[1\]`"
    ):
        P.parse_arguments(
            P.MultiEditParams,
            (
                {
                    "file_path": "f",
                    "edits": [{"old_string": "a", "new_string": "b"}, {"old_string": "x"}],
                },
            ),
        )


def test_an_empty_file_path_given_is_a_path_and_one_left_out_is_missing() -> None:
    """``file_path`` is needed unless ``file_paths`` is given: ``""`` reaches the path
    check (``invalid_path``) as it did before a read could take several files, while a
    call without it is told what it lacks."""
    assert P.structure(P.ReadParams, {"file_path": ""}).file_path == ""
    with pytest.raises(P.ParamsError, match=r"Missing required parameter: `file_path`") as info:
        P.structure(P.ReadParams, {"offset": 2})
    assert info.value.field_name == "file_path"
    with pytest.raises(P.ParamsError, match="not both") as info:
        P.structure(P.ReadParams, {"file_path": "a", "file_paths": ["b"]})
    assert info.value.field_name == "file_paths"
    many = P.structure(P.ReadParams, {"file_paths": ["a", "b"]})
    assert many.file_paths == ["a", "b"] and many.file_path is None

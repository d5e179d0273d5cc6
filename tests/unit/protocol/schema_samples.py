"""Argument objects drawn from a tool's JSON Schema, and objects that break it in one place.

Only the keywords the tool source writes are known here (``type``, ``properties``,
``required``, ``additionalProperties``, ``minimum``, ``minLength``, ``maxLength``,
``pattern``, ``enum``, ``minItems``, ``items``); an unknown keyword fails the draw, so a
new kind of bound gets a generator before it gets a test that trusts one.
"""

from __future__ import annotations

import string
from typing import Any

from hypothesis import strategies as st

KNOWN = {
    "type",
    "properties",
    "required",
    "additionalProperties",
    "minimum",
    "maximum",
    "minLength",
    "maxLength",
    "pattern",
    "enum",
    "minItems",
    "maxItems",
    "items",
    "description",
    "default",
}

Schema = dict[str, Any]


def _check(schema: Schema) -> None:
    unknown = set(schema) - KNOWN
    assert not unknown, f"no generator for {unknown}"


def valid(schema: Schema) -> st.SearchStrategy[Any]:
    """Values ``schema`` accepts."""
    _check(schema)
    kind = schema["type"]
    if kind == "object":
        props = schema["properties"]
        required = set(schema["required"])
        return st.fixed_dictionaries(
            {k: valid(v) for k, v in props.items() if k in required},
            optional={k: valid(v) for k, v in props.items() if k not in required},
        )
    if "enum" in schema:
        return st.sampled_from(schema["enum"])
    if kind == "string":
        lo, hi = schema.get("minLength", 0), schema.get("maxLength", 300)
        if "pattern" in schema:
            return st.from_regex(schema["pattern"]).filter(lambda s: lo <= len(s) <= hi)
        return st.text(min_size=lo, max_size=hi)
    if kind == "integer":
        return st.integers(min_value=schema.get("minimum"), max_value=schema.get("maximum", 2**40))
    if kind == "boolean":
        return st.booleans()
    if kind == "array":
        most = min(schema.get("maxItems", 3), 3)
        return st.lists(valid(schema["items"]), min_size=schema.get("minItems", 0), max_size=most)
    raise AssertionError(f"no generator for type {kind!r}")


#: A value of each JSON type (null left out: the server takes it as "not given").
_OF_TYPE: dict[str, st.SearchStrategy[Any]] = {
    "string": st.text(max_size=5),
    "integer": st.integers(-5, 5),
    "boolean": st.booleans(),
    "array": st.lists(st.integers(), max_size=2),
    "object": st.dictionaries(st.sampled_from("abc"), st.integers(), max_size=2),
    # a number with a fraction: no integer type takes it (2.0 is an integer to JSON
    # Schema, and a float to the server: the one thing a schema cannot say)
    "number": st.floats(allow_nan=False, allow_infinity=False).filter(lambda f: f != int(f)),
}


def wrong_type(schema: Schema) -> st.SearchStrategy[Any]:
    """A value of another JSON type than ``schema``'s."""
    kind = schema["type"]
    return st.sampled_from(sorted(k for k in _OF_TYPE if k != kind)).flatmap(
        lambda other: _OF_TYPE[other]
    )


def out_of_bounds(schema: Schema) -> st.SearchStrategy[Any] | None:
    """A value of the right type outside ``schema``'s bound (None: it has none)."""
    options: list[st.SearchStrategy[Any]] = []
    if "minimum" in schema:
        options.append(st.integers(max_value=schema["minimum"] - 1, min_value=-(2**40)))
    if "maximum" in schema:
        options.append(st.integers(min_value=schema["maximum"] + 1, max_value=2**40))
    if "minLength" in schema and schema["minLength"] > 0:
        options.append(st.text(max_size=schema["minLength"] - 1))
    if "maxLength" in schema:
        hi = schema["maxLength"]
        over = st.tuples(st.text(max_size=5), st.integers(1, 10))
        options.append(over.map(lambda t: t[0] + "x" * (hi + t[1])))
    if "enum" in schema:
        values = schema["enum"]
        options.append(st.text(max_size=10).filter(lambda v: v not in values))
    if "pattern" in schema:
        options.append(st.sampled_from(["", "a", "1-2-3", "1,,2", "-3", "1234567890", "3 4"]))
    if "minItems" in schema and schema["minItems"] > 0:
        options.append(st.just([]))
    if "maxItems" in schema:
        n = schema["maxItems"] + 1
        options.append(st.lists(valid(schema["items"]), min_size=n, max_size=n + 2))
    return st.one_of(options) if options else None


def unknown_key(schema: Schema, taken: set[str]) -> st.SearchStrategy[str]:
    """A key neither ``schema`` nor the server (``taken``: every parameter and alias)
    knows."""
    return st.text(alphabet=string.ascii_letters + "_", min_size=1, max_size=12).filter(
        lambda k: k not in schema["properties"] and k not in taken
    )

"""Parameters of each command, and their strict validation.

Parameter names are snake_case on purpose: they are the names models already use for
file tools. Anything that does not fit (a missing field, a wrong type, an unknown key)
raises :class:`ParamsError`, which the server turns into a JSON-RPC InvalidParams error
naming the field.
"""

from __future__ import annotations

import dataclasses
import difflib
import re
import types
import typing
from dataclasses import dataclass, field
from typing import Any, TypeVar, get_type_hints

from steadyhand.protocol.commands import DEFAULT_SESSION


class ParamsError(ValueError):
    """The arguments of a command do not fit its parameters."""

    def __init__(self, message: str, field_name: str | None = None) -> None:
        super().__init__(message)
        self.field_name = field_name


@dataclass(frozen=True, slots=True)
class ReadParams:
    file_path: str
    offset: int | None = None
    limit: int | None = None
    session: str = DEFAULT_SESSION


@dataclass(frozen=True, slots=True)
class EditParams:
    file_path: str
    old_string: str
    new_string: str
    replace_all: bool = False
    session: str = DEFAULT_SESSION


@dataclass(frozen=True, slots=True)
class WriteParams:
    file_path: str
    content: str
    session: str = DEFAULT_SESSION


@dataclass(frozen=True, slots=True)
class ForkParams:
    session: str
    parent: str = DEFAULT_SESSION


@dataclass(frozen=True, slots=True)
class CloseParams:
    session: str


@dataclass(frozen=True, slots=True)
class PingParams:
    pass


#: Keys models commonly send by mistake, mapped to the parameter they meant.
_KNOWN_SLIPS: dict[str, str] = {
    "path": "file_path",
    "filename": "file_path",
    "file": "file_path",
    "uri": "file_path",
    "text": "content",
    "contents": "content",
    "old": "old_string",
    "new": "new_string",
    "old_str": "old_string",
    "new_str": "new_string",
    "start_line": "offset",
    "line": "offset",
    "count": "limit",
}

#: Extra checks on values, by field name: (predicate, what it must be).
_VALUE_RULES: dict[str, tuple[typing.Callable[[Any], bool], str]] = {
    "offset": (lambda v: v >= 0, "a line number >= 1"),
    "limit": (lambda v: v >= 1, "a positive line count"),
    "session": (lambda v: 0 < len(v) <= 256, "a non-empty name of at most 256 characters"),
    "parent": (lambda v: 0 < len(v) <= 256, "a non-empty name of at most 256 characters"),
}

P = TypeVar("P")


def _snake(name: str) -> str:
    return re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", name).lower().replace("-", "_")


def suggest(key: str, known: typing.Iterable[str]) -> str | None:
    """The parameter an unknown key most likely meant, if any."""
    known = list(known)
    for candidate in (_snake(key), _KNOWN_SLIPS.get(key), _KNOWN_SLIPS.get(_snake(key))):
        if candidate in known:
            return candidate
    close = difflib.get_close_matches(_snake(key), known, n=1, cutoff=0.6)
    return close[0] if close else None


def _type_name(tp: Any) -> str:
    if tp is bool:
        return "a boolean"
    if tp is int:
        return "an integer"
    if tp is str:
        return "a string"
    origin = typing.get_origin(tp)
    if origin is list:
        return "a list"
    if origin is dict:
        return "an object"
    return str(tp)


def _check_type(name: str, value: Any, tp: Any) -> Any:
    origin = typing.get_origin(tp)
    if origin in (types.UnionType, typing.Union):
        args = [a for a in typing.get_args(tp) if a is not type(None)]
        if value is None:
            return None
        return _check_type(name, value, args[0])
    if tp is bool:
        if not isinstance(value, bool):
            raise ParamsError(f"`{name}` must be a boolean (true or false).", name)
        return value
    if tp is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise ParamsError(f"`{name}` must be an integer.", name)
        return value
    if tp is str:
        if not isinstance(value, str):
            raise ParamsError(f"`{name}` must be a string.", name)
        return value
    if origin is list:
        if not isinstance(value, list):
            raise ParamsError(f"`{name}` must be a list.", name)
        (item_tp,) = typing.get_args(tp)
        return [_check_type(f"{name}[{i}]", v, item_tp) for i, v in enumerate(value)]
    if origin is dict or tp is dict:
        if not isinstance(value, dict):
            raise ParamsError(f"`{name}` must be an object.", name)
        return value
    if dataclasses.is_dataclass(tp) and isinstance(tp, type):
        return structure(tp, value, where=f"`{name}`")
    return value


def structure(cls: type[P], raw: Any, *, where: str = "the arguments") -> P:
    """Validate ``raw`` (one JSON object) against the dataclass ``cls``."""
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        raise ParamsError(f"{where} must be one JSON object with named fields.")
    hints = get_type_hints(cls)
    fields = {f.name: f for f in dataclasses.fields(cls)}  # type: ignore[arg-type]
    for key in raw:
        if key not in fields:
            hint = suggest(str(key), fields)
            extra = f" Did you mean `{hint}`?" if hint else ""
            allowed = ", ".join(f"`{n}`" for n in fields)
            raise ParamsError(
                f"Unknown parameter `{key}` in {where}.{extra} Allowed: {allowed}.", str(key)
            )
    values: dict[str, Any] = {}
    for name, f in fields.items():
        if name not in raw or raw[name] is None:
            required = f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
            if required:
                raise ParamsError(
                    f"Missing required parameter `{name}` ({_type_name(hints[name])}).", name
                )
            continue
        value = _check_type(name, raw[name], hints[name])
        rule = _VALUE_RULES.get(name)
        if rule is not None and value is not None and not rule[0](value):
            raise ParamsError(f"`{name}` must be {rule[1]}.", name)
        values[name] = value
    return cls(**values)


def parse_arguments(cls: type[P], arguments: tuple[Any, ...]) -> P:
    """Structure the ``arguments`` array of ``workspace/executeCommand``: one object."""
    if len(arguments) == 0:
        return structure(cls, {})
    if len(arguments) > 1:
        raise ParamsError(
            f"Expected one JSON object as the only argument, got {len(arguments)} arguments."
        )
    return structure(cls, arguments[0])


__all__ = [
    "CloseParams",
    "EditParams",
    "ForkParams",
    "ParamsError",
    "PingParams",
    "ReadParams",
    "WriteParams",
    "field",
    "parse_arguments",
    "structure",
    "suggest",
]

"""What the client answers to the requests the server sends it, read strictly.

The server asks the client to apply edits (``workspace/applyEdit``) and to save
documents (``steadyhand/saveDocuments``). An answer decides whether a change counts as
made, so it is read by its exact shape: only ``applied: true`` is an applied edit, and a
save counts only for the URIs the answer lists as saved. An answer of any other shape
(``{}``, ``{"applied": "no"}``, ``null``, an envelope with neither result nor error)
raises :class:`MalformedAnswer` at once, and the caller treats it as a refusal.
"""

from __future__ import annotations

from typing import Any

#: The most characters of a malformed answer quoted in a message.
SHOWN_CHARS = 120


class MalformedAnswer(Exception):
    """The client's answer to a request of the server's has a shape it must not have."""


def shown(value: Any) -> str:
    """``value`` as JSON-like text for a message, cut to :data:`SHOWN_CHARS`."""
    text = "null" if value is None else repr(plain(value))
    return text if len(text) <= SHOWN_CHARS else text[: SHOWN_CHARS - 3] + "..."


def plain(value: Any) -> Any:
    """``value`` with every JSON object as a dict (pygls may hand an object of a custom
    request's answer over as a named tuple)."""
    as_dict = getattr(value, "_asdict", None)
    if callable(as_dict):
        value = as_dict()
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    return value


def apply_edit_answer(raw: Any) -> tuple[bool, str | None]:
    """``(applied, failure reason)`` from the answer to ``workspace/applyEdit``
    (``ApplyWorkspaceEditResult``): ``applied`` must be true or false."""
    answer = plain(raw)
    if not isinstance(answer, dict):
        raise MalformedAnswer(f"the answer {shown(raw)} is not an object with `applied`")
    applied = answer.get("applied")
    if not isinstance(applied, bool):
        got = "missing" if "applied" not in answer else f"{shown(applied)}"
        raise MalformedAnswer(
            f"`applied` is {got} in the answer {shown(raw)}, where it must be true or false"
        )
    reason = answer.get("failureReason")
    if reason is not None and not isinstance(reason, str):
        reason = shown(reason)
    return applied, reason


def _uris(value: Any) -> list[str] | None:
    """A list of URIs as a client sends it; an empty object counts as an empty list (a
    Lua client encodes an empty table so)."""
    if value == {}:
        return []
    if isinstance(value, list) and all(isinstance(u, str) for u in value):
        return value
    return None


def save_refusal(raw: Any, uri: str) -> str | None:
    """Why the answer to ``steadyhand/saveDocuments`` says ``uri`` was not saved, None
    when it lists it as saved. The answer must be ``{"saved": [uri, ...], "results"?:
    [{"uri", "saved", "error"?}, ...]}``."""
    answer = plain(raw)
    saved = _uris(answer.get("saved")) if isinstance(answer, dict) else None
    if saved is None:
        raise MalformedAnswer(
            f"the answer {shown(raw)} is not an object with a `saved` list of URIs"
        )
    if uri in saved:
        return None
    results = answer.get("results")
    for outcome in results if isinstance(results, list) else []:
        if isinstance(outcome, dict) and outcome.get("uri") == uri and outcome.get("error"):
            error = outcome["error"]
            return error if isinstance(error, str) else shown(error)
    return "no reason given"

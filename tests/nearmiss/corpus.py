"""The near-miss corpus: files, model-style calls, and what must happen.

Each case in ``cases/`` is one JSON object: ``file`` (a path in the workspace) and its
``content``, the ``command`` (``edit`` or ``multiEdit``) with its ``params`` (without
``file_path``), and ``expect``: either ``{"ok": true, "content": ..., "matched": ...}``
(the file's exact content afterwards, and the tier(s) that matched) or
``{"ok": false, "error": ...}`` (the refusal's code; the file must stay byte-for-byte).

Cases are run end to end through the real server: the file is written, read whole,
and the call is made. :func:`judge` classifies the outcome.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any, Protocol

from lsprotocol import types

from steadyhand.protocol.commands import EDIT, MULTI_EDIT, READ

CASES_DIR = Path(__file__).parent / "cases"
COMMANDS = {"edit": EDIT, "multiEdit": MULTI_EDIT}


@dataclass(frozen=True)
class Case:
    id: str
    cls: str
    description: str
    file: str
    content: str
    command: str
    params: dict[str, Any]
    expect: dict[str, Any]

    @property
    def recoverable(self) -> bool:
        return bool(self.expect["ok"])


def load_cases() -> list[Case]:
    out: list[Case] = []
    for path in sorted(CASES_DIR.glob("*.json")):
        raw = json.loads(path.read_text(encoding="utf-8"))
        out.append(
            Case(
                id=raw["id"],
                cls=raw["class"],
                description=raw["description"],
                file=raw["file"],
                content=raw["content"],
                command=raw["command"],
                params=raw["params"],
                expect=raw["expect"],
            )
        )
    return out


class Client(Protocol):
    async def workspace_execute_command_async(self, params: types.ExecuteCommandParams) -> Any: ...


async def _call(client: Client, command: str, params: dict[str, Any]) -> dict[str, Any]:
    result = await client.workspace_execute_command_async(
        types.ExecuteCommandParams(command=command, arguments=[params])
    )
    assert isinstance(result, dict), result
    return result


@dataclass(frozen=True)
class Outcome:
    result: dict[str, Any]
    before: bytes
    after: bytes


async def run_case(client: Client, root: Path, case: Case) -> Outcome:
    """Write the case's file under ``root/<id>/``, read it, make the call."""
    path = root / case.id / case.file
    path.parent.mkdir(parents=True, exist_ok=True)
    before = case.content.encode("utf-8")
    path.write_bytes(before)
    read = await _call(client, READ, {"file_path": str(path)})
    assert read["ok"], read
    result = await _call(client, COMMANDS[case.command], {"file_path": str(path), **case.params})
    return Outcome(result, before, path.read_bytes())


class Verdict(StrEnum):
    RECOVERED = "recovered"  # a recoverable near-miss applied exactly as expected
    REFUSED = "refused"  # an unrecoverable call refused with the expected code
    MISSED = "missed"  # a recoverable near-miss refused (file unchanged)
    WRONG_CODE = "wrong_code"  # refused, file unchanged, but with another code
    WRONGLY_APPLIED = "wrongly_applied"  # the file changed, but not as expected


def judge(case: Case, out: Outcome) -> Verdict:
    changed = out.after != out.before
    if case.recoverable:
        expected = str(case.expect["content"]).encode("utf-8")
        if out.result.get("ok") and out.after == expected:
            want = case.expect.get("matched")
            if want is not None and out.result.get("matched") != want:
                return Verdict.WRONG_CODE
            return Verdict.RECOVERED
        return Verdict.WRONGLY_APPLIED if changed else Verdict.MISSED
    if changed or out.result.get("ok"):
        return Verdict.WRONGLY_APPLIED
    if out.result.get("error") != case.expect["error"]:
        return Verdict.WRONG_CODE
    return Verdict.REFUSED


def minified(size: int, seed: int = 7) -> str:
    """One line of ``size`` characters that looks like minified JavaScript: the input
    on which an unbounded near-miss search is quadratic in the line's length."""
    rng = random.Random(seed)
    words = ["function", "var", "return", "if", "else", "for", "this", "null", "x", "y"]
    punct = ["=", "(", ")", "{", "}", ";", ",", "+", "0", "1", ".", "&&", "||"]
    out: list[str] = []
    n = 0
    while n < size:
        piece = rng.choice(words) + rng.choice(punct)
        out.append(piece)
        n += len(piece)
    return "".join(out)[:size]

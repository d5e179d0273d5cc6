"""The test tree's own rules: where end-to-end tests live, and how tests name commands."""

from __future__ import annotations

import ast
from pathlib import Path

from steadyhand.mcp.rendezvous import MCP_CALL
from steadyhand.protocol import commands

TESTS = Path(__file__).resolve().parent

#: Every name the server answers or sends over LSP, as a string.
NAMES = {
    value
    for name, value in vars(commands).items()
    if name.isupper() and isinstance(value, str) and value.startswith("steadyhand")
} | {MCP_CALL}


def test_end_to_end_tests_live_in_the_folder_of_their_package() -> None:
    loose = sorted(p.name for p in (TESTS / "e2e").glob("*.py") if p.name != "__init__.py")
    assert loose == [], f"move these into tests/e2e/<package>/: {loose}"


def test_the_names_of_commands_and_methods_are_known_here() -> None:
    """(So that the check below cannot pass for knowing no name: this file alone spells them.)"""
    assert {"steadyhand.read", "steadyhand/saveDocuments", "steadyhand/mcpCall"} <= NAMES


def test_tests_name_commands_by_the_protocols_constants() -> None:
    """A test that spells ``"steadyhand.read"`` keeps talking to the old name after a
    rename; ``commands.READ`` follows it (or stops importing)."""
    spelled: list[str] = []
    for path in sorted(TESTS.rglob("*.py")):
        if path == Path(__file__).resolve():
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if isinstance(node, ast.Constant) and node.value in NAMES:
                spelled.append(f"{path.relative_to(TESTS)}:{node.lineno}: {node.value!r}")
    assert spelled == [], "name these by steadyhand.protocol.commands:\n" + "\n".join(spelled)

"""``steadyhand demo``: the real server, driven by a real LSP client, step by step.

It copies a sample workspace to a temporary folder, starts ``steadyhand serve`` as a
subprocess over stdio, and plays an agent: read, a quote-tolerant edit, an edit refused
because the file changed behind its back, a re-read and a good edit, a write that creates
a file in a new folder, and an overwrite with its ``+A / -R`` feedback.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import sys
import tempfile
import textwrap
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.lsp.client import LanguageClient

from steadyhand import __version__

SAMPLE = Path(__file__).parent / "workspace"


@dataclass
class Step:
    title: str
    command: str
    params: dict[str, Any]
    expect: Callable[[dict[str, Any]], bool]
    before: Callable[[], None] | None = None


def _show(title: str, params: dict[str, Any], result: dict[str, Any], ok: bool) -> None:
    bar = "─" * 72
    print(f"\n{bar}\n{title}\n{bar}")
    shown = {k: (v if len(str(v)) < 60 else str(v)[:57] + "...") for k, v in params.items()}
    print(f"→ call   {shown}")
    status = "ok" if result.get("ok") else f"refused: {result.get('error')}"
    print(f"← result {status}")
    print(textwrap.indent(str(result.get("message", "")), "  │ "))
    if result.get("diff_omitted"):
        print(f"  changed lines: {result.get('changed')} (added {result.get('added')})")
    print(f"{'✔' if ok else '✘'} {'as expected' if ok else 'NOT as expected'}")


async def _drive(root: Path) -> bool:
    client = LanguageClient("steadyhand-demo", __version__)
    await client.start_io(sys.executable, "-m", "steadyhand", "serve", "--log-level", "WARNING")
    await client.initialize_async(
        types.InitializeParams(
            capabilities=types.ClientCapabilities(),
            root_uri=root.as_uri(),
            workspace_folders=[types.WorkspaceFolder(uri=root.as_uri(), name="demo")],
            # The undo history of this throwaway workspace goes with it, not into the
            # user's state directory.
            initialization_options={"historyDir": str(root.parent / "history")},
        )
    )
    client.initialized(types.InitializedParams())

    greeting = str(root / "src" / "greeting.py")
    notes = str(root / "docs" / "notes.md")
    created = str(root / "src" / "util" / "strings.py")

    def behind_the_back() -> None:
        p = Path(greeting)
        p.write_text(p.read_text().replace("Goodbye", "See you"))
        print("\n(meanwhile a user edits src/greeting.py in another editor: Goodbye → See you)")

    steps = [
        Step(
            "1. Read a file",
            "steadyhand.read",
            {"file_path": "src/greeting.py"},
            lambda r: r["ok"] and r["type"] == "text" and "def greet" in r["message"],
        ),
        Step(
            "2. Read the notes (they use curly quotes)",
            "steadyhand.read",
            {"file_path": notes},
            lambda r: r["ok"],
        ),
        Step(
            "3. Edit with straight quotes: found thanks to quote normalization",
            "steadyhand.edit",
            {
                "file_path": notes,
                "old_string": 'The team\'s "quick start" takes two commands.',
                "new_string": 'The team\'s "quick start" takes two commands: make demo, make test.',
            },
            lambda r: (
                r["ok"]
                and r["matched"] == "quotes"
                and "team’s “quick start” takes two commands: make demo" in Path(notes).read_text()
            ),
        ),
        Step(
            "4. Edit after the file changed behind the agent's back: refused as stale",
            "steadyhand.edit",
            {"file_path": greeting, "old_string": "Goodbye", "new_string": "Farewell"},
            lambda r: (
                not r["ok"] and r["error"] == "stale" and "See you" in Path(greeting).read_text()
            ),
            before=behind_the_back,
        ),
        Step(
            "5. Re-read the file",
            "steadyhand.read",
            {"file_path": greeting},
            lambda r: r["ok"] and "See you" in r["message"],
        ),
        Step(
            "6. Edit again, on the current text: applied",
            "steadyhand.edit",
            {
                "file_path": greeting,
                "old_string": "See you, {name}.",
                "new_string": "See you soon, {name}.",
            },
            lambda r: r["ok"] and "See you soon" in Path(greeting).read_text(),
        ),
        Step(
            "7. Write a new file in a folder that does not exist yet",
            "steadyhand.write",
            {
                "file_path": created,
                "content": 'def shout(s: str) -> str:\n    return s.upper() + "!"\n',
            },
            lambda r: r["ok"] and r["type"] == "create" and Path(created).exists(),
        ),
        Step(
            "8. Overwrite a file the agent has read: the feedback counts what changed",
            "steadyhand.write",
            {
                "file_path": greeting,
                "content": '"""A tiny module the demo edits."""\n\n\ndef greet(name: str) -> str:\n'
                '    return f"Hello, {name}!"\n\n\ndef greet_all(names: list[str]) -> list[str]:\n'
                "    return [greet(n) for n in names]\n",
            },
            lambda r: (
                r["ok"]
                and r["type"] == "update"
                and r["added"] >= 1
                and r["removed"] >= 1
                and "≈ +" in r["message"]
            ),
        ),
        Step(
            "9. A long change: the diff is left out, the result says which lines changed",
            "steadyhand.write",
            {
                "file_path": created,
                "content": 'def shout(s: str) -> str:\n    return s.upper() + "!"\n\n'
                + "".join(f"LEVEL_{i} = {i}\n" for i in range(1, 101)),
            },
            lambda r: (
                r["ok"]
                and r.get("diff_omitted") is True
                and r["changed"] == [[3, 103]]
                and "include_diff" in r["message"]
            ),
        ),
    ]
    all_ok = True
    try:
        for step in steps:
            if step.before is not None:
                step.before()
            result: dict[str, Any] = (
                await client.workspace_execute_command_async(
                    types.ExecuteCommandParams(command=step.command, arguments=[step.params])
                )
                or {}
            )
            try:
                ok = bool(step.expect(result))
            except (KeyError, TypeError):
                ok = False
            _show(step.title, step.params, result, ok)
            all_ok = all_ok and ok
    finally:
        await client.shutdown_async(None)
        client.exit(None)
        await client.stop()  # type: ignore[no-untyped-call]
    return all_ok


def run_demo(keep: bool = False) -> int:
    tmp = Path(tempfile.mkdtemp(prefix="steadyhand-demo-"))
    root = tmp / "workspace"
    shutil.copytree(SAMPLE, root)
    print(f"Steadyhand {__version__} demo — sample workspace copied to {root}")
    print(f"Server: {sys.executable} -m steadyhand serve (stdio), client: pygls LanguageClient")
    try:
        ok = asyncio.run(_drive(root))
    finally:
        if not keep:
            shutil.rmtree(tmp, ignore_errors=True)
    print(
        "\n"
        + ("All steps behaved as expected." if ok else "Some steps did NOT behave as expected.")
    )
    return 0 if ok else 1


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(run_demo(keep=bool(os.environ.get("KEEP"))))

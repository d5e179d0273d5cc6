"""The credential scan end to end: notebooks scanned as their user sees them, long lines
scanned whole, placeholders left alone (``secrets: "block"``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pytest_lsp import LanguageClient

from steadyhand.protocol.commands import EDIT, READ, WRITE
from steadyhand.protocol.commands import NOTEBOOK_EDIT as NB_EDIT
from tests.conftest import call, client_with
from tests.secret_samples import PLACEHOLDERS, make

blocking = client_with({"secrets": "block"})


def _notebook(*sources: str) -> str:
    cells = [
        {
            "cell_type": "code",
            "execution_count": None,
            "id": f"c{i + 1}",
            "metadata": {},
            "outputs": [],
            "source": src.splitlines(keepends=True),
        }
        for i, src in enumerate(sources)
    ]
    nb: dict[str, Any] = {
        "cells": cells,
        "metadata": {"language_info": {"name": "python"}},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    return json.dumps(nb, indent=1) + "\n"


async def test_a_secret_written_into_a_notebook_cell_is_refused(
    blocking: LanguageClient, workspace: Path
) -> None:
    nb = workspace / "analysis.ipynb"
    before = _notebook("import boto3\n", "print('hi')\n")
    nb.write_text(before)
    assert (await call(blocking, READ, file_path=str(nb)))["ok"]
    aws = make("AWS secret access key").split(" = ")[1]
    r = await call(
        blocking,
        NB_EDIT,
        file_path=str(nb),
        cell_id="c2",
        new_source=f'session = boto3.Session(\n    aws_secret_access_key="{aws}",\n)\n',
    )
    assert r["ok"] is False and r["error"] == "secret_detected", r
    assert r["secrets"] == [
        {
            "kind": "AWS secret access key",
            "line": 2,
            "excerpt": "aws_…",
            "cell": "c2",
            "part": "source",
        }
    ]
    assert aws not in r["message"] and "in cell c2, line 2" in r["message"]
    assert nb.read_text() == before

    gcp = make("GCP service account key")
    r = await call(
        blocking,
        NB_EDIT,
        file_path=str(nb),
        cell_id="c1",
        edit_mode="insert",
        cell_type="code",
        new_source=f"key = {{\n  {gcp},\n}}\n",
    )
    assert r["ok"] is False and r["error"] == "secret_detected", r
    assert [s["kind"] for s in r["secrets"]] == ["GCP service account key"]
    assert nb.read_text() == before

    # a whole notebook written at once is scanned the same way
    token = make("GitHub token")
    w = await call(
        blocking, WRITE, file_path=str(nb), content=_notebook("x = 1\n", f't = "{token}"\n')
    )
    assert w["ok"] is False and w["error"] == "secret_detected", w
    assert [(s["cell"], s["line"]) for s in w["secrets"]] == [("c2", 1)]
    assert nb.read_text() == before


async def test_reading_a_notebook_with_a_credential_says_so(
    blocking: LanguageClient, workspace: Path
) -> None:
    nb = workspace / "n.ipynb"
    token = make("Slack token")
    nb.write_text(_notebook("x = 1\n", f'slack = "{token}"\n'))
    r = await call(blocking, READ, file_path=str(nb))
    assert r["ok"] and "looks like it holds secrets" in r["message"]
    assert "cell(s) c2" in r["message"] and "Slack token" in r["message"]


async def test_a_credential_past_column_20000_of_a_long_line_is_refused(
    blocking: LanguageClient, workspace: Path
) -> None:
    config = workspace / "config.min.json"
    config.write_text("{}\n")
    await call(blocking, READ, file_path=str(config))
    entries = ",".join(f'"opt{i}":{{"enabled":true,"label":"value {i}"}}' for i in range(700))
    key = make("Stripe secret key")
    minified = "{" + entries + f',"stripe":"{key}"' + "}\n"
    assert minified.index(key) > 20_000
    r = await call(blocking, WRITE, file_path=str(config), content=minified)
    assert r["ok"] is False and r["error"] == "secret_detected", r
    assert [(s["kind"], s["line"]) for s in r["secrets"]] == [("Stripe secret key", 1)]
    assert config.read_text() == "{}\n"


async def test_placeholders_pass_block_mode(blocking: LanguageClient, workspace: Path) -> None:
    readme = "\n".join(["# Setup", "", *(f"    {p}" for p in PLACEHOLDERS), ""])
    r = await call(blocking, WRITE, file_path=str(workspace / "README.md"), content=readme)
    assert r["ok"], r
    assert "secrets" not in r and "credential" not in r["message"]
    example = 'SLACK_TOKEN="xoxb-your-token-here"\nGITHUB_TOKEN=ghp_' + "x" * 36 + "\n"
    r = await call(blocking, WRITE, file_path=str(workspace / ".env.example"), content=example)
    assert r["ok"], r
    code = workspace / "bot.py"
    code.write_text("TOKEN = None\n")
    await call(blocking, READ, file_path=str(code))
    r = await call(
        blocking,
        EDIT,
        file_path=str(code),
        old_string="TOKEN = None",
        new_string='TOKEN = os.environ.get("SLACK_TOKEN", "xoxb-your-token-here")',
    )
    assert r["ok"], r
    # a real-shaped token in the same place is still refused
    r = await call(
        blocking,
        EDIT,
        file_path=str(code),
        old_string='"xoxb-your-token-here"',
        new_string=f'"{make("Slack token")}"',
    )
    assert r["ok"] is False and r["error"] == "secret_detected", r

"""The second round of near-miss tiers, end to end over stdio through edit and multiEdit.

Each slip is one a model makes in practice: text copied with the read output's line
numbers, another Unicode normalization form, a final line break the file lacks, tabs
inside lines written as spaces, HTML/XML character references, a string escaped once
too often. Each is recovered with the file's untouched bytes kept, and each refused
when it has two readings.
"""

from __future__ import annotations

import re
import unicodedata
from pathlib import Path
from typing import Any

import pytest
from pytest_lsp import LanguageClient

from steadyhand.protocol.commands import EDIT, READ
from steadyhand.protocol.commands import MULTI_EDIT as MULTI
from tests.conftest import call


def renumber(text: str) -> str:
    """Read-output lines numbered one more (a line was added above them)."""
    return re.sub(r"(?m)^ *(\d+)\t", lambda m: f"{int(m.group(1)) + 1:>6}\t", text)


def nfd(s: str) -> str:
    return unicodedata.normalize("NFD", s)


# name: (file name, content, old_string, new_string, content after, matched)
SLIPS: dict[str, tuple[str, str, str, str, str, str]] = {
    "line_numbers": (
        "calc.py",
        "def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n",
        "     5\tdef sub(a, b):\n     6\t    return a - b",
        "     5\tdef sub(a, b):\n     6\t    return b - a",
        "def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return b - a\n",
        "line_numbers",
    ),
    "unicode_normalization": (
        "notes.md",
        nfd("Le café est très bon.\n"),
        "café est très bon",
        "café est très bon et chaud",
        nfd("Le café est très bon") + " et chaud.\n",
        "unicode_normalization",
    ),
    "final_newline": (
        "hosts.txt",
        "alpha\nbeta\nlast host",
        "last host\n",
        "final host\n",
        "alpha\nbeta\nfinal host",
        "final_newline",
    ),
    "tabs": (
        "Makefile",
        "CC\t= gcc\nCFLAGS\t= -O2\n",
        "CFLAGS  = -O2",
        "CFLAGS  = -O3 -g",
        "CC\t= gcc\nCFLAGS\t= -O3 -g\n",
        "tabs",
    ),
    "entities": (
        "check.js",
        "if (a && b) {\n  run();\n}\n",
        "if (a &amp;&amp; b) {",
        "if (a &amp;&amp; b &amp;&amp; c) {",
        "if (a && b && c) {\n  run();\n}\n",
        "entities",
    ),
    "escapes": (
        "greet.py",
        'def greet(name):\n    print("Hello, " + name)\n',
        'def greet(name):\\n    print(\\"Hello, \\" + name)',
        'def greet(name):\\n    print(\\"Hi, \\" + name)',
        'def greet(name):\n    print("Hi, " + name)\n',
        "escapes",
    ),
}

# name: (content, old_string, error): two readings, refused
TWO_READINGS: dict[str, tuple[str, str, str]] = {
    "line_numbers": ("x = 0\nreset()\ny = 0\nreset()\n", "     2\treset()", "ambiguous"),
    "unicode_normalization": (nfd("café one\ncafé two\n"), "café", "ambiguous"),
    "tabs": ("x\t= 1\nx\t\t= 1\n", "x    = 1", "ambiguous"),
    "entities_places": ("<b>A &amp; B</b>\n<i>A &#38; B</i>\n", "A & B", "ambiguous"),
    "entities_directions": ("x &amp; y < z\n", "x & y &lt; z", "no_match"),
    "escapes": ('print("a")\nprint("a")\n', 'print(\\"a\\")', "ambiguous"),
}


async def _read(client: LanguageClient, workspace: Path, name: str, content: str) -> Path:
    f = workspace / name
    f.write_bytes(content.encode("utf-8"))
    assert (await call(client, READ, file_path=name))["ok"]
    return f


@pytest.mark.parametrize("slip", sorted(SLIPS))
async def test_edit_recovers_the_slip(client: LanguageClient, workspace: Path, slip: str) -> None:
    name, content, old, new, after, matched = SLIPS[slip]
    f = await _read(client, workspace, name, content)
    r = await call(client, EDIT, file_path=name, old_string=old, new_string=new)
    assert r["ok"], r
    assert r["matched"] == matched
    assert f"Matched with {matched} tolerance" in r["message"], r["message"]
    assert f.read_bytes() == after.encode("utf-8")


@pytest.mark.parametrize("slip", sorted(SLIPS))
async def test_multi_edit_recovers_the_slip(
    client: LanguageClient, workspace: Path, slip: str
) -> None:
    """The slipped edit goes second, after an exact edit of a header line the file gets
    first, so it is planned on the text the first edit left."""
    name, content, old, new, after, matched = SLIPS[slip]
    header = "# header\n"
    if slip == "line_numbers":  # one line more above: the read output numbers it so
        old, new = renumber(old), renumber(new)
    f = await _read(client, workspace, name, header + content)
    edits: list[dict[str, Any]] = [
        {"old_string": "# header", "new_string": "# top"},
        {"old_string": old, "new_string": new},
    ]
    r = await call(client, MULTI, file_path=name, edits=edits)
    assert r["ok"], r
    assert r["matched"] == ["exact", matched]
    assert f"edit 2 matched with {matched} tolerance" in r["message"], r["message"]
    assert f.read_bytes() == ("# top\n" + after).encode("utf-8")


@pytest.mark.parametrize("case", sorted(TWO_READINGS))
async def test_two_readings_are_refused_by_edit_and_multi_edit(
    client: LanguageClient, workspace: Path, case: str
) -> None:
    content, old, error = TWO_READINGS[case]
    f = await _read(client, workspace, "two.txt", content)
    r = await call(client, EDIT, file_path="two.txt", old_string=old, new_string="changed")
    assert r["ok"] is False and r["error"] == error, r
    if error == "ambiguous":
        assert r["matches"] == 2 and len(r["lines"]) == 2, r
        assert "tolerance" in r["message"] and "exactly one place" in r["message"]
    assert f.read_bytes() == content.encode("utf-8")
    # the same edit second in a multiEdit, after one that changes a header line
    f = await _read(client, workspace, "two.txt", "# header\n" + content)
    m = await call(
        client,
        MULTI,
        file_path="two.txt",
        edits=[
            {"old_string": "# header", "new_string": "# top"},
            {"old_string": old, "new_string": "changed"},
        ],
    )
    assert m["ok"] is False and m["error"] == error and m["edit_index"] == 1, m
    assert f.read_bytes() == ("# header\n" + content).encode("utf-8")


async def test_escaped_old_string_with_new_string_read_two_ways_is_refused(
    client: LanguageClient, workspace: Path
) -> None:
    content = 'def f():\n    return "x"\n'
    f = await _read(client, workspace, "f.py", content)
    r = await call(
        client,
        EDIT,
        file_path="f.py",
        old_string='def f():\\n    return \\"x\\"',
        new_string='def f():\n    return \\"y\\"',
    )
    assert r["ok"] is False and r["error"] == "no_match", r
    assert r["lines"] == [1] and "escapes" in r["message"], r
    assert f.read_bytes() == content.encode("utf-8")


async def test_no_match_with_line_numbers_shows_the_closest_text_without_them(
    client: LanguageClient, workspace: Path
) -> None:
    f = await _read(client, workspace, "k.py", "a = 1\nb = 2\nc = 3\n")
    r = await call(client, EDIT, file_path="k.py", old_string="     2\tb = 5", new_string="b = 6")
    assert r["ok"] is False and r["error"] == "no_match", r
    assert r["closest_lines"] == [2, 2], r
    assert "line-number prefixes" in r["differences"][0], r["differences"]
    assert any("'b = 2'" in d and "'b = 5'" in d for d in r["differences"]), r["differences"]
    assert f.read_text() == "a = 1\nb = 2\nc = 3\n"

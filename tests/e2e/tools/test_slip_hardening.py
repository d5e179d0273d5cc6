"""Wrong text a tolerated edit must never write, end to end over stdio through edit and
multiEdit: an accent split from its letter, digits of data taken for line numbers, a
raw ``&`` in an escaped file, an untouched NFD word rewritten in NFC, trailing blanks
the model kept dropped."""

from __future__ import annotations

import unicodedata
from pathlib import Path
from typing import Any

import pytest
from pytest_lsp import LanguageClient

from steadyhand.protocol.commands import EDIT, READ
from steadyhand.protocol.commands import MULTI_EDIT as MULTI
from tests.conftest import call


def nfd(s: str) -> str:
    return unicodedata.normalize("NFD", s)


# name: (file name, content, old_string, new_string, content after, matched)
CASES: dict[str, tuple[str, str, str, str, str, str]] = {
    "whole_character": (
        "user.py",
        nfd('user = "José"\n'),
        nfd('user = "José'),
        nfd('user = "Josée'),
        nfd('user = "Josée"\n'),
        "exact",
    ),
    "data_row_kept": (
        "rows.tsv",
        "name\tcount\nalpha\t12\n",
        "1\tname\tcount\n2\talpha\t12\n",
        "1\tname\tcount\n2\talpha\t12\n2024\t17\n",
        "name\tcount\nalpha\t12\n2024\t17\n",
        "line_numbers",
    ),
    "ampersand_escaped": (
        "menu.xml",
        "<menu>\n  <item>Fish &amp; Chips</item>\n</menu>\n",
        "<item>Fish & Chips</item>",
        "<item>Fish & Chips & Peas</item>",
        "<menu>\n  <item>Fish &amp; Chips &amp; Peas</item>\n</menu>\n",
        "entities",
    ),
    "untouched_word_nfd": (
        "words.py",
        nfd('s = "naïve café"\n'),
        's = "naïve café"',
        's = "naïve cafés" + suffix',
        nfd('s = "naïve café') + 's" + suffix\n',
        "unicode_normalization",
    ),
    "trailing_blanks_kept": (
        "conf.py",
        "x = 1  \ny = 2\n",
        "x = 1  \n",
        "x = 12  \n",
        "x = 12  \ny = 2\n",
        "exact",
    ),
}


async def _read(client: LanguageClient, workspace: Path, name: str, content: str) -> Path:
    f = workspace / name
    f.write_bytes(content.encode("utf-8"))
    assert (await call(client, READ, file_path=name))["ok"]
    return f


@pytest.mark.parametrize("case", sorted(CASES))
async def test_edit_writes_only_what_the_model_changed(
    client: LanguageClient, workspace: Path, case: str
) -> None:
    name, content, old, new, after, matched = CASES[case]
    f = await _read(client, workspace, name, content)
    r = await call(client, EDIT, file_path=name, old_string=old, new_string=new)
    assert r["ok"], r
    assert r["matched"] == matched
    assert f.read_bytes() == after.encode("utf-8")


@pytest.mark.parametrize("case", sorted(CASES))
async def test_multi_edit_writes_only_what_the_model_changed(
    client: LanguageClient, workspace: Path, case: str
) -> None:
    """The edit goes second, after an exact edit of a last line the file gets, so it is
    planned on the text the first edit left."""
    name, content, old, new, after, matched = CASES[case]
    f = await _read(client, workspace, name, content + "# footer\n")
    edits: list[dict[str, Any]] = [
        {"old_string": "# footer", "new_string": "# end"},
        {"old_string": old, "new_string": new},
    ]
    r = await call(client, MULTI, file_path=name, edits=edits)
    assert r["ok"], r
    assert r["matched"] == ["exact", matched]
    assert f.read_bytes() == (after + "# end\n").encode("utf-8")


# name: (content, old_string, what the message says)
SPLITS: dict[str, tuple[str, str, str]] = {
    "accent": (nfd('user = "José"\n'), 'user = "Jose', "ends inside a character"),
    "accent_start": (nfd("x = 'é'\n"), "\u0301'", "starts inside a character"),
    "skin_tone": ("ok = '\U0001f44d\U0001f3fd'\n", "ok = '\U0001f44d", "ends inside"),
    "zwj": ("f = '\U0001f468\u200d\U0001f469'\n", "f = '\U0001f468", "ends inside"),
}


@pytest.mark.parametrize("case", sorted(SPLITS))
async def test_an_edit_that_would_split_a_character_is_refused(
    client: LanguageClient, workspace: Path, case: str
) -> None:
    content, old, says = SPLITS[case]
    f = await _read(client, workspace, "split.py", content)
    r = await call(client, EDIT, file_path="split.py", old_string=old, new_string="x")
    assert r["ok"] is False and r["error"] == "no_match", r
    assert says in r["message"] and "Include the whole character" in r["message"], r
    assert r["lines"] == [1], r
    r = await call(
        client, EDIT, file_path="split.py", old_string=old, new_string="x", replace_all=True
    )
    assert r["ok"] is False and r["error"] == "no_match", r
    m = await call(
        client,
        MULTI,
        file_path="split.py",
        edits=[{"old_string": old, "new_string": "x"}],
    )
    assert m["ok"] is False and m["error"] == "no_match" and m["edit_index"] == 0, m
    assert f.read_bytes() == content.encode("utf-8")

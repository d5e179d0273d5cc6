"""Which grammar a file is checked with: language id, name, then ``#!`` line."""

from __future__ import annotations

import importlib

import pytest
from hypothesis import given
from hypothesis import strategies as st

from steadyhand.syntax import grammars
from steadyhand.syntax.languages import (
    EXTENSIONS,
    FILE_NAMES,
    GRAMMARS,
    LANGUAGE_IDS,
    by_shebang,
    detect,
    first_line,
)

#: The languages the guard promises to check.
REQUIRED = {
    "python",
    "javascript",
    "typescript",
    "tsx",
    "json",
    "go",
    "rust",
    "java",
    "c",
    "cpp",
    "csharp",
    "ruby",
    "bash",
    "css",
    "html",
    "yaml",
    "toml",
}


def test_every_required_language_has_a_grammar_that_loads() -> None:
    assert set(GRAMMARS) >= REQUIRED
    for lang in sorted(REQUIRED):
        assert grammars.language(lang) is not None, lang
    assert set(grammars.loaded()) >= REQUIRED


def test_every_name_and_id_points_at_a_known_grammar() -> None:
    for table in (EXTENSIONS, FILE_NAMES, LANGUAGE_IDS):
        assert set(table.values()) <= set(GRAMMARS)


def test_no_grammar_comes_from_the_language_pack() -> None:
    for module, _ in GRAMMARS.values():
        assert module.startswith("tree_sitter_") and "language_pack" not in module
        assert importlib.util.find_spec(module) is not None, module


@pytest.mark.parametrize(
    ("path", "lang"),
    [
        ("/w/a.py", "python"),
        ("/w/A.PY", "python"),
        ("/w/app.mjs", "javascript"),
        ("/w/c.jsx", "javascript"),
        ("/w/x.ts", "typescript"),
        ("/w/x.d.ts", "typescript"),
        ("/w/v.tsx", "tsx"),
        ("/w/p.json", "json"),
        ("/w/m.go", "go"),
        ("/w/l.rs", "rust"),
        ("/w/M.java", "java"),
        ("/w/m.c", "c"),
        ("/w/m.h", "cpp"),
        ("/w/m.hpp", "cpp"),
        ("/w/P.cs", "csharp"),
        ("/w/l.rb", "ruby"),
        ("/w/Gemfile", "ruby"),
        ("/w/r.sh", "bash"),
        ("/w/s.css", "css"),
        ("/w/i.html", "html"),
        ("/w/c.yml", "yaml"),
        ("/w/Cargo.toml", "toml"),
        ("/w/notes.md", None),
        ("/w/Makefile", None),
        ("/w/x.scss", None),
    ],
)
def test_by_name(path: str, lang: str | None) -> None:
    assert detect(path) == lang


@pytest.mark.parametrize(
    ("line", "lang"),
    [
        ("#!/usr/bin/env python3", "python"),
        ("#!/usr/bin/python3.12 -u", "python"),
        ("#!/bin/bash -e", "bash"),
        ("#!/bin/sh", "bash"),
        ("#! /usr/bin/env node", "javascript"),
        ("#!/usr/bin/env -S node --experimental-vm-modules", "javascript"),
        ("#!/usr/bin/env -S VAR=1 deno run", "typescript"),
        ("#!/usr/bin/env ruby", "ruby"),
        ("#!/usr/bin/env perl", None),
        ("#!", None),
        ("# just a comment", None),
        ("", None),
    ],
)
def test_by_shebang(line: str, lang: str | None) -> None:
    assert by_shebang(line) == lang


def test_the_editors_language_id_comes_first_and_unknown_ids_fall_back() -> None:
    assert detect("/w/script", "", "python") == "python"
    assert detect("/w/script", "", "shellscript") == "bash"
    assert detect("/w/a.js", "", "typescriptreact") == "tsx"
    # an id that is none of ours: the name (or the #! line) decides
    assert detect("/w/a.py", "", "plaintext") == "python"
    assert detect("/w/tool", "#!/usr/bin/env python3", "plaintext") == "python"
    assert detect("/w/tool", "", "plaintext") is None


@given(st.text(max_size=300))
def test_first_line_is_the_text_up_to_the_first_break(text: str) -> None:
    line = first_line(text)
    assert "\n" not in line and text.startswith(line) and len(line) <= 256

"""Which grammar a file is checked with: by the editor's language id, its name, or its
first line (``#!``). Pure: no grammar is loaded here.

A language is named by the key of :data:`GRAMMARS`, which also says where its grammar
lives: the module of the official per-language wheel (``tree-sitter-python`` installs
``tree_sitter_python``) and the function in it that returns the language.
"""

from __future__ import annotations

import functools
import os
import re

from steadyhand.syntax.jsonc import is_jsonc

#: language -> (module, function) of its grammar wheel
GRAMMARS: dict[str, tuple[str, str]] = {
    "python": ("tree_sitter_python", "language"),
    "javascript": ("tree_sitter_javascript", "language"),
    "typescript": ("tree_sitter_typescript", "language_typescript"),
    "tsx": ("tree_sitter_typescript", "language_tsx"),
    "json": ("tree_sitter_json", "language"),
    # JSON with comments and trailing commas (tsconfig.json...): the JSON grammar, on the
    # text with its trailing commas blanked (steadyhand.syntax.jsonc)
    "jsonc": ("tree_sitter_json", "language"),
    "go": ("tree_sitter_go", "language"),
    "rust": ("tree_sitter_rust", "language"),
    "java": ("tree_sitter_java", "language"),
    "c": ("tree_sitter_c", "language"),
    "cpp": ("tree_sitter_cpp", "language"),
    "csharp": ("tree_sitter_c_sharp", "language"),
    "ruby": ("tree_sitter_ruby", "language"),
    "bash": ("tree_sitter_bash", "language"),
    "css": ("tree_sitter_css", "language"),
    "html": ("tree_sitter_html", "language"),
    "yaml": ("tree_sitter_yaml", "language"),
    "toml": ("tree_sitter_toml", "language"),
}

#: File name suffixes (lower case) and their language.
EXTENSIONS: dict[str, str] = {
    ".py": "python",
    ".pyi": "python",
    ".pyw": "python",
    ".js": "javascript",
    ".mjs": "javascript",
    ".cjs": "javascript",
    ".jsx": "javascript",
    ".jsonc": "jsonc",
    ".ts": "typescript",
    ".mts": "typescript",
    ".cts": "typescript",
    ".tsx": "tsx",
    ".json": "json",
    ".go": "go",
    ".rs": "rust",
    ".java": "java",
    ".c": "c",
    # A header may be C or C++; the C++ grammar reads both (the C one refuses classes).
    ".h": "cpp",
    ".cc": "cpp",
    ".cpp": "cpp",
    ".cxx": "cpp",
    ".c++": "cpp",
    ".hh": "cpp",
    ".hpp": "cpp",
    ".hxx": "cpp",
    ".h++": "cpp",
    ".ipp": "cpp",
    ".inl": "cpp",
    ".cs": "csharp",
    ".rb": "ruby",
    ".rake": "ruby",
    ".gemspec": "ruby",
    ".ru": "ruby",
    ".sh": "bash",
    ".bash": "bash",
    ".css": "css",
    ".html": "html",
    ".htm": "html",
    ".yaml": "yaml",
    ".yml": "yaml",
    ".toml": "toml",
}

#: Whole file names (as written) that say the language without a suffix.
FILE_NAMES: dict[str, str] = {
    "Gemfile": "ruby",
    "Rakefile": "ruby",
    "Guardfile": "ruby",
    "Podfile": "ruby",
    "Vagrantfile": "ruby",
    ".bashrc": "bash",
    ".bash_profile": "bash",
    ".bash_aliases": "bash",
    ".profile": "bash",
    "Pipfile": "toml",
}

#: Editors' language ids (VS Code's, which other editors mostly share) and their language.
LANGUAGE_IDS: dict[str, str] = {
    "python": "python",
    "javascript": "javascript",
    "javascriptreact": "javascript",
    "jsx": "javascript",
    "typescript": "typescript",
    "typescriptreact": "tsx",
    "tsx": "tsx",
    "json": "json",
    "jsonc": "jsonc",
    "go": "go",
    "rust": "rust",
    "java": "java",
    "c": "c",
    "cpp": "cpp",
    "csharp": "csharp",
    "ruby": "ruby",
    "shellscript": "bash",
    "sh": "bash",
    "bash": "bash",
    "css": "css",
    "html": "html",
    "yaml": "yaml",
    "toml": "toml",
}

#: Programs named on a ``#!`` line and their language.
INTERPRETERS: dict[str, str] = {
    "python": "python",
    "pypy": "python",
    "node": "javascript",
    "nodejs": "javascript",
    "bun": "javascript",
    "deno": "typescript",
    "ts-node": "typescript",
    "tsx": "typescript",
    "ruby": "ruby",
    "sh": "bash",
    "bash": "bash",
    "dash": "bash",
    "ksh": "bash",
}

_VERSIONED = re.compile(r"^(.*?)[\d.]*$")


def by_shebang(first_line: str) -> str | None:
    """The language a ``#!`` line names (``#!/usr/bin/env python3``, ``#!/bin/bash -e``,
    ``#!/usr/bin/env -S node --flag``), else None."""
    if not first_line.startswith("#!"):
        return None
    words = first_line[2:].split()
    if not words:
        return None
    prog = os.path.basename(words[0])
    rest = words[1:]
    if prog == "env":
        rest = [w for w in rest if not w.startswith("-") and "=" not in w]
        if not rest:
            return None
        prog = os.path.basename(rest[0])
    m = _VERSIONED.match(prog)
    name = m.group(1) if m is not None else prog
    return INTERPRETERS.get(name) or INTERPRETERS.get(prog)


@functools.lru_cache(maxsize=1024)
def by_name(path: str) -> str | None:
    """The language a file's name says, else None (remembered per path: every change
    asks again)."""
    if is_jsonc(path):
        return "jsonc"
    base = os.path.basename(path)
    known = FILE_NAMES.get(base)
    if known is not None:
        return known
    return EXTENSIONS.get(os.path.splitext(base)[1].lower())


def detect(path: str, first_line: str = "", language_id: str | None = None) -> str | None:
    """The language ``path`` is checked as: the open document's language id when it names
    one of ours, else the file's name, else its ``#!`` line; None: not checked."""
    if language_id:
        lang = LANGUAGE_IDS.get(language_id.lower())
        if lang == "json" and is_jsonc(path):
            return "jsonc"  # an editor that calls every .json file JSON
        if lang is not None:
            return lang
    return by_name(path) or by_shebang(first_line)


def first_line(text: str, most: int = 256) -> str:
    """The first line of ``text`` (at most ``most`` characters)."""
    head = text[:most]
    cut = head.find("\n")
    return head if cut < 0 else head[:cut]

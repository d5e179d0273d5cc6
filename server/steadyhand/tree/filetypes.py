"""File types a search can be narrowed to, by name, as ripgrep's ``--type`` does (pure).

Each type is a few globs on a file's name; a file of the type matches one of them.
"""

from __future__ import annotations

from typing import Final

TYPES: Final[dict[str, tuple[str, ...]]] = {
    "c": ("*.c", "*.h"),
    "cpp": ("*.cpp", "*.cc", "*.cxx", "*.c++", "*.hpp", "*.hh", "*.hxx", "*.h++", "*.h", "*.inl"),
    "csharp": ("*.cs", "*.csx"),
    "css": ("*.css", "*.scss", "*.sass", "*.less"),
    "go": ("*.go",),
    "html": ("*.html", "*.htm", "*.xhtml"),
    "java": ("*.java",),
    "js": ("*.js", "*.mjs", "*.cjs", "*.jsx"),
    "json": ("*.json", "*.jsonc", "*.json5", "*.jsonl"),
    "kotlin": ("*.kt", "*.kts"),
    "lua": ("*.lua",),
    "make": ("Makefile", "makefile", "GNUmakefile", "*.mk", "*.mak"),
    "md": ("*.md", "*.markdown", "*.mdx"),
    "php": ("*.php", "*.phtml"),
    "py": ("*.py", "*.pyi", "*.pyw"),
    "rb": ("*.rb", "*.rake", "*.gemspec", "Gemfile", "Rakefile"),
    "rust": ("*.rs",),
    "scala": ("*.scala", "*.sc"),
    "sh": ("*.sh", "*.bash", "*.zsh", "*.ksh", ".bashrc", ".zshrc", ".profile"),
    "sql": ("*.sql",),
    "swift": ("*.swift",),
    "toml": ("*.toml", "Cargo.lock"),
    "ts": ("*.ts", "*.tsx", "*.mts", "*.cts"),
    "txt": ("*.txt",),
    "xml": ("*.xml", "*.xsd", "*.xsl", "*.xslt", "*.svg"),
    "yaml": ("*.yaml", "*.yml"),
}

#: Other names models and people give the same types.
ALIASES: Final[dict[str, str]] = {
    "python": "py",
    "javascript": "js",
    "jsx": "js",
    "typescript": "ts",
    "tsx": "ts",
    "golang": "go",
    "rs": "rust",
    "markdown": "md",
    "yml": "yaml",
    "c++": "cpp",
    "cs": "csharp",
    "ruby": "rb",
    "shell": "sh",
    "bash": "sh",
    "kt": "kotlin",
    "text": "txt",
    "makefile": "make",
}


def type_name(name: str) -> str | None:
    """The type ``name`` stands for (lower case, aliases followed), or None."""
    key = name.strip().lower()
    key = ALIASES.get(key, key)
    return key if key in TYPES else None


def type_globs(name: str) -> tuple[str, ...] | None:
    """The globs of the type ``name``, or None when there is no such type."""
    key = type_name(name)
    return TYPES[key] if key is not None else None

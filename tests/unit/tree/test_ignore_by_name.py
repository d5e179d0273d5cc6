"""Ignore rules asked by name (``IgnoreStack.folder``) give the verdicts the whole path
gives (``IgnoreStack.ignored``), whatever the patterns, the files' folders and the path;
and an ignore file is compiled once per text."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from steadyhand.tree import ignore
from steadyhand.tree.ignore import IgnoreStack, parse

#: Patterns of every form: names, suffixes, prefixes, classes (negated ones too, which
#: pathspec lets match a ``/``), ``?``, anchored, with folders, ``**``, negations,
#: escapes, folder-only.
PATTERNS = [
    "*.log",
    "!keep.log",
    "build/",
    "build",
    "/top",
    "a/**/b",
    "**/gen/",
    "gen/**",
    "?x",
    "[ab]*",
    "[!a]b",
    "x[!a]y",
    "!a*",
    "*",
    "**",
    "b*",
    "*x",
    "a.b",
    "\\!x",
    "x?y",
    "a/b",
    "!b/",
    "*.[lx]og",
    "a**b",
    ".*",
    "x/",
    "!x",
    "ab ",
    "a\\ ",
]
NAMES = st.text(alphabet="abxy.log!", min_size=1, max_size=5)
BASES = ["", "a", "a/b", "x", "b"]


@settings(max_examples=600)
@given(
    files=st.lists(
        st.tuples(st.sampled_from(BASES), st.lists(st.sampled_from(PATTERNS), max_size=5)),
        min_size=1,
        max_size=4,
    ),
    folder=st.lists(NAMES, max_size=4),
    name=NAMES,
    is_dir=st.booleans(),
)
def test_asking_by_name_agrees_with_asking_the_path(
    files: list[tuple[str, list[str]]], folder: list[str], name: str, is_dir: bool
) -> None:
    # files deeper in the tree come later in a stack, as a walk stacks them
    ordered = sorted(files, key=lambda f: f[0].count("/") + (1 if f[0] else 0))
    stack = IgnoreStack().with_files(parse("\n".join(lines), base) for base, lines in ordered)
    rel = "/".join(folder)
    path = f"{rel}/{name}" if rel else name
    by_path = stack.ignored(path, is_dir=is_dir)
    assert stack.folder(rel).ignored(name, is_dir=is_dir) == by_path


def test_names_are_sorted_into_sets_suffixes_and_prefixes() -> None:
    rules = parse("build/\n*.pyc\ntmp*\n!keep.log\n*.[oa]\ndocs/*.md\n", "")
    assert rules is not None and rules.names is not None
    names = rules.names
    assert names.exact == {"build", "keep.log"}
    assert names.suffixes == (".pyc",) and names.prefixes == ("tmp",)
    assert names.name_rx is not None and names.name_rx.match("lib.o")
    assert names.path_rx is not None and names.path_rx.match("docs/a.md")
    assert not names.hits("main.py", is_dir=False)


def test_a_folder_whose_name_matches_a_pattern_asks_the_whole_path() -> None:
    # build/ is left out at the top, but a deeper file takes it back: below it, the
    # pattern matches the path through the folder's name, and the spec decides
    top = parse("build/\n", "")
    deeper = parse("!build/\n", "sub")
    stack = IgnoreStack().with_files([top, deeper])
    assert not stack.ignored("sub/build", is_dir=True)
    inside = stack.folder("sub/build")
    assert inside.ignored("x.c", is_dir=False) == stack.ignored("sub/build/x.c", is_dir=False)
    assert [by_name for _, _, by_name in inside.levels] == [False, False]


def test_an_ignore_file_is_compiled_once_per_text() -> None:
    first = parse("*.tmp\nout/\n", "pkg")
    assert parse("*.tmp\nout/\n", "pkg") is first
    assert parse("*.tmp\nout/\n", "other") is not first
    assert parse("*.tmp\n", "pkg") is not first


def test_the_kept_parses_are_bounded() -> None:
    for i in range(2000):
        parse(f"pattern_{i}_{'x' * 3000}\n", "")
    assert ignore._parsed_chars <= ignore._PARSED_CHARS

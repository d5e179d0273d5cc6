"""Code the language's own tools accept where the grammar cannot judge it: constructs
newer than the grammar, code split by preprocessor conditionals, Python the interpreter
reads, and JSON with comments and trailing commas. Never refused: a warning that says
why, while a real error beside it still counts."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from steadyhand.state.hashing import text_hash
from steadyhand.syntax import gaps
from steadyhand.syntax.engine import Checker, Text
from steadyhand.syntax.issues import Issue
from steadyhand.syntax.jsonc import is_jsonc, without_trailing_commas
from steadyhand.syntax.languages import detect
from steadyhand.text.splices import Splice
from tests.unit.syntax.test_engine import SLOW_MACHINE

#: Valid code (its language's own compiler or interpreter takes it) that the grammar
#: here does not parse, and a word of the reason each is given.
NEWER = [
    ("python", "def f[T = int](x: T) -> T:\n    return x\n", "Python 3.13"),
    ("python", "class Box[T = str]:\n    pass\n", "Python 3.13"),
    ("python", "type Pair[K, V = int] = dict[K, V]\n", "Python 3.13"),
    (
        "cpp",
        "int f(int x) {\n    if consteval {\n        return 1;\n    }\n    return x;\n}\n",
        "C++23",
    ),
    ("cpp", "constexpr int g() {\n    if !consteval { return 2; }\n    return 3;\n}\n", "C++23"),
    ("cpp", "export module geometry;\n", "C++20"),
    ("cpp", "struct S {\n    void f(this S& self);\n};\n", "C++23"),
    ("cpp", "auto twice = [] static (int a) { return 2 * a; };\n", "C++23"),
    ("cpp", "void f() {\nagain:\n}\n", "C++23"),
    ("c", "int f(void) {\n    auto x = 1;\n    return x;\n}\n", "C23"),
    ("c", "_BitInt(8) small;\n", "C23"),
    ("c", 'const unsigned char icon[] = {\n#embed "icon.png"\n};\n', "C23"),
    ("javascript", "class A {\n  accessor x = 1;\n}\n", "accessor"),
    ("typescript", "interface Box<in out T> {\n  x: T;\n}\n", "TypeScript 4.7"),
    ("typescript", "export type * from './types';\n", "TypeScript 5.0"),
    ("rust", 'unsafe extern "C" {\n    safe fn abs(x: i32) -> i32;\n}\n', "Rust 1.82"),
    ("java", "import module java.base;\n\nclass A {}\n", "Java 25"),
    (
        "java",
        "class A extends B {\n    A(int x) {\n        if (x < 0) throw new E();\n"
        "        super(x);\n    }\n}\n",
        "Java 25",
    ),
    ("csharp", "class C<T> where T : allows ref struct {}\n", "C# 13"),
    ("css", "@media (width >= 600px) {\n  a { color: red; }\n}\n", "Media Queries 4"),
    ("toml", "point = { x = 1,\n  y = 2 }\n", "TOML 1.1"),
    ("toml", 'esc = "\\e[0m"\n', "TOML 1.1"),
    ("toml", "alarm = 07:32\n", "TOML 1.1"),
]


@pytest.mark.parametrize(("lang", "text", "word"), NEWER)
def test_code_newer_than_the_grammar_is_a_warning_naming_it(
    lang: str, text: str, word: str
) -> None:
    out = Checker(deadline=SLOW_MACHINE).check(lang, None, text)
    assert out.errors, "the grammar does not know it: else this case proves nothing"
    for e in out.errors:
        assert word in e.doubt and e.doubt.startswith("the grammar here does not know"), e


def test_a_real_error_beside_newer_code_still_counts() -> None:
    text = "def f[T = int](x: T) -> T:\n    return x\n\n\ny = (1,\n"
    out = Checker(deadline=SLOW_MACHINE).check("python", None, text)
    assert [e.line for e in out.errors if not e.doubt] == [5]
    assert [e.line for e in out.errors if e.doubt] == [1]


HEADER = """#ifndef LIB_H
#define LIB_H

#ifdef __cplusplus
extern "C" {
#endif

int lib_init(void);
void lib_close(int handle);

#ifdef __cplusplus
}
#endif

#endif
"""

SPLIT = [
    HEADER,
    "int main(void) {\n#ifdef FAST\n  if (fast()) {\n#else\n  if (slow()) {\n#endif\n"
    "    run();\n  }\n  return 0;\n}\n",
    "#ifdef WIDE\nint f(int a, int b) {\n#else\nint f(int a) {\n#endif\n  return a;\n}\n",
    "int table[] = {\n#if HAVE_ONE\n  1,\n#endif\n  2 };\n",
    "#if 0\nthis is not C at all (\n#endif\nint x;\n",
]


@pytest.mark.parametrize("lang", ["c", "cpp"])
@pytest.mark.parametrize("text", SPLIT)
def test_code_split_by_preprocessor_conditionals_is_a_warning(lang: str, text: str) -> None:
    out = Checker(deadline=SLOW_MACHINE).check(lang, None, text)
    assert out.errors, "the grammar reads it: else this case proves nothing"
    for e in out.errors:
        assert e.doubt == gaps.PREPROCESSOR_REASON, e


@pytest.mark.parametrize("lang", ["c", "cpp"])
def test_a_real_error_inside_a_conditional_still_counts(lang: str) -> None:
    for text in (
        HEADER.replace("int lib_init(void);", "int lib_init(void;"),
        "#ifdef WIDE\nint f(int a, int b) {\n#else\nint f(int a) {\n#endif\n  return g(;\n}\n",
        "#ifdef X\nint a = 1;\n#else\nint b = (2;\n#endif\n",
    ):
        out = Checker(deadline=SLOW_MACHINE).check(lang, None, text)
        assert [e for e in out.errors if not e.doubt], (text, out.errors)


def test_configurations_take_each_branch_and_keep_lines_in_place() -> None:
    text = b"a\n#if X\nb\n#elif Y\nc\n#else\nd\n#endif\n#if 0\ne\n#endif\nf\n"
    configs = gaps.configurations(text)
    assert [t.split() for t, _ in configs] == [
        [b"a", b"b", b"f"],
        [b"a", b"c", b"f"],
        [b"a", b"d", b"f"],
    ]
    for t, kept in configs:
        assert len(t) == len(text) and t.count(b"\n") == text.count(b"\n")
        assert len(kept) == text.count(b"\n") + 1
    assert gaps.configurations(b"#if X\na\n") == []  # an #endif missing
    assert gaps.configurations(b"a\n#endif\n") == []
    # a directive going on over the next line is a directive's line too
    assert gaps.configurations(b"#if A && \\\n    B\nx\n#endif\n")[0][0].split() == [b"x"]


def test_python_the_interpreter_reads_is_no_error() -> None:
    data = b"import os\n\n\ndef f(a):\n    return a\n"
    at = data.index(b"return")
    fake = Issue(at, at + 6, 5, 5, "unexpected `return`", "    return a")
    root = _Root(data)
    assert gaps.judge("python", data, root, [fake], lambda _: []) == []
    broken = data.replace(b"return a", b"return (a")
    assert gaps.judge("python", broken, _Root(broken), [fake], lambda _: []) == [fake]
    assert gaps.python_accepts("x = 1\n") and not gaps.python_accepts("x = (\n")
    assert not gaps.python_accepts("x = 1\n" * 10_000)  # too long to hand over


class _Node:
    def __init__(self, start: int, end: int) -> None:
        self.start_byte, self.end_byte, self.child_count = start, end, 0

    def child(self, index: int) -> None:
        return None


class _Root:
    """The top of a Python text as a tree has it: one child per top-level statement
    (here: per unindented line and what is indented under it)."""

    def __init__(self, data: bytes) -> None:
        starts = [0] + [
            i + 1
            for i, c in enumerate(data)
            if c == 10 and data[i + 1 : i + 2] not in (b" ", b"\n", b"")
        ]
        ends = [s - 1 for s in starts[1:]] + [len(data)]
        self.kids = [_Node(s, e) for s, e in zip(starts, ends, strict=True)]
        self.child_count = len(self.kids)
        self.start_byte, self.end_byte = 0, len(data)

    def child(self, index: int) -> _Node:
        return self.kids[index]


# -- JSON with comments --------------------------------------------------------------

TSCONFIG = """{
  // the compiler's options, with trailing commas as tsc allows
  "compilerOptions": {
    "strict": true, /* a, b */
    "target": "es2022",
  },
  "include": ["src", "tests,]",],
}
"""


@pytest.mark.parametrize(
    "path",
    [
        "/w/tsconfig.json",
        "/w/tsconfig.build.json",
        "/w/jsconfig.json",
        "/w/.vscode/settings.json",
        "/w/.vscode/launch.json",
        "/w/.devcontainer/devcontainer.json",
        "/w/devcontainer.json",
        "/w/notes.jsonc",
        "/w/app.code-workspace",
    ],
)
def test_jsonc_files_are_known_by_their_names(path: str) -> None:
    assert is_jsonc(path) and detect(path) == "jsonc"
    assert detect(path, "", "json") == "jsonc"  # whatever the editor calls it
    assert detect(path, "", "jsonc") == "jsonc"


def test_other_json_files_stay_json() -> None:
    for path in ("/w/package.json", "/w/tsconfig.json.bak", "/w/vscode/settings.json"):
        assert detect(path) in ("json", None) and not is_jsonc(path)


def test_trailing_commas_of_jsonc_are_no_errors_and_real_ones_still_are() -> None:
    checker = Checker(deadline=SLOW_MACHINE)
    assert checker.check("jsonc", None, without_trailing_commas(TSCONFIG)).errors == ()
    broken = without_trailing_commas(TSCONFIG.replace('"strict": true', '"strict": '))
    assert [e.line for e in checker.check("jsonc", None, broken).errors] == [4]
    assert checker.check("jsonc", None, without_trailing_commas("[,]")).errors


@given(st.text(alphabet='{}[],:"/*\\\n ab1', max_size=200))
def test_blanking_trailing_commas_keeps_every_offset(text: str) -> None:
    out = without_trailing_commas(text)
    assert len(out) == len(text)
    assert all(a == b or (a == "," and b == " ") for a, b in zip(text, out, strict=True))
    assert without_trailing_commas(out) == out


@pytest.mark.parametrize(("lang", "text", "word"), NEWER)
def test_newer_code_put_into_a_valid_file_is_a_warning_too(lang: str, text: str, word: str) -> None:
    """The same, as a change to a text whose tree is kept (checked on the text around
    the change, then placed in the whole text)."""
    checker = Checker(deadline=SLOW_MACHINE)
    old = "\n"
    key = text_hash(old)
    checker.prime(lang, key, old)
    checker.drain()
    out = checker.check(lang, Text(key, old), text + old, [Splice(0, 0, text)])
    assert out.errors
    for e in out.errors:
        assert word in e.doubt, e

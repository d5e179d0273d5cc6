"""Texts nested far deeper than Python's call stack: no walk over a tree recurses on the
depth of its text, so every check answers (never a RecursionError), in every language."""

from __future__ import annotations

import random
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from steadyhand.state.hashing import text_hash
from steadyhand.syntax.elide import removals
from steadyhand.syntax.engine import Checker, Text
from steadyhand.text.splices import Splice
from tests.unit.syntax.test_elide import Fake
from tests.unit.syntax.test_engine import SLOW_MACHINE, oracle

#: Deeper than the interpreter's recursion limit (each level nests one or two nodes,
#: and nodes under 512 bytes are not looked into), yet quick to parse.
DEPTH = sys.getrecursionlimit() + 700


def nested(lang: str, depth: int) -> str:
    """A valid text of ``lang`` with a value nested ``depth`` deep, between lines to
    edit."""
    shapes = {
        "json": ('{"pad": [1, 2, 3],\n "x": ', '{"a": ', "1", "}", ',\n "b": 2}\n'),
        "python": ("import os\nx = ", "[", "1", "]", "\nb = 2\n"),
        "javascript": ("const x = ", "[", "1", "]", ";\nconst b = 2;\n"),
        "typescript": ("const x: unknown = ", "[", "1", "]", ";\nconst b = 2;\n"),
        "c": ("int main(void) ", "{", "", "}", "\nint b = 2;\n"),
        "cpp": ("int main() ", "{", "", "}", "\nint b = 2;\n"),
        "go": ("package main\n\nvar x = ", "(", "1", ")", "\nvar b = 2\n"),
        "rust": ("fn main() { let _x = ", "(", "1", ")", "; }\nconst B: i32 = 2;\n"),
        "ruby": ("x = ", "[", "1", "]", "\nb = 2\n"),
        "yaml": ("x: ", "[", "1", "]", "\nb: 2\n"),
        "toml": ("x = ", "[", "1", "]", "\nb = 2\n"),
        "html": ("<html><body>", "<div>", "x", "</div>", "<p>b 2</p></body></html>\n"),
    }
    head, opener, core, closer, tail = shapes[lang]
    return head + opener * depth + core + closer * depth + tail


def closing(lang: str, text: str) -> int:
    """Where the closing brackets of the nested value start."""
    closer = {"json": "}", "c": "}", "cpp": "}", "go": ")", "rust": ")", "html": "</div>"}
    mark = closer.get(lang, "]") * 2
    return text.index(mark)


#: What breaks the nested value, put among its closing brackets.
BREAKS = {"yaml": "{", "html": "<p <"}

LANGS = ["json", "python", "javascript", "typescript", "c", "cpp", "go", "rust", "ruby"]
LANGS += ["yaml", "toml", "html"]


def deep_chain(depth: int, width: int = 80) -> Fake:
    """``[[[ ... ]]]`` as a fake tree: each list holds its bracket, the next list, then
    eight items each after a comma, and its closing bracket (every list is large enough
    to be looked into)."""
    lists = [
        Fake("list", True, level, 0, [Fake("[", False, level, level + 1)]) for level in range(depth)
    ]
    pos = depth
    for level in reversed(range(depth)):
        node = lists[level]
        if level + 1 < depth:
            node.kids.append(lists[level + 1])
        for _ in range(8):
            node.kids.append(Fake(",", False, pos, pos + 1))
            node.kids.append(Fake("item", True, pos + 1, pos + 1 + width))
            pos += 1 + width
        node.kids.append(Fake("]", False, pos, pos + 1))
        pos += 1
        node.end_byte = pos
    return lists[0]


def test_leaving_text_out_walks_a_tree_deeper_than_the_call_stack() -> None:
    depth = sys.getrecursionlimit() * 3
    root = deep_chain(depth)
    innermost = root
    while len(innermost.kids) > 1 and innermost.kids[1].type == "list":
        innermost = innermost.kids[1]
    at = innermost.kids[3].start_byte  # an item of the innermost list
    cut = removals(root, [(at, at + 1)])
    assert cut and cut == sorted(cut)
    assert all(not (a < at + 1 and at < b) for a, b in cut)  # never the edit


@pytest.mark.parametrize("lang", LANGS)
def test_a_deeply_nested_file_is_checked_in_every_language(lang: str) -> None:
    text = nested(lang, DEPTH)
    checker = Checker(deadline=SLOW_MACHINE)
    key = text_hash(text)
    checker.prime(lang, key, text)
    checker.drain()
    assert checker.cached(lang, key)
    at = text.rindex("2")
    mid = closing(lang, text)
    bad = BREAKS.get(lang, "(")
    for sp in (Splice(at, at + 1, "3"), Splice(at, at + 1, "(3"), Splice(mid, mid, bad)):
        new = text[: sp.start] + sp.text + text[sp.end :]
        out = checker.check(lang, Text(key, text), new, [sp])  # from the tree kept
        assert not out.skipped
        assert bool(out.errors) == bool(oracle(lang, text, new, sp)), (lang, sp, out.errors)
        cold = Checker(deadline=SLOW_MACHINE).check(lang, Text(key, text), new, [sp])
        assert [e.text for e in cold.errors] == [e.text for e in out.errors]
    # a text with an error already, deep inside: a change elsewhere is judged too
    broken = text[:mid] + bad + text[mid:]
    bkey = text_hash(broken)
    checker.prime(lang, bkey, broken)
    checker.drain()
    at = broken.rindex("2")
    out = checker.check(
        lang, Text(bkey, broken), broken[:at] + "3" + broken[at + 1 :], [Splice(at, at + 1, "3")]
    )
    assert out.errors == () and not out.skipped
    assert Checker(deadline=SLOW_MACHINE).check(lang, None, broken).errors


@settings(max_examples=12, deadline=None)
@given(st.sampled_from(LANGS), st.integers(DEPTH - 200, DEPTH), st.randoms(use_true_random=False))
def test_random_edits_of_deeply_nested_text_always_answer(
    lang: str, depth: int, rnd: random.Random
) -> None:
    text = nested(lang, depth)
    checker = Checker(deadline=SLOW_MACHINE)
    key = text_hash(text)
    checker.prime(lang, key, text)
    checker.drain()
    for _ in range(3):
        pos = rnd.randrange(len(text) + 1)
        sp = Splice(pos, min(len(text), pos + rnd.randint(0, 2)), rnd.choice(["", "(", "]", "x"]))
        new = text[: sp.start] + sp.text + text[sp.end :]
        out = checker.check(lang, Text(key, text), new, [sp])
        assert not out.skipped
        assert bool(out.errors) == bool(oracle(lang, text, new, sp)), (lang, sp, out.errors)

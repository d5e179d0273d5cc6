"""The check of a change against the whole-text answer, in every language: what the
quick check (the text around the change) says is what parsing both whole texts says."""

from __future__ import annotations

import functools
import re
import sys
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tree_sitter import Parser

from steadyhand.state.hashing import text_hash
from steadyhand.syntax import engine, grammars
from steadyhand.syntax.engine import Checker, Text
from steadyhand.syntax.issues import Edit, Issue, introduced
from steadyhand.syntax.offsets import encode
from steadyhand.syntax.tree import issues
from steadyhand.text.splices import Splice
from tests.unit.syntax.samples import SAMPLES

#: Checks here are about what is found, not how fast: a deadline no busy machine misses.
SLOW_MACHINE = 10.0

TOKENS = [*list("(){}[];:,.'\"<>=+-#/\\ \n\t"), "end", "fi", "def ", "  ", "x", "é"]


def oracle(lang: str, old: str, new: str, sp: Splice) -> list[Issue]:
    """The errors of the whole new text that the whole old text did not have."""
    parser = Parser(grammars.language(lang))
    ob, nb = encode(old), encode(new)
    old_found, _ = issues(parser.parse(ob).root_node, ob)
    new_found, _ = issues(parser.parse(nb).root_node, nb)
    edit = Edit(len(encode(old[: sp.start])), len(encode(old[: sp.end])), len(encode(sp.text)))
    return introduced(old_found, new_found, [edit])


@functools.cache
def primed(lang: str, units: int) -> tuple[Checker, Text]:
    text = SAMPLES[lang].text(units)
    checker = Checker(deadline=SLOW_MACHINE)
    key = text_hash(text)
    checker.prime(lang, key, text)
    checker.drain()
    return checker, Text(key, text)


def splice_of(text: str, data: st.DataObject) -> Splice:
    pos = data.draw(st.integers(0, len(text)))
    kind = data.draw(st.sampled_from(["replace", "delete", "dup_line", "drop_line"]))
    ls = text.rfind("\n", 0, pos) + 1
    le = text.find("\n", pos) + 1 or len(text)
    if kind == "replace":
        end = min(len(text), pos + data.draw(st.integers(0, 3)))
        return Splice(pos, end, data.draw(st.sampled_from(TOKENS)))
    if kind == "delete":
        return Splice(pos, min(len(text), pos + 1), "")
    if kind == "dup_line":
        return Splice(ls, ls, text[ls:le])
    return Splice(ls, le, "")


@pytest.mark.parametrize("lang", sorted(SAMPLES))
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_a_change_to_valid_text_is_judged_as_the_whole_text_would(
    lang: str, data: st.DataObject
) -> None:
    checker, before = primed(lang, 40)
    sp = splice_of(before.view, data)
    new = before.view[: sp.start] + sp.text + before.view[sp.end :]
    out = checker.check(lang, before, new, [sp])  # not committed: the base stays
    assert not out.skipped
    want = oracle(lang, before.view, new, sp)
    assert bool(out.errors) == bool(want), (sp, out.errors, want)
    lines = new.count("\n") + 1
    for e in out.errors:  # each where the new text has that line and column
        assert 1 <= e.line <= lines
        assert e.excerpt.strip("…")[:20] in new.split("\n")[e.line - 1]


@pytest.mark.parametrize("lang", sorted(SAMPLES))
def test_each_languages_break_is_reported_on_its_line(lang: str) -> None:
    sample = SAMPLES[lang]
    checker, before = primed(lang, 40)
    old, broken = sample.breaks
    at = before.view.index(old, len(before.view) // 2)
    sp = Splice(at, at + len(old), broken)
    new = before.view[:at] + broken + before.view[at + len(old) :]
    out = checker.check(lang, before, new, [sp])
    want = oracle(lang, before.view, new, sp)
    assert out.errors and want
    # the same errors, each near the break (in the construct it broke; the whole-text
    # parse may name a later line where it gave up)
    assert [i.text for i in out.errors] == [i.text for i in want]
    line = new.count("\n", 0, at) + 1
    unit = sample.unit.count("\n")
    for i in out.errors:
        named = [int(n) for n in re.findall(r"on line (\d+)", i.text)]
        assert any(abs(n - line) <= unit for n in [i.line, *named]), (line, i)
    for e in out.errors:
        d = e.as_dict()
        assert set(d) == {"line", "column", "message", "excerpt"}
        assert isinstance(d["excerpt"], str) and d["line"] >= 1 and d["column"] >= 1
    # and the fix (back to the old text) introduces nothing
    back = checker.check(lang, Text(text_hash(new), new), before.view, None)
    assert back.errors == () and not back.skipped


@settings(max_examples=30, deadline=None)
@given(data=st.data())
def test_a_chain_of_changes_keeps_judging_right(data: st.DataObject) -> None:
    """Each change leaves its tree for the next (edited, not reparsed): after many, a
    break is still found where the whole text says, and a pre-existing one is not."""
    lang = data.draw(st.sampled_from(["python", "javascript", "json", "go", "yaml"]))
    text = SAMPLES[lang].text(30)
    checker = Checker(deadline=SLOW_MACHINE)
    key = text_hash(text)
    checker.prime(lang, key, text)
    checker.drain()
    for _ in range(data.draw(st.integers(1, 12))):
        sp = splice_of(text, data)
        new = text[: sp.start] + sp.text + text[sp.end :]
        out = checker.check(lang, Text(key, text), new, [sp])
        want = oracle(lang, text, new, sp)
        assert not out.skipped
        assert bool(out.errors) == bool(want), (lang, sp, out.errors, want)
        key = text_hash(new)
        out.commit(key)
        text = new


def test_an_error_the_file_had_is_not_blamed_and_a_fix_reports_nothing() -> None:
    sample = SAMPLES["python"]
    text = sample.text(30)
    old, broken = sample.breaks
    at = text.index(old)
    text = text[:at] + broken + text[at + len(old) :]  # broken near the top
    checker = Checker(deadline=SLOW_MACHINE)
    key = text_hash(text)
    checker.prime("python", key, text)
    checker.drain()
    # an edit far below
    far = text.rindex("items = [a, b,")
    sp = Splice(far, far, "z = 1\n    ")
    new = text[:far] + sp.text + text[far:]
    out = checker.check("python", Text(key, text), new, [sp])
    assert out.errors == () and not out.skipped
    # the fix
    fix = Splice(at, at + len(broken), old)
    fixed = text[:at] + old + text[at + len(broken) :]
    out = checker.check("python", Text(key, text), fixed, [fix])
    assert out.errors == ()


def test_columns_count_characters_and_lines_after_wide_ones() -> None:
    text = "s = 'ééé'\n" * 200 + "def f(a):\n    return 'π' + a\n" + "t = '中'\n" * 200
    checker = Checker(deadline=SLOW_MACHINE)
    key = text_hash(text)
    checker.prime("python", key, text)
    checker.drain()
    at = text.index("return 'π' + a") + len("return 'π' + ")
    sp = Splice(at, at, "(")
    new = text[:at] + "(" + text[at:]
    out = checker.check("python", Text(key, text), new, [sp])
    assert [(e.line, e.column, e.text) for e in out.errors] == [(202, 18, "unclosed `(`")]
    assert out.errors[0].excerpt == "    return 'π' + (a"


def test_a_new_file_is_judged_whole() -> None:
    checker = Checker(deadline=SLOW_MACHINE)
    out = checker.check("json", None, '{"a": 1,\n "b": }\n')
    assert [(e.line, e.column, e.text) for e in out.errors] == [(2, 6, "missing number")]
    assert checker.check("json", None, '{"a": 1}\n').errors == ()


def test_a_check_that_cannot_finish_in_time_is_skipped_then_finished_later() -> None:
    text = SAMPLES["python"].text(3000)  # some 30,000 lines
    checker = Checker(deadline=0.005)
    before = Text(text_hash(text), text)
    new = text + "x = (\n"
    out = checker.check("python", before, new, [Splice(len(text), len(text), "x = (\n")])
    assert out.skipped == "it could not finish within 5 ms" and out.errors == ()
    out.commit(text_hash(new))
    checker.drain()  # the parse goes on in the background
    assert checker.cached("python", text_hash(new))
    checker.deadline = 5.0
    again = new + "y = 1\n"
    out = checker.check(
        "python", Text(text_hash(new), new), again, [Splice(len(new), len(new), "y = 1\n")]
    )
    assert not out.skipped and out.errors == ()  # the broken line was there already


def test_texts_over_the_limit_are_not_checked(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(engine, "MAX_BYTES", 100)
    out = Checker().check("python", None, "x = 1\n" * 50)
    assert out.skipped == "the file is too large to check"


def test_a_language_without_its_grammar_passes_unchecked(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(grammars, "_loaded", {"python": None})
    assert Checker().check("python", None, "def (:\n") == engine.Outcome()


def test_parsing_through_a_reader_keeps_nothing_alive() -> None:
    """The binding keeps a reference to each piece a read callback hands it (tree-sitter
    0.26); the reader gives them back, so a text parsed with a deadline can be freed
    and changed in place afterwards."""
    language = grammars.language("python")
    assert language is not None
    data = bytearray(SAMPLES["python"].text(50).encode())
    before = sys.getrefcount(data)
    parser = Parser(language)
    for _ in range(20):
        tree = engine._parse(parser, data, time.perf_counter() + 5)
        assert tree is not None and not tree.root_node.has_error
        del tree
    # stopped at the deadline, then finished from where it stopped
    tree, reader = engine._stopped(parser, data, time.perf_counter() - 1)
    assert tree is None
    tree = engine._parse(parser, data, time.perf_counter() + 5, reader=reader)
    assert tree is not None and not tree.root_node.has_error
    del tree, reader
    assert sys.getrefcount(data) == before
    data[0:0] = b"# grown in place\n"  # no buffer of it is held any more


def test_a_break_and_its_fix_are_both_judged_on_the_text_around_them(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    text = SAMPLES["python"].text(300)
    checker = Checker(deadline=SLOW_MACHINE)
    key = text_hash(text)
    checker.prime("python", key, text)
    checker.drain()
    whole: list[object] = []
    real = Checker._exact
    monkeypatch.setattr(Checker, "_exact", lambda self, *a: whole.append(a) or real(self, *a))
    at = text.index("return a + (b or 0)", len(text) // 2) + len("return a + (b or 0")
    broken = text[:at] + text[at + 1 :]  # the `)` goes
    out = checker.check("python", Text(key, text), broken, [Splice(at, at + 1, "")])
    assert [e.text for e in out.errors] == ["unclosed `(`"]
    out.commit(text_hash(broken))
    fixed = checker.check("python", Text(text_hash(broken), broken), text, [Splice(at, at, ")")])
    assert fixed.errors == () and not fixed.skipped
    assert whole == []  # neither needed the whole text


def test_a_decorator_left_before_a_statement_that_is_not_a_definition_is_found() -> None:
    """The sibling after the change is part of the text the change is checked on: a
    method replaced by a lone decorator, followed by a class attribute, is an error even
    though the class goes on with methods it could decorate."""
    body = [
        "    x = 1\n"
        if i == 6
        else f"    def m{i}(self, a, b):\n        total = a + b\n        return total * {i}\n"
        for i in range(30)
    ]
    text = "class Big:\n" + "\n".join(body) + "\n\nprint(Big)\n"
    checker = Checker(deadline=SLOW_MACHINE)
    key = text_hash(text)
    checker.prime("python", key, text)
    checker.drain()
    method = "def m5(self, a, b):\n        total = a + b\n        return total * 5"
    at = text.index(method)
    sp = Splice(at, at + len(method), "@staticmethod")
    new = text[:at] + sp.text + text[sp.end :]
    out = checker.check("python", Text(key, text), new, [sp])
    want = oracle("python", text, new, sp)
    assert want and [e.text for e in out.errors] == [e.text for e in want]


def test_an_unclosed_bracket_a_change_left_is_remembered_where_it_opens() -> None:
    """A `}` deleted leaves its `{` open; a later edit far after it parses cleanly on the
    text around it, yet the bracket is still open: a third edit must not be blamed for
    the error the first one left."""
    text = SAMPLES["go"].text(30)
    checker = Checker(deadline=SLOW_MACHINE)
    key = text_hash(text)
    checker.prime("go", key, text)
    checker.drain()
    at_brace = text.index("return a + b\n\t}") + len("return a + b\n\t")
    at_name = text.index("func f1") + len("func f")
    at_line = text.index("\n\nimport")
    found = []
    for at in (at_brace, at_name - 1, at_line):  # (the first edit moved the name back)
        sp = Splice(at, at + 1, "")
        new = text[:at] + text[at + 1 :]
        out = checker.check("go", Text(key, text), new, [sp])
        assert bool(out.errors) == bool(oracle("go", text, new, sp))
        found.append(bool(out.errors))
        key = text_hash(new)
        out.commit(key)
        text = new
    assert found == [True, False, False]


def test_a_yaml_item_joined_to_the_one_before_does_not_break_the_next_check() -> None:
    """Dropping an item's first line joins the rest of it to the item before (the tree
    kept is only told about the change, not reparsed): a line added further down is
    judged as the whole text would judge it, with no error."""
    text = SAMPLES["yaml"].text(30)
    checker = Checker(deadline=SLOW_MACHINE)
    key = text_hash(text)
    checker.prime("yaml", key, text)
    checker.drain()
    line = "  - id: 1\n"
    at = text.index(line)
    copy = text.index("  - id: 3\n")
    for sp in (
        Splice(at, at + len(line), ""),
        Splice(copy - len(line), copy - len(line), "  - id: 3\n"),
    ):
        new = text[: sp.start] + sp.text + text[sp.end :]
        out = checker.check("yaml", Text(key, text), new, [sp])
        assert out.errors == () and not oracle("yaml", text, new, sp)
        key = text_hash(new)
        out.commit(key)
        text = new


@pytest.mark.parametrize("units", [8, 40])
def test_a_last_entry_dropped_leaves_its_comma_trailing_and_that_is_found(units: int) -> None:
    """The text left out around a change keeps its shape only if the sibling that decides
    it is still there after the change: dropping the last entry of a JSON object leaves
    the comma before it trailing, which the text around the change must still show."""
    text = SAMPLES["json"].text(units)
    checker, before = Checker(deadline=SLOW_MACHINE), Text(text_hash(text), text)
    checker.prime("json", before.key, text)
    checker.drain()
    line = '  "end": 0\n'
    at = text.index(line)
    sp = Splice(at, at + len(line), "")
    new = text[:at] + text[at + len(line) :]
    out = checker.check("json", before, new, [sp])
    assert [(e.line, e.text) for e in out.errors] == [(units + 2, "unexpected `,`")]
    assert [e.text for e in out.errors] == [e.text for e in oracle("json", text, new, sp)]


#: A statement after a block made into a clause of the block before it (valid: the
#: clause goes on that statement), in a body of many statements: (language, the text
#: around, the statement, what it becomes).
CLAUSES = [
    (
        "python",
        "    if verbose:\n        level = 1\n{s}",
        "    level = 2\n",
        "    else:\n        level = 2\n",
    ),
    (
        "python",
        "    try:\n        level = 1\n{s}",
        "    level = 2\n",
        "    finally:\n        level = 2\n",
    ),
    (
        "python",
        "    if verbose:\n        level = 1\n{s}",
        "    level = 2\n",
        "    elif quiet:\n        level = 2\n",
    ),
    ("javascript", "  if (verbose) level = 1;\n{s}", "  level = 2;\n", "  else level = 2;\n"),
    ("c", "  if (verbose) level = 1;\n{s}", "  level = 2;\n", "  else level = 2;\n"),
    ("ruby", "  if verbose\n    level = 1\n{s}  end\n", "  level = 2\n", "  else\n    level = 2\n"),
    ("bash", "  if true; then\n    level=1\n{s}  fi\n", "  level=2\n", "  else\n    level=2\n"),
]

BODIES = {
    "python": (
        "def f(a, verbose, quiet):\n",
        "    x{i} = a + {i} * 2 + 3 * 4 + 5 * 6\n",
        "    return a\n",
    ),
    "javascript": (
        "function f(a, verbose) {{\n  let level;\n",
        "  const x{i} = a + {i} * 2 + 3 * 4;\n",
        "}}\n",
    ),
    "c": (
        "int f(int a, int verbose) {{\n  int level;\n",
        "  int x{i} = a + {i} * 2 + 3 * 4;\n",
        "  return a;\n}}\n",
    ),
    "ruby": ("def f(a, verbose)\n", "  x{i} = a + {i} * 2 + 3 * 4\n", "end\n"),
    "bash": ("f() {{\n", '  x{i}="$(( {i} * 2 + 3 * 4 ))"\n', "}}\n"),
}


@pytest.mark.parametrize(("lang", "around", "old", "new"), CLAUSES)
def test_a_statement_made_a_clause_of_the_one_before_is_no_error(
    lang: str, around: str, old: str, new: str
) -> None:
    head, unit, tail = BODIES[lang]
    many = "".join(unit.format(i=i) for i in range(30))
    text = head.format() + many + around.format(s=old) + many + tail.format()
    checker = Checker(deadline=SLOW_MACHINE)
    key = text_hash(text)
    checker.prime(lang, key, text)
    checker.drain()
    at = text.index(old, len(head.format()) + len(many))
    sp = Splice(at, at + len(old), new)
    after = text[:at] + new + text[at + len(old) :]
    assert not oracle(lang, text, after, sp)  # the whole text parses
    out = checker.check(lang, Text(key, text), after, [sp])
    assert out.errors == (), out.errors

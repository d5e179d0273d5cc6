"""What a check costs: how many parses it runs and of what, and the work it leaves until
after the answer (the tree of the new text)."""

from __future__ import annotations

import asyncio

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tree_sitter import Parser

from steadyhand.state.hashing import text_hash
from steadyhand.syntax import engine, grammars
from steadyhand.syntax.engine import Checker, Entry, Later, Text
from steadyhand.syntax.offsets import encode
from steadyhand.syntax.tree import point_at, points_at
from steadyhand.text.diff import line_splices
from steadyhand.text.splices import Splice
from tests.unit.syntax.samples import SAMPLES

SLOW_MACHINE = 10.0


def primed(text: str, lang: str = "python") -> tuple[Checker, Text]:
    checker = Checker(deadline=SLOW_MACHINE)
    key = text_hash(text)
    checker.prime(lang, key, text)
    checker.drain()
    return checker, Text(key, text)


def replaced(text: str, old: str, new: str, start: int = 0) -> tuple[str, Splice]:
    at = text.index(old, start)
    return text[:at] + new + text[at + len(old) :], Splice(at, at + len(old), new)


def rewrite(text: str, every: int = 10) -> str:
    """``text`` with every ``every``-th line changed in place (a whole-file write)."""
    lines = text.splitlines(keepends=True)
    for i in range(0, len(lines), every):
        if lines[i].strip():
            lines[i] = lines[i].rstrip("\n") + "  # changed\n"
    return "".join(lines)


def test_a_one_line_edit_parses_once_and_only_the_text_around_it() -> None:
    """However many edits came before it (each leaves its tree, told about the edit)."""
    text = SAMPLES["python"].text(400)
    checker, before = primed(text)
    for i in range(6):
        old, new = ("print(x, os.sep)", "print(x, os.sep, end='')")
        start = len(before.view) * (i + 1) // 8
        after, sp = replaced(before.view, old, new, start)
        bytes_before = checker.tally.parsed_bytes
        out = checker.check("python", before, after, [sp])
        assert out.errors == () and not out.skipped
        assert out.parses == 1
        # a few units around the edit, not the file (some 400 units)
        assert checker.tally.parsed_bytes - bytes_before < 5 * len(SAMPLES["python"].unit)
        key = text_hash(after)
        out.commit(key)
        before = Text(key, after)


def test_a_write_parses_once_and_less_than_the_whole_text() -> None:
    """A write changing every tenth line: checked as the lines it changes, one parse of
    the text around them (a whole parse would be of all of it)."""
    text = "".join(f"value_{i} = compute({i}, 'item {i}', scale=0.5)  # {i}\n" for i in range(1000))
    checker, before = primed(text)
    for _ in range(3):
        after = rewrite(before.view)
        bytes_before = checker.tally.parsed_bytes
        out = checker.check("python", before, after, line_splices(before.view, after))
        assert out.errors == () and not out.skipped
        assert out.parses == 1
        assert checker.tally.parsed_bytes - bytes_before < len(encode(after)) // 2
        key = text_hash(after)
        out.commit(key)
        before = Text(key, after)


@pytest.mark.parametrize("lang", ["python", "javascript", "json", "go", "yaml"])
def test_a_whole_text_change_and_a_new_file_parse_once(lang: str) -> None:
    sample = SAMPLES[lang]
    text = sample.text(30)
    checker, before = primed(text, lang)
    old, _ = sample.breaks
    after, _ = replaced(text, old, old + " ")
    out = checker.check(lang, before, after, None)  # (compared as texts)
    assert out.errors == () and out.parses == 1
    out = Checker(deadline=SLOW_MACHINE).check(lang, None, after)
    assert out.errors == () and out.parses == 1


def test_an_edit_is_checked_around_what_it_changes_not_all_it_names() -> None:
    """An edit whose text spans two units but changes one character of the first: the
    text around that character is parsed, not the text around both units."""
    sample = SAMPLES["python"]
    text = sample.text(60)
    checker, before = primed(text)
    start = text.index("def f30(")
    end = text.index("def f31(") + len("def f31(")
    span = text[start:end]
    after, sp = replaced(text, span, span.replace("print(x, os.sep)", "print(x, os.sep, 1)"))
    wide, _ = primed(text)
    out = checker.check("python", before, after, [sp])
    assert out.errors == () and out.parses == 1
    parsed = checker.tally.parsed_bytes
    # the same change said as the one character it puts in: the same text is parsed
    at = text.index("print(x, os.sep)", start) + len("print(x, os.sep")
    wide.check("python", before, after, [Splice(at, at, ", 1")])
    assert parsed == wide.tally.parsed_bytes
    # the unit changed and one on each side of it, not the four the edit's text named
    three = len(encode("".join(sample.unit.format(i=i) for i in (29, 30, 31))))
    assert three <= parsed < three + len(encode(sample.unit.format(i=32)))


def test_the_tree_a_change_leaves_is_made_after_the_answer() -> None:
    """Telling the old tree about the change is no part of the check: it is done on the
    loop's next turns, after the answer went out."""
    text = SAMPLES["python"].text(100)
    checker, before = primed(text)
    after, sp = replaced(text, "print(x, os.sep)", "print(x)")
    key = text_hash(after)

    async def change() -> None:
        out = checker.check("python", before, after, [sp])
        out.commit(key)
        assert isinstance(checker._entries[("python", key)], Later)
        for _ in range(3):
            await asyncio.sleep(0)
        made = checker._entries[("python", key)]
        assert isinstance(made, Entry) and made.data == encode(after)

    asyncio.run(change())


def test_a_check_before_the_tree_is_made_makes_it_first() -> None:
    """No loop runs (or the next change came first): the next check makes the tree."""
    text = SAMPLES["python"].text(100)
    checker, before = primed(text)
    after, sp = replaced(text, "print(x, os.sep)", "print(x)")
    key = text_hash(after)
    checker.check("python", before, after, [sp]).commit(key)
    assert isinstance(checker._entries[("python", key)], Later)
    undo = Splice(sp.start, sp.start + len(sp.text), "print(x, os.sep)")
    back = checker.check("python", Text(key, after), text, [undo])
    assert back.errors == () and back.parses == 1
    assert isinstance(checker._entries[("python", key)], Entry)


def test_a_tree_that_cannot_be_made_is_dropped_and_the_next_check_parses(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    text = SAMPLES["python"].text(40)
    checker, before = primed(text)
    after, sp = replaced(text, "print(x, os.sep)", "print(x)")
    key = text_hash(after)

    def fails(*_args: object) -> Entry:
        raise RuntimeError("no memory")

    monkeypatch.setattr(engine, "_edited", fails)
    checker.check("python", before, after, [sp]).commit(key)
    broken, _ = replaced(after, "return a + (b or 0)", "return a + (b or 0")
    out = checker.check("python", Text(key, after), broken, None)
    assert [e.line for e in out.errors] and out.parses >= 1
    assert not checker.cached("python", key) or isinstance(checker._entries[("python", key)], Entry)


lines = st.lists(
    st.sampled_from(["x = 1", "def f():", "    return 'é'", "", "# 中", "y = [1,", "  2]"]),
    min_size=1,
    max_size=80,
)


@settings(max_examples=60, deadline=None)
@given(lines, st.data())
def test_points_of_many_offsets_are_those_found_one_by_one(
    body: list[str], data: st.DataObject
) -> None:
    text = encode("\n".join(body) + "\n")
    language = grammars.language("python")
    assert language is not None
    root = Parser(language).parse(text).root_node
    offsets = sorted(data.draw(st.lists(st.integers(0, len(text)), max_size=12)))
    got = points_at(root, text, offsets)
    for pos, point in zip(offsets, got, strict=True):
        row = text.count(b"\n", 0, pos)
        assert point == point_at(root, text, pos) == (row, pos - (text.rfind(b"\n", 0, pos) + 1))

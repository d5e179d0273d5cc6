"""Which errors of a text that had errors already a change is blamed for: never one it
did not add (an edit next to the old error, a comment), while a break of its own, away
from the old error, still is. Errors the check cannot pin on the change come back with
the reason (``doubt``): reported, never refused."""

from __future__ import annotations

import random

import pytest
from tree_sitter import Node, Parser

from steadyhand.state.hashing import text_hash
from steadyhand.syntax import grammars
from steadyhand.syntax.engine import Checker, Outcome, Text
from steadyhand.syntax.offsets import encode
from steadyhand.syntax.tree import issues
from steadyhand.text.splices import Splice
from tests.unit.syntax.samples import SAMPLES
from tests.unit.syntax.test_engine import SLOW_MACHINE

#: How each language writes a comment on a line of its own ("": it has none).
COMMENTS = {
    "python": "# note",
    "ruby": "# note",
    "bash": "# note",
    "yaml": "# note",
    "toml": "# note",
    "css": "/* note */",
    "html": "<!-- note -->",
    "json": "",
}


def comment(lang: str) -> str:
    return COMMENTS.get(lang, "// note")


def blamed(out: Outcome) -> list[tuple[int, str]]:
    """The errors a change is refused for: those the check pins on it."""
    return [(e.line, e.text) for e in out.errors if not getattr(e, "doubt", "")]


def check(lang: str, old: str, new: str, splices: list[Splice] | None, *, primed: bool) -> Outcome:
    checker = Checker(deadline=SLOW_MACHINE)
    key = text_hash(old)
    if primed:  # the tree of the old text is kept (a read came first)
        checker.prime(lang, key, old)
        checker.drain()
    return checker.check(lang, Text(key, old), new, splices)


def apply(text: str, sp: Splice) -> str:
    return text[: sp.start] + sp.text + text[sp.end :]


@pytest.mark.parametrize("primed", [True, False])
def test_an_edit_under_a_line_missing_its_colon_is_not_blamed_for_it(primed: bool) -> None:
    text = SAMPLES["python"].text(1).replace("if a > 0:", "if a > 0", 1)
    old = "        return a + (b or 0)"
    at = text.index(old)
    for new_line in ("        import logging", "        pass", "        value = compute(a, b)"):
        sp = Splice(at, at + len(old), new_line)
        out = check("python", text, apply(text, sp), [sp], primed=primed)
        assert blamed(out) == [], (new_line, out.errors)
        assert out.errors == ()  # the same region that does not parse, quoting other text


@pytest.mark.parametrize("primed", [True, False])
def test_a_comment_written_under_an_unfinished_condition_is_not_blamed(primed: bool) -> None:
    text = SAMPLES["javascript"].text(1).replace("if (a > 0) {", "if (a", 1)
    lines = text.split("\n")
    for at in range(len(lines) + 1):
        for indent in ("", "  "):
            new = "\n".join([*lines[:at], indent + "// note", *lines[at:]])
            out = check("javascript", text, new, None, primed=primed)  # a whole-file write
            assert out.errors == (), (at, indent, out.errors)


def test_a_break_away_from_an_error_the_file_had_is_still_the_changes() -> None:
    for lang in ("python", "javascript", "go", "c", "java", "json", "rust", "yaml"):
        sample = SAMPLES[lang]
        old, broken = sample.breaks
        text = sample.text(30)
        first = text.index(old)
        text = text[:first] + broken + text[first + len(old) :]  # broken near the top
        far = text.rindex(old)
        sp = Splice(far, far + len(old), broken)
        for primed in (True, False):
            out = check(lang, text, apply(text, sp), [sp], primed=primed)
            line = text.count("\n", 0, far) + 1
            assert blamed(out), (lang, primed, out.errors)
            assert any(abs(e.line - line) <= sample.unit.count("\n") for e in out.errors)


# -- a seeded fuzz: edits that add no error, near and far from an error the text had ----


def leaves(root: Node) -> list[Node]:
    out, stack = [], [root]
    while stack:
        node = stack.pop()
        if node.child_count == 0:
            out.append(node)
        else:
            stack.extend(node.children)
    return out


def benign_edits(lang: str, text: str, rnd: random.Random) -> list[tuple[str, Splice]]:
    """Edits that keep every token of ``text`` what it was: a name renamed, a number
    changed, a blank line or a comment line put in (each parses wherever the text
    does)."""
    data = encode(text)
    parser = Parser(grammars.language(lang))
    tokens = leaves(parser.parse(data).root_node)
    assert text.isascii()  # (byte offsets are character offsets)
    names = [n for n in tokens if n.type.endswith("identifier")]
    numbers = [n for n in tokens if data[n.start_byte : n.end_byte].isdigit()]
    out: list[tuple[str, Splice]] = []
    for node in rnd.sample(names, min(3, len(names))):
        out.append(("rename", Splice(node.end_byte, node.end_byte, "_z")))
    for node in rnd.sample(numbers, min(2, len(numbers))):
        out.append(("number", Splice(node.start_byte, node.end_byte, "7")))
    starts = [0, *(i + 1 for i, c in enumerate(text) if c == "\n")]
    for at in rnd.sample(starts, 3):
        out.append(("comment", Splice(at, at, "\n")))
        if comment(lang):
            end = text.find("\n", at)
            line = text[at : end if end >= 0 else len(text)]
            indent = line[: len(line) - len(line.lstrip())]
            out.append(("comment", Splice(at, at, indent + comment(lang) + "\n")))
    return out


def test_edits_that_add_no_error_are_never_blamed_near_an_old_one() -> None:
    """Over every language: a break the text had (each sample's own, in a random unit),
    then an edit that adds no error, anywhere but on the break's lines: never blamed;
    a comment or a blank line put in is not even reported."""
    rnd = random.Random(20240613)
    parsers = {lang: Parser(grammars.language(lang)) for lang in SAMPLES}
    tried = 0
    for lang, sample in sorted(SAMPLES.items()):
        base = sample.text(6)
        old, broken = sample.breaks
        spots = [i for i in range(len(base)) if base.startswith(old, i)]
        for _ in range(4):
            at = rnd.choice(spots)
            text = base[:at] + broken + base[at + len(old) :]
            lo = text.rfind("\n", 0, at) + 1
            for kind, sp in benign_edits(lang, base, rnd):
                if sp.end >= lo - 1 and sp.start <= at + len(old) + 1:
                    continue  # on the break's lines: not "elsewhere"
                fresh = apply(base, sp)  # the same edit on the valid text parses
                assert not parsers[lang].parse(encode(fresh)).root_node.has_error, (lang, sp)
                shift = len(broken) - len(old) if sp.start > at else 0
                moved = Splice(sp.start + shift, sp.end + shift, sp.text)
                new = apply(text, moved)
                splices = [moved] if rnd.random() < 0.7 else None
                out = check(lang, text, new, splices, primed=rnd.random() < 0.5)
                assert blamed(out) == [], (lang, kind, moved, out.errors)
                if kind == "comment":
                    assert out.errors == (), (lang, moved, out.errors)
                tried += 1
    assert tried > 300


def test_an_edit_that_leaves_the_rest_parsing_as_before_is_never_blamed() -> None:
    """Over every language, random edits (tokens put in, characters taken out, lines
    doubled and dropped) of a text that had a break: whenever the new text has no error
    on the lines the edit wrote, and elsewhere the same errors as before (same message,
    same line once moved, same column), the change is never blamed for one."""
    rnd = random.Random(7)
    tokens = [*"(){}[];:,.'\"<>=+-#/\\ \n\t", "end", "fi", "def ", "  ", "x"]
    held = 0
    for lang, sample in sorted(SAMPLES.items()):
        parser = Parser(grammars.language(lang))
        base = sample.text(6)
        old, broken = sample.breaks
        at = base.index(old, len(base) // 3)
        text = base[:at] + broken + base[at + len(old) :]
        before = errors_by_line(parser, text)
        for _ in range(40):
            pos = rnd.randrange(len(text) + 1)
            ls = text.rfind("\n", 0, pos) + 1
            le = text.find("\n", pos) + 1 or len(text)
            sp = rnd.choice(
                [
                    Splice(pos, min(len(text), pos + rnd.randint(0, 3)), rnd.choice(tokens)),
                    Splice(pos, min(len(text), pos + 1), ""),
                    Splice(ls, ls, text[ls:le]),
                    Splice(ls, le, ""),
                ]
            )
            new = apply(text, sp)
            first = text.count("\n", 0, sp.start)
            old_last = first + text.count("\n", sp.start, sp.end)
            new_last = first + sp.text.count("\n")
            shift = new_last - old_last
            after = errors_by_line(parser, new)
            if any(first <= line <= new_last for line, _, _ in after):
                continue  # an error on the lines the edit wrote
            kept = {(ln if ln < first else ln + shift, c, m) for ln, c, m in before}
            kept = {e for e in kept if not first <= e[0] <= new_last}
            if set(after) != kept:
                continue  # elsewhere the text parses otherwise than before
            out = check(lang, text, new, [sp], primed=rnd.random() < 0.5)
            assert blamed(out) == [], (lang, sp, out.errors)
            held += 1
    assert held > 200


def errors_by_line(parser: Parser, text: str) -> list[tuple[int, int, str]]:
    """The errors of the whole ``text``: (0-based line, column, message)."""
    data = encode(text)
    found, _ = issues(parser.parse(data).root_node, data)
    return [(i.line - 1, i.column, i.message) for i in found]

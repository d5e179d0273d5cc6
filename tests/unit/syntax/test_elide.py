"""What can be left out around a change: ranges that never touch an edit and keep the
text's shape (what is left of a valid text still parses)."""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tree_sitter import Parser

from steadyhand.syntax import elide, grammars
from steadyhand.syntax.elide import first_child_ending_after, removals
from steadyhand.syntax.engine import Shortened
from steadyhand.syntax.offsets import encode
from tests.unit.syntax.samples import SAMPLES


@dataclass
class Fake:
    """A node: its kind, whether named, its byte range and children."""

    type: str
    is_named: bool
    start_byte: int
    end_byte: int
    kids: list[Fake] = field(default_factory=list)

    @property
    def child_count(self) -> int:
        return len(self.kids)

    def child(self, index: int) -> Fake | None:
        return self.kids[index]


def json_like(n: int, width: int = 100) -> Fake:
    """``{ pair , pair , ... }`` with ``n`` pairs of ``width`` bytes."""
    kids = [Fake("{", False, 0, 1)]
    pos = 1
    for i in range(n):
        kids.append(Fake("pair", True, pos, pos + width))
        pos += width
        if i < n - 1:
            kids.append(Fake(",", False, pos, pos + 1))
            pos += 1
    kids.append(Fake("}", False, pos, pos + 1))
    return Fake("object", True, 0, pos + 1, kids)


def shape(node: Fake, cut: list[tuple[int, int]]) -> list[str]:
    """The kinds of the children left after ``cut``."""
    return [
        k.type for k in node.kids if not any(a <= k.start_byte and k.end_byte <= b for a, b in cut)
    ]


def test_runs_of_pairs_go_with_their_commas() -> None:
    obj = json_like(40)
    middle = obj.kids[41]  # pair 20
    cut = removals(obj, [(middle.start_byte + 5, middle.start_byte + 6)])
    kinds = shape(obj, cut)
    assert kinds[0] == "{" and kinds[-1] == "}"
    # what is left still alternates pair , pair ... and keeps the edited pair
    inner = kinds[1:-1]
    assert inner[0] == "pair" and inner[-1] == "pair"
    assert all(k == ("pair" if i % 2 == 0 else ",") for i, k in enumerate(inner))
    assert len(inner) < 20
    assert not any(a < middle.end_byte and middle.start_byte < b for a, b in cut)


def test_first_child_ending_after_is_a_binary_search() -> None:
    obj = json_like(10, width=10)
    for pos in range(obj.end_byte + 2):
        i = first_child_ending_after(obj, pos)
        want = next((k for k, c in enumerate(obj.kids) if c.end_byte > pos), len(obj.kids))
        assert i == want


def test_small_nodes_and_short_lists_are_kept_whole() -> None:
    assert removals(json_like(3), [(5, 6)]) == []
    assert removals(json_like(40, width=2), [(5, 6)]) == []  # under SMALL bytes


SIZES = {"json": 60, "yaml": 60, "toml": 60, "css": 60, "html": 40}


@pytest.mark.parametrize("lang", sorted(SAMPLES))
@settings(max_examples=25, deadline=None)
@given(data=st.data())
def test_what_is_left_of_a_valid_text_parses(lang: str, data: st.DataObject) -> None:
    sample = SAMPLES[lang]
    text = encode(sample.text(SIZES.get(lang, 30)))
    parser = Parser(grammars.language(lang))
    root = parser.parse(text).root_node
    assert not root.has_error
    n = data.draw(st.integers(1, 3))
    points = sorted(data.draw(st.lists(st.integers(0, len(text)), min_size=n, max_size=n)))
    spans: list[tuple[int, int]] = []
    for p in points:
        if spans and p <= spans[-1][1]:
            continue
        spans.append((p, min(len(text), p + data.draw(st.integers(0, 40)))))
    cut = removals(root, spans)
    assert cut == sorted(cut)
    for (a, b), (c, _) in itertools.pairwise(cut):
        assert a < b <= c
    for a, b in cut:
        for s, e in spans:
            assert not (a < e and s < b) and not (a < s < b), (a, b, s, e)
    short = Shortened(bytearray(text), cut, [], [])
    assert not parser.parse(short.old).root_node.has_error, lang
    if len(text) > 8 * elide.SMALL:
        assert len(short.old) < len(text)  # something was left out


@pytest.mark.parametrize("where", ["in a statement", "between two statements", "at the top"])
def test_a_one_line_change_keeps_a_few_hundred_bytes_of_a_long_file(where: str) -> None:
    text = encode(SAMPLES["python"].text(400))  # some 4,000 lines
    parser = Parser(grammars.language("python"))
    root = parser.parse(text).root_node
    if where == "in a statement":
        at = text.index(b"return a + (b or 0)", len(text) // 2)
    elif where == "between two statements":
        at = text.index(b"\n\n\ndef ", len(text) // 2) + 2  # on an empty line
    else:
        at = 0
    cut = removals(root, [(at, at + 1)])
    short = Shortened(bytearray(text), cut, [], [])
    assert len(short.old) < 1000, (where, len(short.old))
    assert not parser.parse(short.old).root_node.has_error


@pytest.mark.parametrize("lang", ["python", "javascript", "json", "yaml", "go"])
@settings(max_examples=20, deadline=None)
@given(data=st.data())
def test_children_read_once_into_lists_leave_out_the_same(lang: str, data: st.DataObject) -> None:
    """A node with many children touched by many edits (a write's) has its children
    read into lists: what is left out is what looking at them one by one leaves out."""
    text = encode(SAMPLES[lang].text(80))
    root = Parser(grammars.language(lang)).parse(text).root_node
    points = sorted(set(data.draw(st.lists(st.integers(0, len(text)), min_size=8, max_size=40))))
    spans: list[tuple[int, int]] = []
    for p in points:
        if spans and p <= spans[-1][1]:
            continue
        spans.append((p, min(len(text), p + data.draw(st.integers(0, 30)))))
    with pytest.MonkeyPatch.context() as m:
        m.setattr(elide, "MANY_CHILDREN", 2)
        m.setattr(elide, "MANY_SPANS", 1)
        listed = removals(root, spans)
    with pytest.MonkeyPatch.context() as m:
        m.setattr(elide, "MANY_CHILDREN", 1 << 30)
        one_by_one = removals(root, spans)
    assert listed == one_by_one
    fake = json_like(100)
    fake_spans = [(k.start_byte + 3, k.start_byte + 4) for k in fake.kids[1:-1:9]]
    assert removals(elide.Listed(fake), fake_spans) == removals(fake, fake_spans)

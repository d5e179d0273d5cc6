"""Character offsets as byte offsets, locally; common ends of two byte strings."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from steadyhand.syntax import offsets
from steadyhand.syntax.issues import Edit
from steadyhand.syntax.offsets import (
    CharEdit,
    apply_edits,
    build_marks,
    byte_offset,
    common_prefix,
    common_suffix,
    cores,
    encode,
    shift_marks,
    whole_edit,
)

# A few characters of each UTF-8 length, and line breaks: offsets differ a lot.
chars = st.sampled_from(["a", "b", " ", "\n", "é", "ß", "→", "中", "😀", "\x00"])
texts = st.lists(chars, max_size=600).map("".join)


def reference(text: str, pos: int) -> int:
    return len(encode(text[:pos]))


@given(texts, st.data())
def test_byte_offset_agrees_with_encoding_the_prefix(text: str, data: st.DataObject) -> None:
    marks = build_marks(text)
    assert (marks is None) == text.isascii()
    for pos in data.draw(st.lists(st.integers(0, len(text)), max_size=20)):
        assert byte_offset(text, marks, pos) == reference(text, pos)


@given(texts, st.data())
def test_marks_moved_by_edits_stay_exact(text: str, data: st.DataObject) -> None:
    every = offsets.MARK_EVERY
    offsets.MARK_EVERY = 7  # marks every few characters, so edits land among them
    try:
        marks = build_marks(text)
        cuts = sorted(data.draw(st.lists(st.integers(0, len(text)), max_size=6)))
        edits: list[CharEdit] = []
        pieces: list[str] = []
        for a, b in zip(cuts[::2], cuts[1::2], strict=False):
            if edits and a <= edits[-1].end:
                continue
            new = data.draw(texts).replace("\x00", "")[:12]
            edits.append(
                CharEdit(a, b, len(new), reference(text, a), reference(text, b), len(encode(new)))
            )
            pieces.append(new)
        new_text = text
        for e, piece in reversed(list(zip(edits, pieces, strict=True))):
            new_text = new_text[: e.start] + piece + new_text[e.end :]
        shifted = shift_marks(marks, edits, len(text))
        if shifted is None:
            assert new_text.isascii()
        for pos in range(len(new_text) + 1):
            assert byte_offset(new_text, shifted, pos) == reference(new_text, pos)
    finally:
        offsets.MARK_EVERY = every


@given(texts, texts, texts)
def test_common_ends_are_the_longest_and_whole_characters(a: str, mid1: str, b: str) -> None:
    x = encode(a + mid1 + b)
    y = encode(a + b)
    p = common_prefix(x, y)
    assert x[:p] == y[:p]
    assert p >= len(encode(a)) or x[: len(encode(a))] != y[: len(encode(a))]
    x[:p].decode("utf-8", "surrogatepass")  # whole characters only
    s = common_suffix(x, y, min(len(x), len(y)) - p)
    assert x[len(x) - s :] == y[len(y) - s :] and p + s <= min(len(x), len(y))
    x[len(x) - s :].decode("utf-8", "surrogatepass")


@given(texts, texts)
def test_whole_edit_turns_one_text_into_the_other(a: str, b: str) -> None:
    old, new = encode(a), encode(b)
    edit, mid = whole_edit(old, new)
    assert apply_edits(old, [edit], [mid]) == new
    assert edit.length == len(mid)


def test_long_common_runs_are_found_in_chunks() -> None:
    base = b"x" * 300_000
    assert common_prefix(base + b"a", base + b"b") == 300_000
    assert common_suffix(b"a" + base, b"b" + base, 10**9) == 300_000


@given(texts, st.data())
def test_cores_change_the_text_as_the_edits_do_and_only_what_they_change(
    text: str, data: st.DataObject
) -> None:
    """Each edit cut to what it changes: the same new text, inside the edit, whole
    characters at every end, and nothing left that either end shares."""
    cuts = sorted(data.draw(st.lists(st.integers(0, len(text)), max_size=8)))
    splices = []
    for a, b in zip(cuts[::2], cuts[1::2], strict=False):
        old = text[a:b]
        new = data.draw(st.sampled_from([old, old[::-1], old + "é", "中" + old, "x", ""]))
        splices.append((a, b, new))
    old_data = encode(text)
    edits = [
        Edit(len(encode(text[:a])), len(encode(text[:b])), len(encode(new)))
        for a, b, new in splices
    ]
    mids = [encode(new) for _, _, new in splices]
    small, small_mids = cores(old_data, edits, mids)
    assert apply_edits(old_data, small, small_mids) == apply_edits(old_data, edits, mids)
    assert all(e.length == len(m) for e, m in zip(small, small_mids, strict=True))
    for e, m in zip(small, small_mids, strict=True):
        whole = next(w for w in edits if w.start <= e.start and e.end <= w.end)
        assert whole.start <= e.start <= e.end <= whole.end
        old_data[: e.start].decode("utf-8", "surrogatepass")  # never inside a character
        old_data[e.end :].decode("utf-8", "surrogatepass")
        was = old_data[e.start : e.end].decode("utf-8", "surrogatepass")
        now = m.decode("utf-8", "surrogatepass")
        assert was != now
        if was and now:  # nothing shared at either end
            assert was[0] != now[0] and was[-1] != now[-1]

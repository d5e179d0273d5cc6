"""The compact file-state structures agree with the plain models they replace: the packed
table with an ordered dict used as an LRU, the content store with a dict of texts."""

from __future__ import annotations

import string

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from steadyhand.state.content_store import BLOCK_BYTES, SMALL_TEXT, ContentStore
from steadyhand.state.file_state import FileRecord, Session
from steadyhand.state.hashing import text_hash
from steadyhand.state.packed_table import PackedTable, decode_key, encode_key

# A few folders and names (some colliding in the table's probe runs), odd characters too.
_paths = st.builds(
    lambda folder, name: folder + name,
    st.sampled_from(["/", "/w/", "/w/src/", "/w/é/", "rel/", ""]),
    st.text(string.ascii_lowercase + "é\udc80.", min_size=0, max_size=6),
)
_values = st.binary(max_size=40)


@given(_paths)
def test_keys_round_trip(path: str) -> None:
    assert decode_key(encode_key(path)) == path


class TableMatchesAnLruDict(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.table = PackedTable()
        self.model: dict[str, bytes] = {}  # least recently used first

    def _use(self, path: str) -> None:
        self.model[path] = self.model.pop(path)

    @rule(path=_paths, value=_values)
    def set(self, path: str, value: bytes) -> None:
        self.table.set(path, value)
        self.model.pop(path, None)
        self.model[path] = value

    @rule(path=_paths, value=_values)
    def set_quietly(self, path: str, value: bytes) -> None:
        self.table.set(path, value, touch=False, only_existing=True)
        if path in self.model:
            self.model[path] = value

    @rule(path=_paths, touch=st.booleans())
    def get(self, path: str, touch: bool) -> None:
        assert self.table.get(path, touch=touch) == self.model.get(path)
        if touch and path in self.model:
            self._use(path)

    @rule(path=_paths)
    def pop(self, path: str) -> None:
        assert self.table.pop(path) == (path in self.model)
        self.model.pop(path, None)

    @rule(limit=st.integers(0, 12))
    def evict(self, limit: int) -> None:
        self.table.evict_to(limit)
        while len(self.model) > limit:
            del self.model[next(iter(self.model))]

    @precondition(lambda self: len(self.model) > 0)
    @rule()
    def copy_and_diverge(self) -> None:
        other = self.table.copy()
        first = next(iter(self.model))
        other.pop(first)
        assert first in self.table and first not in other
        self.table = other
        del self.model[first]

    @invariant()
    def same_contents_in_the_same_order(self) -> None:
        assert len(self.table) == len(self.model)
        assert list(self.table.items()) == list(self.model.items())
        for path in self.model:
            assert path in self.table


TestTableMatchesAnLruDict = pytest.mark.slow(TableMatchesAnLruDict.TestCase)
TestTableMatchesAnLruDict.settings = settings(max_examples=150, stateful_step_count=60)


def test_a_large_table_keeps_working_through_growth_eviction_and_compaction() -> None:
    t = PackedTable()
    for i in range(20_000):
        t.set(f"/w/d{i % 37}/f{i}.py", i.to_bytes(4, "little") * (1 + i % 3))
    for i in range(0, 20_000, 3):
        t.set(f"/w/d{i % 37}/f{i}.py", b"changed length")
    t.evict_to(5_000)
    assert len(t) == 5_000
    kept = dict(t.items())
    assert all(
        int(p.rsplit("f", 1)[1][:-3]) >= 10_000 or v == b"changed length" for p, v in kept.items()
    )
    for p, v in kept.items():
        assert t.get(p, touch=False) == v
    assert t.nbytes() < 20_000 * 40  # sized for the 20,000 it once held, no more


def _rec(path: str) -> FileRecord:
    return FileRecord(path, "0" * 32, "0" * 32, "disk", 1, 2, "utf-8", "LF", 3, ((1, 3),))


def test_a_session_forgets_its_least_recently_used_record_first() -> None:
    s = Session("s", 3)
    for p in ("/a", "/b", "/c"):
        s.put(_rec(p))
    s.peek("/a")  # a peek is not a use
    s.get("/b")
    s.put(_rec("/d"))
    assert "/a" not in s and {r.path for r in s} == {"/b", "/c", "/d"}
    s.replace(_rec("/c").replace(stale=True))  # keeps its place: still the oldest
    s.put(_rec("/e"))
    assert "/c" not in s and s.paths() == ["/b", "/d", "/e"]


# -- content store -------------------------------------------------------------------------

_texts = st.one_of(
    st.text(max_size=80),
    st.text("ab\n", min_size=SMALL_TEXT - 2, max_size=SMALL_TEXT + 2),
)


@given(st.lists(_texts, max_size=30), st.integers(0, 3 * BLOCK_BYTES))
# texts of about 4 KB each are what this test is about: large inputs are expected
@settings(max_examples=60, suppress_health_check=[HealthCheck.data_too_large])
def test_the_store_gives_back_what_it_kept_or_nothing(texts: list[str], budget: int) -> None:
    store = ContentStore(budget, 1 << 20)
    kept = [(t, store.put(text_hash(t), t)) for t in texts]
    for t, where in kept:
        got = store.get(text_hash(t), where)
        assert got in (None, t)
        assert where or got is None
    assert store.size_bytes <= max(budget, 0) or store.size_bytes == 0
    # The newest text is always there when it fits the budget alone.
    if kept and len(kept[-1][0].encode("utf-8", "surrogatepass")) <= budget // 2:
        t, where = kept[-1]
        assert store.get(text_hash(t), where) == t


def test_a_locator_never_yields_another_text() -> None:
    store = ContentStore(1 << 20, 1 << 20)
    a = store.put(text_hash("alpha"), "alpha")
    store.put(text_hash("beta"), "beta")
    assert store.get(text_hash("beta"), a) is None
    assert store.get(text_hash("alpha"), a) == "alpha"


def test_small_texts_are_kept_compressed_and_survive_sealing() -> None:
    store = ContentStore(64 << 20, 1 << 20)
    texts = [
        f'"""Module {i}."""\n\nVALUE = {i}\n\n\ndef get() -> int:\n    return VALUE\n'
        for i in range(10_000)
    ]
    where = [store.put(text_hash(t), t) for t in texts]
    raw = sum(len(t) for t in texts)
    assert store.size_bytes < raw / 4
    for i in (0, 1, 4_999, 9_999):
        assert store.get(text_hash(texts[i]), where[i]) == texts[i]
    # putting the same text again reuses its place
    assert store.put(text_hash(texts[-1]), texts[-1]) == where[-1]

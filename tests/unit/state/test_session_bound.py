"""The session registry keeps at most ``max_sessions`` sessions: the least recently used
go first, never the default session nor the one just used, and a read-only session that is
dropped comes back read-only under its name."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from steadyhand.state.file_state import SessionRegistry

names = st.sampled_from(["default", "a", "b", "c", "d", "e", "f", "g"])
ops = st.lists(
    st.one_of(
        st.tuples(st.just("get"), names, names, st.booleans()),
        st.tuples(st.just("fork"), names, names, st.booleans()),
        st.tuples(st.just("close"), names, names, st.booleans()),
    ),
    max_size=60,
)


@given(st.integers(2, 5), ops)
def test_the_registry_stays_bounded_and_read_only_stays_read_only(
    most: int, steps: list[tuple[str, str, str, bool]]
) -> None:
    reg = SessionRegistry(100, most)
    read_only: set[str] = set()  # names made read-only and never closed since
    for op, name, parent, ro in steps:
        if op == "get":
            s = reg.get(name)
            assert reg.names()[0] == name
        elif op == "fork":
            if name == "default" or reg.exists(name):
                continue  # the tool refuses these (session_exists)
            ro = ro or (reg.exists(parent) and reg.get(parent).read_only)
            s = reg.fork(name, parent, read_only=ro)
            if ro:
                read_only.add(name)
        else:
            if reg.exists(name):
                reg.close(name)
                read_only.discard(name)
            continue
        assert len(reg.names()) <= most
        for ro_name in read_only:
            if reg.exists(ro_name):
                assert reg.get(ro_name).read_only
            else:
                assert reg.was_read_only(ro_name)
        assert s.read_only or s.name not in read_only


def test_the_default_session_is_never_dropped() -> None:
    reg = SessionRegistry(100, 2)
    reg.get("default")
    for i in range(50):
        reg.get(f"s{i}")
        assert reg.exists("default")
    assert reg.dropped == 49 and reg.names() == ["s49", "default"]

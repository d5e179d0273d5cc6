"""Windows security descriptors as text (SDDL): the one this package asks for lets only
the user in, and a DACL read back is private only when every entry that may grant
access names the user. Pure functions: checked on every system."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from steadyhand.system.winsec import dacl_is_private, dacl_parts, private_sddl

ME = "S-1-5-21-1004336348-1177238915-682003330-1001"
OTHERS = ["WD", "BA", "SY", "AU", "S-1-5-21-1004336348-1177238915-682003330-1002", "CO", "OW"]


def test_the_asked_descriptor_is_owned_by_and_private_to_the_user() -> None:
    for folder in (True, False):
        sddl = private_sddl(ME, folder=folder)
        assert sddl.startswith(f"O:{ME}D:P(")
        assert dacl_is_private(sddl, ME)
        assert not dacl_is_private(sddl, OTHERS[-3])
    assert "OICI" in private_sddl(ME, folder=True)  # files made in the folder inherit it
    assert "OICI" not in private_sddl(ME, folder=False)


def _ace(kind: str, trustee: str, flags: str = "", rights: str = "FA") -> str:
    return f"({kind};{flags};{rights};;;{trustee})"


entries = st.lists(
    st.tuples(
        st.sampled_from(["A", "D", "OA", "OD", "XA", "AU"]),
        st.sampled_from([ME, *OTHERS]),
        st.sampled_from(["", "OICI", "ID", "OICIIO"]),
    ),
    max_size=6,
)


@given(entries, st.sampled_from(["", "P", "AI", "PAI", "PAR"]), st.booleans())
def test_a_dacl_is_private_when_every_granting_entry_names_the_user(
    aces: list[tuple[str, str, str]], flags: str, with_sacl: bool
) -> None:
    body = "".join(_ace(kind, who, inherit) for kind, who, inherit in aces)
    sddl = f"O:{ME}G:SYD:{flags}{body}" + ("S:AI(AU;SA;FA;;;WD)" if with_sacl else "")
    granting = [who for kind, who, _ in aces if kind not in ("D", "OD", "AU")]
    assert dacl_is_private(sddl, ME) is all(who == ME for who in granting)
    parts = dacl_parts(sddl)
    assert parts is not None and parts[0] == flags and len(parts[1]) == len(aces)


def test_what_is_not_a_private_dacl() -> None:
    assert not dacl_is_private(f"O:{ME}", ME)  # no DACL
    assert not dacl_is_private("D:NO_ACCESS_CONTROL", ME)  # a null DACL: everyone
    assert not dacl_is_private(f"D:P(A;;FA;;;{ME}", ME)  # an entry left open
    assert not dacl_is_private(f"D:P(A;;FA;;;{ME})junk", ME)
    assert not dacl_is_private("D:P(A;;FA)", ME)  # too few fields
    # a conditional entry is read whole, its trustee found before its condition
    assert not dacl_is_private(f"D:P(A;;FA;;;{ME})(XA;;FA;;;WD;(@User.x == 1))", ME)
    assert dacl_is_private(f"D:P(A;;FA;;;{ME})(XA;;FA;;;{ME};(@User.x == 1))", ME)
    assert dacl_is_private("D:P", ME)  # no one at all: private (the owner may still set it)
    assert dacl_is_private(f"D:P(a;;FA;;;{ME.lower()})", ME)  # case does not matter

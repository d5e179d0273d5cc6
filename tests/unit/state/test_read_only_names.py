"""A read-only session's name stays read-only: closing the session and using (or
forking onto) its name again never gives a session that may write."""

from __future__ import annotations

from steadyhand.state.file_state import SessionRegistry


def test_a_closed_read_only_name_stays_read_only() -> None:
    reg = SessionRegistry(100)
    reg.fork("ro", "default", read_only=True)
    assert reg.is_read_only("ro") and reg.get("ro").read_only
    reg.close("ro")
    assert not reg.exists("ro") and reg.is_read_only("ro")
    assert reg.get("ro").read_only  # used again: read-only from the start
    reg.close("ro")
    assert reg.fork("ro", "default").read_only  # forked onto again, without read_only
    assert reg.fork("child", "ro").read_only  # and its forks are read-only too


def test_other_names_stay_writable() -> None:
    reg = SessionRegistry(100)
    reg.fork("w", "default")
    reg.close("w")
    assert not reg.is_read_only("w") and not reg.get("w").read_only
    assert not reg.is_read_only("default")

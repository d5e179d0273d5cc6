"""The credential scanner: what it recognises, and that only added lines count."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from steadyhand.guards.secrets import (
    HINTS,
    HINTS_ANY_CASE,
    added_lines,
    has_hint,
    looks_like_secrets_file,
    read_note,
    scan_added,
    scan_lines,
)

SAMPLES = {
    "private key": "-----BEGIN RSA " + "PRIVATE KEY-----",
    "AWS access key ID": "id = AKIA" + "IOSFODNN7EXAMPLE",
    "AWS secret access key": "aws_secret_access_key = "
    + "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    "Google API key": "key=AIza" + "SyA-abcdefghijklmnopqrstuvwxyz01234",
    "GitHub token": "ghp_" + "x1Y2" * 9,
    "GitHub fine-grained token": "github_pat_" + "A" * 22 + "_" + "b" * 59,
    "GitLab token": "glpat-" + "abcdefghij0123456789",
    "Slack token": "xoxb-" + "1234567890-abcdefghij",
    "Stripe secret key": "sk_" + "live_" + "a1b2c3d4e5f6g7h8i9j0k1l2",
    "npm token": "npm_" + "a" * 36,
    "OpenAI API key": "sk-proj-" + "a" * 20 + "T3Blbk" + "FJ" + "b" * 20,
}


@pytest.mark.parametrize("kind", sorted(SAMPLES))
def test_each_pattern_is_recognised(kind: str) -> None:
    found = scan_lines([(7, SAMPLES[kind])])
    assert [(f.kind, f.line) for f in found] == [(kind, 7)]
    assert found[0].excerpt.endswith("…")
    assert len(found[0].excerpt) <= 5


@pytest.mark.parametrize(
    "text",
    [
        "AKIA in prose is fine",
        "sk_test_" + "a1b2c3d4e5f6g7h8i9j0k1l2",  # test-mode keys are not credentials
        "ghp_short",
        "-----BEGIN PUBLIC KEY-----",
        "password = os.environ['DB_PASSWORD']",
    ],
)
def test_look_alikes_are_not_reported(text: str) -> None:
    assert scan_lines([(1, text)]) == []


lines = st.lists(st.text(alphabet="abc xyz=\t'", max_size=12), max_size=20)


@given(lines, st.randoms())
def test_reordering_or_dropping_lines_adds_nothing(old: list[str], rnd: object) -> None:
    secret = SAMPLES["GitHub token"]
    before = [*old, secret]
    after = list(before)
    rnd.shuffle(after)  # type: ignore[attr-defined]
    after = after[: len(after) // 2 + 1]
    old_text = "".join(line + "\n" for line in before)
    new_text = "".join(line + "\n" for line in after)
    assert scan_added(old_text, new_text) == []


@given(lines, st.integers(min_value=0, max_value=20))
def test_an_inserted_secret_is_reported_at_its_line(old: list[str], at: int) -> None:
    at = min(at, len(old))
    new = [*old[:at], SAMPLES["AWS access key ID"], *old[at:]]
    found = scan_added("".join(x + "\n" for x in old), "".join(x + "\n" for x in new))
    assert [(f.kind, f.line) for f in found] == [("AWS access key ID", at + 1)]


def test_a_second_copy_of_a_present_secret_counts_as_added() -> None:
    s = SAMPLES["npm token"]
    assert [n for n, _ in added_lines(f"{s}\nx\n", f"{s}\nx\n{s}\n")] == [3]
    assert [f.line for f in scan_added(f"{s}\n", f"{s}\n{s}\n")] == [2]


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        (".env", True),
        (".env.local", True),
        ("prod.env", True),
        ("id_ed25519", True),
        ("server.pem", True),
        (".env.example", False),
        (".env.sample", False),
        ("environment.py", False),
        ("README.md", False),
    ],
)
def test_secrets_file_names(name: str, expected: bool) -> None:
    assert looks_like_secrets_file(f"/ws/{name}") is expected


def test_read_note_names_lines_not_values() -> None:
    note = read_note("/ws/app.py", ["x = 1", SAMPLES["Slack token"]], 10)
    assert "line(s) 11" in note and "Slack token" in note
    assert SAMPLES["Slack token"] not in note
    assert read_note("/ws/app.py", ["x = 1"], 1) == ""


def test_every_pattern_is_reachable_through_the_hints() -> None:
    """Each pattern's regex contains one of the literal hints the pre-filter looks for."""
    from steadyhand.guards.secrets import HINTS, HINTS_ANY_CASE, PATTERNS

    for kind, rx in PATTERNS:
        plain = rx.replace("\\", "").lower()
        assert any(h.lower() in plain for h in HINTS + HINTS_ANY_CASE) or kind in (
            "AWS access key ID",
            "GitHub token",
            "GitLab token",
            "Slack token",
        ), kind


_pieces = st.sampled_from(["a", "b", "\n", SAMPLES["GitHub token"], "ghp_", "SECRET", " x"])


@given(st.lists(_pieces, max_size=12), st.lists(_pieces, max_size=12))
def test_the_quick_pre_check_never_hides_a_finding(old: list[str], new: list[str]) -> None:
    old_text, new_text = "".join(old), "".join(new)
    assert scan_added(old_text, new_text) == scan_lines(added_lines(old_text, new_text))


@pytest.mark.parametrize("hint", sorted(HINTS + HINTS_ANY_CASE))
def test_every_hint_is_seen_by_the_pre_check(hint: str) -> None:
    assert has_hint(f"x = '{hint}'\n") and not has_hint("x = 'nothing to see'\n")

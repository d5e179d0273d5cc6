"""The credential scanner: what it recognises, what it leaves alone, that only added lines
count, that a long line is scanned whole, and that a notebook is scanned as its user sees
it."""

from __future__ import annotations

import json
import random
import re._parser as sre_parse  # the width of each pattern
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from steadyhand.formats import notebook as nb_fmt
from steadyhand.guards import secrets
from steadyhand.guards.secrets import (
    HINTS,
    HINTS_ANY_CASE,
    MAX_MATCH,
    PATTERNS,
    Budget,
    added_lines,
    crc32_base62_ok,
    has_hint,
    looks_like_secrets_file,
    notebook_read_note,
    placeholder,
    read_note,
    scan_added,
    scan_change,
    scan_lines,
    scan_numbered,
)
from tests.secret_samples import BASE62, MAKERS, PLACEHOLDERS, checksummed, make

KINDS = sorted(MAKERS)


def _numbered(text: str, first: int = 1) -> list[tuple[int, str]]:
    return list(enumerate(text.split("\n"), start=first))


def _kinds(found: list[secrets.Finding]) -> list[str]:
    return [f.kind for f in found]


def test_every_format_has_a_sample() -> None:
    assert sorted(p.kind for p in PATTERNS) == KINDS


@pytest.mark.parametrize("kind", KINDS)
def test_each_pattern_is_recognised(kind: str) -> None:
    found = scan_lines(_numbered(make(kind), 7))
    assert [(f.kind, f.line) for f in found] == [(kind, 7)]
    assert found[0].excerpt.endswith("…")
    assert len(found[0].excerpt) <= 5


@pytest.mark.parametrize("kind", KINDS)
def test_real_shaped_credentials_are_all_found(kind: str) -> None:
    """Random bodies of the format's real shape: the placeholder rules never drop one."""
    rnd = random.Random(kind)
    missed = [s for s in (MAKERS[kind](rnd) for _ in range(400)) if not scan_lines(_numbered(s))]
    assert missed == []


@pytest.mark.parametrize("text", PLACEHOLDERS)
def test_placeholders_are_not_reported(text: str) -> None:
    assert scan_lines([(1, text)]) == []


@pytest.mark.parametrize(
    "text",
    [
        "AKIA in prose is fine",
        "sk_test_" + "a1b2c3d4e5f6g7h8i9j0k1l2",  # test-mode keys are not credentials
        "ghp_short",
        "-----BEGIN PUBLIC KEY-----",
        "password = os.environ['DB_PASSWORD']",
        "-----BEGIN PRIVATE KEY-----\\n...\\n-----END PRIVATE KEY-----",
        "AKIA" + "0123456789012345",  # digits 0, 1, 8, 9 are not in an access key's alphabet
    ],
)
def test_look_alikes_are_not_reported(text: str) -> None:
    assert scan_lines([(1, text)]) == []


def test_a_private_key_header_counts_only_before_a_key() -> None:
    header = "-----BEGIN PRIVATE KEY-----"
    body = make("private key").split("\n")[1]
    assert _kinds(scan_lines([(1, header), (2, body)])) == ["private key"]
    assert scan_lines([(1, header), (2, "...")]) == []
    assert scan_lines([(1, header), (2, "<your key here>")]) == []
    # the header alone (what follows is not known): reported
    assert _kinds(scan_lines([(1, header)])) == ["private key"]
    # a JSON string holding the key
    assert _kinds(scan_lines([(1, f'"key": "{header}\\n{body}\\n"')])) == ["private key"]


# -- checksums and placeholders --------------------------------------------------------


def test_the_crc32_checksum_of_a_published_example() -> None:
    # GitHub's format: 30 random base62 characters, then their CRC32 in 6 base62 digits
    assert crc32_base62_ok("zQWBuTSOoRi4A9spHcVY5ncnsDkxkJ" + "0mLq17") is True
    assert crc32_base62_ok("zQWBuTSOoRi4A9spHcVY5ncnsDkxkJ" + "0mLq18") is False
    assert crc32_base62_ok("short") is None


@given(st.integers(0, 2**32), st.integers(0, 35), st.sampled_from(BASE62))
def test_one_changed_character_breaks_the_checksum(seed: int, at: int, ch: str) -> None:
    token = checksummed("ghp_", random.Random(seed))
    body = token[4:]
    assert crc32_base62_ok(body) is True
    changed = body[:at] + ch + body[at + 1 :]
    assert crc32_base62_ok(changed) is (changed == body)
    assert bool(scan_lines([(1, "ghp_" + changed)])) is (changed == body)


@given(
    st.sampled_from(["your", "YOUR", "example", "here", "Placeholder", "dummy", "changeme"]),
    st.integers(0, 2**32),
    st.integers(0, 16),
)
def test_a_placeholder_word_makes_a_placeholder(word: str, seed: int, at: int) -> None:
    rnd = random.Random(seed)
    body = "".join(rnd.choice(BASE62) for _ in range(24))
    assert placeholder(body[:at] + word + body[at:], 62)


@pytest.mark.parametrize(
    "body",
    ["x" * 30, "ab" * 15, "0123456789abcdefghij", "zyxwvutsrq" + "Kq83hZ0pLm", "1" * 40],
)
def test_runs_and_low_entropy_make_a_placeholder(body: str) -> None:
    assert placeholder(body, 62)


def test_random_bodies_are_not_placeholders() -> None:
    rnd = random.Random(1)
    for alphabet, size in (
        (BASE62, 62),
        ("0123456789abcdef", 16),
        ("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", 32),
    ):
        for n in (16, 20, 24, 36, 40, 86, 150):
            bodies = ["".join(rnd.choice(alphabet) for _ in range(n)) for _ in range(300)]
            assert [b for b in bodies if placeholder(b, size)] == [], (size, n)


# -- long lines ----------------------------------------------------------------------


def test_every_pattern_fits_the_window_of_a_long_line() -> None:
    for p in PATTERNS:
        lo, hi = sre_parse.parse(p.regex).getwidth()
        assert 0 < lo <= hi <= MAX_MATCH, p.kind


@pytest.mark.parametrize("column", [0, 19_990, 20_001, 150_000, 999_000])
def test_a_credential_anywhere_on_a_long_line_is_found(column: int) -> None:
    token = make("AWS access key ID", 3)
    filler = '{"key":"value","n":12,"secret_name":"db"},'
    head = (filler * (column // len(filler) + 1))[:column]
    line = head + f'"id":"{token}"' + filler * 30
    found = scan_added("x = 1\n", "x = 1\n" + line + "\n")
    assert [(f.kind, f.line) for f in found] == [("AWS access key ID", 2)]


_pieces = st.sampled_from(
    [
        " ",
        "x",
        '",',
        "\n",
        "ghp_",
        "secret",
        "AKIA",
        "xoxb-1-",
        "-----BEGIN PRIVATE KEY-----",
        make("GitHub token"),
        make("AWS access key ID"),
        make("AWS secret access key"),
        make("Slack token"),
        make("private key"),
        "q" * 3000,
    ]
)


@settings(max_examples=60, deadline=None)
@given(st.lists(_pieces, max_size=40))
def test_scanning_in_windows_finds_what_scanning_whole_lines_finds(pieces: list[str]) -> None:
    text = "".join(pieces)
    lines = _numbered(text)
    windowed = scan_numbered(lines, Budget(None)).findings
    old = secrets.LONG_LINE
    secrets.LONG_LINE = 10**9
    try:
        whole = scan_numbered(lines, Budget(None)).findings
    finally:
        secrets.LONG_LINE = old
    assert windowed == whole


class _Clock:
    """A clock that moves one second each time it is read."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        self.now += 1.0
        return self.now


def test_what_the_time_bound_leaves_is_said() -> None:
    token = make("GitHub token")
    lines = [(n, f"t{n} = '{token}'") for n in range(1, 11)]
    scan = scan_numbered(lines, Budget(3.5, clock=_Clock()))
    assert scan.unscanned is not None
    first = scan.unscanned.line
    assert [f.line for f in scan.findings] == list(range(1, first))
    assert scan.unscanned.lines == 10 - first + 1
    assert "were not scanned" in scan.unscanned.sentence(5.0)
    assert scan.unscanned.fields() == {"from_line": first, "lines": 11 - first}
    whole = scan_numbered(lines, Budget(None))
    assert whole.unscanned is None and len(whole.findings) == 10


# -- escaped text and notebooks -------------------------------------------------------


def test_credentials_inside_json_strings_are_found() -> None:
    aws = make("AWS secret access key").split(" = ")[1]
    gh = make("GitHub token")
    gcp_id = make("GCP service account key").split('": "')[1].rstrip('"')
    text = "\n".join(
        [
            f'"aws_secret_access_key = \\"{aws}\\"\\n",',
            f'"first line\\n{gh}\\n"',
            f'"{{\\"private_key_id\\": \\"{gcp_id}\\"}}"',
        ]
    )
    assert _kinds(scan_lines(_numbered(text))) == [
        "AWS secret access key",
        "GitHub token",
        "GCP service account key",
    ]


def _notebook(*sources: str, ids: bool = True, outputs: list[Any] | None = None) -> str:
    cells = []
    for i, src in enumerate(sources):
        cell: dict[str, Any] = {
            "cell_type": "code",
            "execution_count": None,
            "metadata": {},
            "outputs": outputs if (outputs is not None and i == len(sources) - 1) else [],
            "source": nb_fmt.split_source(src),
        }
        if ids:
            cell["id"] = f"c{i + 1}"
        cells.append(cell)
    nb = {"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5 if ids else 4}
    return json.dumps(nb, indent=1) + "\n"


def test_a_notebook_cell_is_scanned_as_its_user_sees_it() -> None:
    aws = make("AWS secret access key").split(" = ")[1]
    gcp = make("GCP service account key")
    old = _notebook("import boto3\n", "print(1)\n")
    new = _notebook(
        "import boto3\n",
        f'print(1)\naws_secret_access_key = "{aws}"\ninfo = {{{gcp}}}\n',
    )
    scan = scan_change("/ws/a.ipynb", old, new)
    assert [f.as_dict() for f in scan.findings] == [
        {
            "kind": "AWS secret access key",
            "line": 2,
            "excerpt": "aws_…",
            "cell": "c2",
            "part": "source",
        },
        {
            "kind": "GCP service account key",
            "line": 3,
            "excerpt": "priv…",
            "cell": "c2",
            "part": "source",
        },
    ]
    assert scan.unscanned is None
    assert "in cell c2, line 2" in secrets.describe(scan.findings)


def test_a_notebook_change_reports_only_what_it_adds() -> None:
    token = make("GitHub token")
    old = _notebook(f"t = '{token}'\n", "x = 1\n")
    # the cell with the token moves after another one: nothing is added
    moved = json.loads(old)
    moved["cells"].reverse()
    assert scan_change("/ws/a.ipynb", old, json.dumps(moved, indent=1) + "\n").findings == []
    # a second copy in another cell is added
    new = _notebook(f"t = '{token}'\n", f"x = 1\nu = '{token}'\n")
    assert [(f.cell, f.line) for f in scan_change("/ws/a.ipynb", old, new).findings] == [("c2", 2)]


def test_notebook_outputs_and_metadata_are_scanned() -> None:
    token = make("Slack token")
    outputs = [{"name": "stdout", "output_type": "stream", "text": ["ok\n", f"{token}\n"]}]
    new = _notebook("print(token)\n", outputs=outputs)
    found = scan_change("/ws/n.ipynb", None, new).findings
    assert [(f.kind, f.cell, f.part, f.line) for f in found] == [
        ("Slack token", "c1", "outputs", 2)
    ]
    meta = json.loads(_notebook("x = 1\n"))
    meta["metadata"]["api"] = make("npm token")
    found = scan_change("/ws/n.ipynb", _notebook("x = 1\n"), json.dumps(meta, indent=1))
    assert [(f.kind, f.cell) for f in found.findings] == [("npm token", None)]


def test_cells_without_ids_are_compared_by_position() -> None:
    token = make("Stripe secret key")
    old = _notebook("a = 1\n", f"k = '{token}'\n", ids=False)
    new = _notebook("a = 2\n", f"k = '{token}'\n", ids=False)
    assert scan_change("/ws/a.ipynb", old, new).findings == []


def test_a_broken_notebook_is_scanned_as_text() -> None:
    token = make("GitHub token")
    found = scan_change("/ws/a.ipynb", None, '{"cells": [ "' + token + '"').findings
    assert _kinds(found) == ["GitHub token"]


def test_the_notebook_read_note_names_cells_not_values() -> None:
    token = make("GitHub token")
    nb = nb_fmt.parse(_notebook("x = 1\n", f"t = '{token}'\n"))
    note = notebook_read_note(nb.cells)
    assert "c2" in note and "GitHub token" in note and token not in note
    assert notebook_read_note(nb.cells[:1]) == ""


# -- added lines ----------------------------------------------------------------------

lines = st.lists(st.text(alphabet="abc xyz=\t'", max_size=12), max_size=20)


@given(lines, st.randoms())
def test_reordering_or_dropping_lines_adds_nothing(old: list[str], rnd: object) -> None:
    secret = make("GitHub token")
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
    new = [*old[:at], make("AWS access key ID"), *old[at:]]
    found = scan_added("".join(x + "\n" for x in old), "".join(x + "\n" for x in new))
    assert [(f.kind, f.line) for f in found] == [("AWS access key ID", at + 1)]


def test_a_second_copy_of_a_present_secret_counts_as_added() -> None:
    s = make("npm token")
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
    token = make("Slack token")
    note = read_note("/ws/app.py", ["x = 1", token], 10)
    assert "line(s) 11" in note and "Slack token" in note
    assert token not in note
    assert read_note("/ws/app.py", ["x = 1"], 1) == ""


def test_every_pattern_is_reachable_through_the_hints() -> None:
    """Every match holds one of the literal hints the pre-filter and the windows of a
    long line look for."""
    for kind in KINDS:
        for seed in range(20):
            for m in secrets._rx().finditer(make(kind, seed)):
                text = m.group(0)
                assert any(h in text for h in HINTS) or any(
                    h in text.lower() for h in HINTS_ANY_CASE
                ), kind


_pre = st.sampled_from(["a", "b", "\n", make("GitHub token"), "ghp_", "SECRET", " x"])


@given(st.lists(_pre, max_size=12), st.lists(_pre, max_size=12))
def test_the_quick_pre_check_never_hides_a_finding(old: list[str], new: list[str]) -> None:
    old_text, new_text = "".join(old), "".join(new)
    assert scan_added(old_text, new_text) == scan_lines(added_lines(old_text, new_text))


@pytest.mark.parametrize("hint", sorted(HINTS + HINTS_ANY_CASE))
def test_every_hint_is_seen_by_the_pre_check(hint: str) -> None:
    assert has_hint(f"x = '{hint}'\n") and not has_hint("x = 'nothing to see'\n")

"""Credentials in text: high-confidence patterns, scanned only where text is new.

Only formats that are unmistakable are recognised (a fixed prefix and a fixed shape, or a
PEM header), so a warning is worth reading. Findings never carry the secret itself: the
excerpt keeps its first few characters, enough to find it, not enough to use it.
"""

from __future__ import annotations

import bisect
import os
import re
from collections import Counter, OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass

from steadyhand.text.diff import known_added_text
from steadyhand.text.lines import changed_lines, split_lines
from steadyhand.text.splices import Splice

#: (kind, regex). Each regex matches the credential itself on one line.
PATTERNS: tuple[tuple[str, str], ...] = (
    ("private key", r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"),
    ("AWS access key ID", r"\b(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}\b"),
    (
        "AWS secret access key",
        r"(?i:aws_?secret_?access_?key)[\"']?\s*[:=]\s*[\"']?[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+])",
    ),
    ("Google API key", r"\bAIza[0-9A-Za-z_\-]{35}(?![0-9A-Za-z_\-])"),
    ("Google OAuth client secret", r"\bGOCSPX-[0-9A-Za-z_\-]{28}(?![0-9A-Za-z_\-])"),
    ("GCP service account key", r"\"private_key_id\"\s*:\s*\"[0-9a-f]{40}\""),
    ("GitHub token", r"\bgh[pousr]_[A-Za-z0-9]{36,255}\b"),
    ("GitHub fine-grained token", r"\bgithub_pat_[A-Za-z0-9]{22}_[A-Za-z0-9]{59}\b"),
    ("GitLab token", r"\bgl(?:pat|dt|rt|ptt|ft|agent|oas)-[A-Za-z0-9_\-]{20,}(?![A-Za-z0-9_\-])"),
    ("Slack token", r"\bxox[abposr]-[0-9A-Za-z\-]{10,}"),
    (
        "Slack webhook URL",
        r"https://hooks\.slack\.com/services/T[A-Z0-9]{6,}/B[A-Z0-9]{6,}/[A-Za-z0-9]{20,}",
    ),
    ("Stripe secret key", r"\b(?:sk|rk)_live_[0-9A-Za-z]{20,}\b"),
    (
        "OpenAI API key",
        r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{16,}T3BlbkFJ[A-Za-z0-9_\-]{16,}",
    ),
    ("Anthropic API key", r"\bsk-ant-(?:api|admin)\d\d-[A-Za-z0-9_\-]{80,}"),
    ("npm token", r"\bnpm_[A-Za-z0-9]{36}\b"),
    ("PyPI token", r"\bpypi-AgEIcHlwaS5vcmc[A-Za-z0-9_\-]{50,}"),
    ("SendGrid API key", r"\bSG\.[A-Za-z0-9_\-]{22}\.[A-Za-z0-9_\-]{43}\b"),
    ("Azure storage account key", r"AccountKey=[A-Za-z0-9+/]{86}=="),
)

_RX = re.compile("|".join(f"(?P<p{i}>{rx})" for i, (_, rx) in enumerate(PATTERNS)))

#: Literal pieces at least one of which every pattern's match contains. One pass of
#: ``str.find`` per piece over the whole text decides which lines deserve the full
#: patterns, so ordinary text costs a few C-level scans, not a regex run per line.
HINTS: tuple[str, ...] = (
    "PRIVATE KEY",
    "AKIA",
    "ASIA",
    "ABIA",
    "ACCA",
    "AIza",
    "GOCSPX-",
    "private_key_id",
    "ghp_",
    "gho_",
    "ghu_",
    "ghs_",
    "ghr_",
    "github_pat_",
    "glpat-",
    "gldt-",
    "glrt-",
    "glptt-",
    "glft-",
    "glagent-",
    "gloas-",
    "xox",
    "hooks.slack.com",
    "_live_",
    "T3BlbkFJ",
    "sk-ant-",
    "npm_",
    "pypi-AgEIcHlwaS5vcmc",
    "SG.",
    "AccountKey=",
)
#: Pieces compared without case (the AWS secret key's label is case-insensitive).
HINTS_ANY_CASE: tuple[str, ...] = ("secret",)


_ANY_CASE_RX = re.compile("|".join(re.escape(h) for h in HINTS_ANY_CASE), re.IGNORECASE)


def _hinted_lines(text: str) -> set[int]:
    """Indexes of the lines of ``text`` (joined by LF) holding at least one hint."""
    hits: list[int] = []
    for hint in HINTS:
        i = text.find(hint)
        while i >= 0:
            hits.append(i)
            i = text.find(hint, i + 1)
    hits.extend(m.start() for m in _ANY_CASE_RX.finditer(text))
    return _lines_of(text, hits) if hits else set()


def _lines_of(text: str, positions: list[int]) -> set[int]:
    starts = [0]
    i = text.find("\n")
    while i >= 0:
        starts.append(i + 1)
        i = text.find("\n", i + 1)
    return {bisect.bisect_right(starts, p) - 1 for p in positions}


#: Lines longer than this are scanned only in their first part (minified files).
MAX_LINE_CHARS = 20_000


@dataclass(frozen=True, slots=True)
class Finding:
    """One credential-looking match: what it looks like and where (1-based line)."""

    kind: str
    line: int
    excerpt: str

    def as_dict(self) -> dict[str, object]:
        return {"kind": self.kind, "line": self.line, "excerpt": self.excerpt}


def _redact(text: str) -> str:
    keep = 4 if len(text) > 12 else 2
    return text[:keep] + "…"


def scan_lines(lines: list[tuple[int, str]]) -> list[Finding]:
    """Findings in numbered lines (``(line_number, text)``), in order."""
    out: list[Finding] = []
    if not lines:
        return out
    hinted = _hinted_lines("\n".join(text for _, text in lines))
    for index in sorted(hinted):
        number, text = lines[index]
        if len(text) > MAX_LINE_CHARS:
            text = text[:MAX_LINE_CHARS]
        for m in _RX.finditer(text):
            index = int((m.lastgroup or "p0")[1:])
            out.append(Finding(PATTERNS[index][0], number, _redact(m.group(0))))
    return out


def added_lines(old_view: str | None, new_view: str) -> list[tuple[int, str]]:
    """The lines of ``new_view`` that ``old_view`` did not already hold, numbered.

    A line counts as already there if the old text has as many copies of it as the new
    text has up to that point, so moving or keeping a line never counts as adding it.
    """
    if not old_view:
        return list(enumerate(split_lines(new_view), start=1))
    # Lines in the common head and tail are kept as they were: count only the middle.
    pre, old_mid, new_mid = changed_lines(old_view, new_view)
    have = Counter(old_mid)
    more = Counter(new_mid)
    # Only lines the new text holds more copies of can be added ones (found in C).
    grown = {line for line, n in more.items() - have.items() if n > have.get(line, 0)}
    out: list[tuple[int, str]] = []
    for number, line in enumerate(new_mid, start=pre + 1):
        if line not in grown:
            continue
        if have[line] > 0:
            have[line] -= 1
        else:
            out.append((number, line))
    return out


#: The characters of the hints, rarest in source code first (counted over the Python
#: standard library and some TypeScript and JavaScript). Finding one character is a
#: ``memchr``, some 50 times faster than finding a string of several; where a hint's
#: rarest character is missing, the hint cannot be there and is not searched for.
_RARITY = "JYKXVHBzOF5PC3RISAEGTkxwv-yb=gh.mufp_cdloinarste "


def _rarest(hint: str) -> str:
    return min(hint, key=lambda c: _RARITY.find(c) % (len(_RARITY) + 1))


def _anchored_hints() -> tuple[
    tuple[tuple[str, str], ...], tuple[tuple[str, str, tuple[str, ...]], ...]
]:
    """The hints, each with its rarest character: those searched for alone, and groups
    sharing a two-character start (``gh``, ``gl``), searched for only when the start is
    there."""
    by_start: dict[str, list[str]] = {}
    for hint in HINTS:
        by_start.setdefault(hint[:2], []).append(hint)
    alone = tuple((_rarest(h), h) for g in by_start.values() if len(g) < 3 for h in g)
    grouped = tuple(
        (_rarest(start), start, tuple(g)) for start, g in by_start.items() if len(g) >= 3
    )
    return alone, grouped


_ALONE, _GROUPED = _anchored_hints()


def has_hint(text: str) -> bool:
    """Whether ``text`` holds any piece a credential pattern needs (a quick pre-check)."""
    if any(c in text and hint in text for c, hint in _ALONE):
        return True
    for c, start, group in _GROUPED:
        if c in text and start in text and any(hint in text for hint in group):
            return True
    folded = text.lower()
    return any(hint in folded for hint in HINTS_ANY_CASE)


def spliced_lines(new_view: str, splices: Sequence[Splice]) -> str:
    """The lines of ``new_view`` that text put in by ``splices`` (view splices on the
    old text, in order) touches, with one more line each side; joined by LF."""
    parts: list[str] = []
    delta = 0
    for sp in splices:
        start = sp.start + delta
        end = start + len(sp.text)
        delta += len(sp.text) - (sp.end - sp.start)
        lo = new_view.rfind("\n", 0, max(0, new_view.rfind("\n", 0, start))) + 1
        hi = new_view.find("\n", end)
        hi = new_view.find("\n", hi + 1) if hi >= 0 else -1
        parts.append(new_view[lo : len(new_view) if hi < 0 else hi])
    return "\n".join(parts)


def scan_added(
    old_view: str | None, new_view: str, splices: Sequence[Splice] | None = None
) -> list[Finding]:
    """Credentials in the lines the change adds (lines already present are not reported).

    ``splices``: the view splices that turned ``old_view`` into ``new_view``, if known;
    they narrow the quick pre-check to the lines they touch.
    """
    if old_view and not splices:
        # a whole new text: look for hints in the added lines only (those of the diff the
        # tool just made, when there is one: they include every line counted as added)
        plus = known_added_text(old_view, new_view)
        if plus is not None and not has_hint(plus):
            return []
        lines = added_lines(old_view, new_view)
        if not has_hint("\n".join(text for _, text in lines)):
            return []
        return scan_lines(lines)
    region = spliced_lines(new_view, splices) if old_view and splices else new_view
    if not has_hint(region):
        return []  # no credential can match: the lines need not be split and counted
    return scan_lines(added_lines(old_view, new_view))


def describe(findings: list[Finding], most: int = 4) -> str:
    """``AWS access key ID on line 3, GitHub token on line 9`` (the first few)."""
    parts = [f"{f.kind} on line {f.line} ({f.excerpt})" for f in findings[:most]]
    more = len(findings) - most
    if more > 0:
        parts.append(f"{more} more")
    return ", ".join(parts)


_ENV_EXAMPLES = (".example", ".sample", ".template", ".dist", ".defaults", ".tmpl")
_SECRET_NAMES = frozenset(
    {
        ".envrc",
        ".netrc",
        "_netrc",
        ".pgpass",
        ".pypirc",
        ".git-credentials",
        ".dockercfg",
        "credentials",
        "credentials.json",
        "secrets.json",
        "secrets.yaml",
        "secrets.yml",
        "secrets.toml",
        "id_rsa",
        "id_dsa",
        "id_ecdsa",
        "id_ed25519",
    }
)
_SECRET_SUFFIXES = (".pem", ".key", ".p12", ".pfx", ".keystore", ".jks")


def looks_like_secrets_file(path: str) -> bool:
    """Whether the file's name says it holds secrets (``.env``, ``.env.local``, ``*.pem``…)."""
    name = os.path.basename(path).lower()
    if name.endswith(_ENV_EXAMPLES):
        return False
    if name == ".env" or name.startswith(".env.") or name.endswith(".env"):
        return True
    return name in _SECRET_NAMES or name.endswith(_SECRET_SUFFIXES)


#: Findings per content (view hash): reads of unchanged content, by any session and for
#: any window, need not scan it again.
_FOUND_BY_CONTENT: OrderedDict[str, list[Finding]] = OrderedDict()
_FOUND_CACHE_SIZE = 256


def findings_for(content_key: str, lines: list[str]) -> list[Finding]:
    """Findings in all ``lines`` of a content, remembered by ``content_key``."""
    found = _FOUND_BY_CONTENT.get(content_key)
    if found is None:
        found = scan_lines(list(enumerate(lines, start=1)))
        _FOUND_BY_CONTENT[content_key] = found
        while len(_FOUND_BY_CONTENT) > _FOUND_CACHE_SIZE:
            _FOUND_BY_CONTENT.popitem(last=False)
    else:
        _FOUND_BY_CONTENT.move_to_end(content_key)
    return found


def read_note(
    path: str,
    lines: list[str],
    first_line: int,
    *,
    content_key: str | None = None,
    all_lines: list[str] | None = None,
) -> str:
    """A note for a read result when the file or the shown lines look like they hold secrets.

    With ``content_key`` and ``all_lines`` (the whole content), the scan is done once per
    content and the window's findings are picked from it.
    """
    if content_key is not None and all_lines is not None:
        last = first_line + len(lines) - 1
        found = [f for f in findings_for(content_key, all_lines) if first_line <= f.line <= last]
    else:
        found = scan_lines(list(enumerate(lines, start=first_line)))
    by_name = looks_like_secrets_file(path)
    if not found and not by_name:
        return ""
    what = "This file looks like it holds secrets"
    if found:
        where = sorted({f.line for f in found})
        shown = ", ".join(str(n) for n in where[:6]) + (", …" if len(where) > 6 else "")
        kinds = ", ".join(sorted({f.kind for f in found}))
        what += f" (line(s) {shown} look like credentials: {kinds})"
    return (
        f"({what}. Do not copy its values into other files, commands or replies; refer to "
        "them by name.)"
    )

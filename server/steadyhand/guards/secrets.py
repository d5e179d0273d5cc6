"""Credentials in text: high-confidence formats, scanned only where text is new.

A match is reported only when it has its format's real shape: the prefix, the length
and the alphabet the issuer uses, the checksum where the format carries one (GitHub's
and npm's tokens end in a CRC32 of the rest, in base62), and a body that is not a
placeholder (a word such as ``your``, ``example`` or ``here``, a run such as ``xxxxx``
or ``12345``, too few distinct characters for a random string). So a warning is worth
reading, and ``block`` does not refuse a README's ``ghp_xxxx…``.

What is scanned is what the user sees: every line a change adds, however long (a
minified file's one line is looked at around each place a credential could start, so
its length costs little), and in a notebook the cells' decoded sources and outputs, not
the JSON that escapes them. The scan has a time bound; what it could not look at in
time is said in the result (:class:`Unscanned`), never silently skipped.

Findings never carry the secret itself: the excerpt keeps its first few characters,
enough to find it, not enough to use it.
"""

from __future__ import annotations

import bisect
import functools
import itertools
import math
import os
import re
import zlib
from collections import Counter, OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from steadyhand.formats import notebook as nb_fmt
from steadyhand.text.budget import Budget
from steadyhand.text.diff import known_added_text
from steadyhand.text.lines import changed_lines, split_lines, to_view
from steadyhand.text.splices import Splice

#: A token starts where a word does not go on: after a character that is not a letter,
#: a digit or ``_``, or after an escaped line break or tab (``\n`` inside a JSON string
#: or a string literal, where the letter before the token is part of the escape).
_B = r"(?:(?<![A-Za-z0-9_])|(?<=\\[nrt]))"
#: A quote as code writes it, or escaped inside a JSON string (``\"``).
_Q = r"(?:\\?[\"'])"

_BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"


def crc32_base62_ok(body: str) -> bool | None:
    """Whether ``body`` ends in the CRC32 of the characters before it, written as 6
    base62 digits (GitHub's and npm's tokens: 30 random characters, then the checksum).
    None when ``body`` is not of that length: the format has no checksum to check."""
    if len(body) != 36:
        return None
    value = 0
    for ch in body[30:]:
        digit = _BASE62.find(ch)
        if digit < 0:
            return False
        value = value * 62 + digit
    return zlib.crc32(body[:30].encode("ascii", "replace")) == value


@dataclass(frozen=True, slots=True)
class Pattern:
    """One credential format."""

    kind: str
    #: Matches the credential on one line; ``(?P<body>…)`` is its random part, the
    #: part checked for a placeholder. No other capturing group.
    regex: str
    #: How many characters the body's alphabet has (for the entropy floor).
    alphabet: int
    #: The format's checksum over the body: True or False, or None where it has none.
    checksum: Callable[[str], bool | None] | None = None


PATTERNS: tuple[Pattern, ...] = (
    Pattern("private key", r"-----BEGIN (?:[A-Z0-9]{1,24} ){0,4}PRIVATE KEY(?: BLOCK)?-----", 64),
    # Access key IDs are base32 (A-Z, 2-7) after a four-letter type.
    Pattern(
        "AWS access key ID",
        _B + r"(?:AKIA|ASIA|ABIA|ACCA)(?P<body>[A-Z2-7]{16})(?![A-Za-z0-9])",
        32,
    ),
    Pattern(
        "AWS secret access key",
        r"(?i:(?:aws[_-]?)?secret[_-]?access[_-]?key)"
        + _Q
        + r"?[ \t]{0,16}[:=]>?[ \t]{0,16}"
        + _Q
        + r"?(?P<body>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+])",
        64,
    ),
    Pattern("Google API key", _B + r"AIza(?P<body>[0-9A-Za-z_\-]{35})(?![0-9A-Za-z_\-])", 64),
    Pattern(
        "Google OAuth client secret",
        _B + r"GOCSPX-(?P<body>[0-9A-Za-z_\-]{28})(?![0-9A-Za-z_\-])",
        64,
    ),
    Pattern(
        "GCP service account key",
        _Q + r"private_key_id" + _Q + r"[ \t]{0,16}:[ \t]{0,16}" + _Q + r"(?P<body>[0-9a-f]{40})"
        r"\\?\"",
        16,
    ),
    Pattern(
        "GitHub token",
        _B + r"gh[pousr]_(?P<body>[A-Za-z0-9]{36,251})(?![A-Za-z0-9_])",
        62,
        crc32_base62_ok,
    ),
    Pattern(
        "GitHub fine-grained token",
        _B + r"github_pat_(?P<body>[A-Za-z0-9]{22}_[A-Za-z0-9]{59})(?![A-Za-z0-9_])",
        62,
    ),
    # Classic tokens have 20 characters; routable ones are longer and end in
    # ``.<version>.<suffix>``.
    Pattern(
        "GitLab token",
        _B + r"gl(?:pat|dt|rt|ptt|ft|agent|oas)-(?P<body>[A-Za-z0-9_\-]{20,300}"
        r"(?:\.[0-9a-z]{2}\.[0-9a-z]{9})?)(?![A-Za-z0-9_\-])",
        64,
    ),
    # ``xoxb-<team>-<bot>-<24 characters>``, ``xoxp-<team>-<user>-<…>-<32 hex>``, …
    Pattern(
        "Slack token",
        _B + r"xox[abposr]-[0-9]{1,15}(?:-[0-9]{1,15}){0,3}-(?P<body>[A-Za-z0-9]{20,64})"
        r"(?![A-Za-z0-9\-])",
        62,
    ),
    Pattern(
        "Slack webhook URL",
        r"https://hooks\.slack\.com/services/T[A-Z0-9]{6,12}/B[A-Z0-9]{6,12}/"
        r"(?P<body>[A-Za-z0-9]{20,32})(?![A-Za-z0-9])",
        62,
    ),
    Pattern(
        "Stripe secret key",
        _B + r"(?:sk|rk)_live_(?P<body>[0-9A-Za-z]{20,247})(?![0-9A-Za-z_])",
        62,
    ),
    Pattern(
        "OpenAI API key",
        _B + r"sk-(?:proj-|svcacct-|admin-)?(?P<body>[A-Za-z0-9_\-]{16,200}T3BlbkFJ"
        r"[A-Za-z0-9_\-]{16,200})(?![A-Za-z0-9_\-])",
        64,
    ),
    Pattern(
        "Anthropic API key",
        _B + r"sk-ant-(?:api|admin)[0-9]{2}-(?P<body>[A-Za-z0-9_\-]{80,160})(?![A-Za-z0-9_\-])",
        64,
    ),
    Pattern(
        "npm token", _B + r"npm_(?P<body>[A-Za-z0-9]{36})(?![A-Za-z0-9_])", 62, crc32_base62_ok
    ),
    Pattern(
        "PyPI token",
        _B + r"pypi-AgEIcHlwaS5vcmc(?P<body>[A-Za-z0-9_\-]{50,1000})(?![A-Za-z0-9_\-])",
        64,
    ),
    Pattern(
        "SendGrid API key",
        _B + r"SG\.(?P<body>[A-Za-z0-9_\-]{22}\.[A-Za-z0-9_\-]{43})(?![A-Za-z0-9_\-])",
        64,
    ),
    Pattern(
        "Azure storage account key",
        r"AccountKey=(?P<body>[A-Za-z0-9+/]{86}==)",
        64,
    ),
)

#: The longest text any pattern matches (a test checks every pattern against it). A
#: long line is scanned in windows this wide around each hint.
MAX_MATCH = 1100


@functools.cache
def _rx() -> re.Pattern[str]:
    """Every pattern in one regex (compiled the first time a hint is found: most texts
    have none, and a server answers its first read without compiling it)."""
    parts = (f"(?P<p{i}>{p.regex.replace('(?P<body>', '(?:')})" for i, p in enumerate(PATTERNS))
    return re.compile("|".join(parts))


@functools.cache
def _each() -> tuple[re.Pattern[str], ...]:
    return tuple(re.compile(p.regex) for p in PATTERNS)


#: Literal pieces at least one of which every pattern's match contains. One pass of
#: ``str.find`` per piece over the whole text finds where a credential may be, so
#: ordinary text costs a few C-level scans, not a regex run per line.
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

# -- what a placeholder looks like --------------------------------------------------------

#: Words that make a would-be credential a placeholder (compared without case).
PLACEHOLDER_WORDS: tuple[str, ...] = (
    "your",
    "example",
    "xxxx",
    "here",
    "placeholder",
    "dummy",
    "changeme",
    "change_me",
    "sample",
    "fake",
    "redacted",
    "replace",
    "insert",
    "secret",
    "token",
)
#: The words as placeholders write them: ``your``, ``YOUR`` or ``Your`` (a random body
#: of mixed case holds one of the 16 cases of a word by chance far more often).
_WORD_FORMS: tuple[str, ...] = tuple(
    form for w in PLACEHOLDER_WORDS for form in (w, w.upper(), w.capitalize())
)
#: Only bodies up to this long are checked for words: in a longer random body a word
#: turns up by chance too often, and a longer placeholder is caught by its entropy.
_WORDS_MAX_BODY = 64
#: A run (one character repeated, or counting up or down: ``aaaaa``, ``12345``, ``edcba``)
#: is a placeholder's when a random body of that length and alphabet would hold one
#: this rarely (at each place, one of 3 steps, then the same step again and again).
_RUN_CHANCE = 1e-5


def entropy(text: str) -> float:
    """Shannon entropy of ``text``'s characters, in bits per character."""
    n = len(text)
    if n == 0:
        return 0.0
    return -sum(c / n * math.log2(c / n) for c in Counter(text).values())


def _longest_run(text: str) -> int:
    """The longest stretch of characters each equal to, one above or one below the one
    before (the same step all along)."""
    best = run = 1 if text else 0
    step: int | None = None
    for a, b in itertools.pairwise(text):
        d = ord(b) - ord(a)
        if d in (-1, 0, 1) and (run == 1 or d == step):
            run += 1
            step = d
        elif d in (-1, 0, 1):
            run, step = 2, d
        else:
            run, step = 1, None
        best = max(best, run)
    return best


def placeholder(body: str, alphabet: int) -> bool:
    """Whether a would-be credential's random part is a placeholder: a placeholder word,
    a run a random string of that alphabet would hardly hold, or less than half the
    entropy a random string of that length has."""
    if not body:
        return True
    if len(body) <= _WORDS_MAX_BODY and any(w in body for w in _WORD_FORMS):
        return True
    k = max(2, alphabet)
    longest = 1 + math.ceil(math.log(3 * len(body) / _RUN_CHANCE) / math.log(k))
    if _longest_run(body) >= longest:
        return True
    return entropy(body) < 0.5 * math.log2(min(len(body), k))


def plausible(pattern: Pattern, body: str) -> bool:
    """Whether ``body`` can be the random part of a real credential of ``pattern``: its
    checksum holds where the format has one; otherwise it is no placeholder."""
    if pattern.checksum is not None:
        verdict = pattern.checksum(body)
        if verdict is not None:
            return verdict
    return not placeholder(body, pattern.alphabet)


_PEM_LEAD = re.compile(r"(?:\\[rn]|[\s\"',+])*")
_BASE64_RUN = re.compile(r"[A-Za-z0-9+/=]*")


def _pem_body(after: str) -> bool | None:
    """Whether the text after a PEM header starts a real key (a long base64 run, or an
    encrypted key's ``Proc-Type:`` header); None when there is nothing there."""
    rest = after[_PEM_LEAD.match(after).end() :]  # type: ignore[union-attr]
    if not rest:
        return None
    if rest.startswith("Proc-Type:"):
        return True
    run = _BASE64_RUN.match(rest).group(0)  # type: ignore[union-attr]
    return len(run) >= 40 and not placeholder(run, 64)


# -- findings ------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Finding:
    """One credential-looking match: what it looks like and where (1-based line; in a
    notebook, the line of the cell's source or outputs)."""

    kind: str
    line: int
    excerpt: str
    #: The notebook cell (its id) the line belongs to.
    cell: str | None = None
    #: In a notebook cell: ``source`` or ``outputs``.
    part: str | None = None

    def as_dict(self) -> dict[str, object]:
        out: dict[str, object] = {"kind": self.kind, "line": self.line, "excerpt": self.excerpt}
        if self.cell is not None:
            out["cell"] = self.cell
            out["part"] = self.part or "source"
        return out

    def place(self) -> str:
        """``on line 3``, ``in cell ab12, line 2``, ``in the outputs of cell ab12, line 2``."""
        if self.cell is None:
            return f"on line {self.line}"
        where = "the outputs of cell" if self.part == "outputs" else "cell"
        return f"in {where} {self.cell}, line {self.line}"


@dataclass(frozen=True, slots=True)
class Unscanned:
    """What the scan had no time for: ``lines`` lines from ``line`` on (of ``cell``, in a
    notebook, and the cells after it)."""

    line: int
    lines: int
    cell: str | None = None

    def fields(self) -> dict[str, object]:
        out: dict[str, object] = {"from_line": self.line, "lines": self.lines}
        if self.cell is not None:
            out["cell"] = self.cell
        return out

    def sentence(self, seconds: float) -> str:
        where = f"cell {self.cell} line {self.line:,}" if self.cell else f"line {self.line:,}"
        what = f"{self.lines:,} line(s) from {where}"
        if self.cell:
            what += " and the cells after it"
        return (
            f"The credential scan stopped at its {seconds:g}-second limit: {what} were not "
            "scanned. Check them for credentials yourself before relying on the file."
        )


@dataclass(frozen=True, slots=True)
class Scan:
    findings: list[Finding]
    unscanned: Unscanned | None = None


def _redact(text: str) -> str:
    text = text.lstrip("\\\"'")
    keep = 4 if len(text) > 12 else 2
    return text[:keep] + "…"


def _hint_positions(text: str) -> list[int]:
    """Where in ``text`` a hint starts, in order."""
    hits: list[int] = []
    for hint in HINTS:
        i = text.find(hint)
        while i >= 0:
            hits.append(i)
            i = text.find(hint, i + 1)
    hits.extend(m.start() for m in _ANY_CASE_RX.finditer(text))
    hits.sort()
    return hits


#: A line up to this long is scanned whole where it holds a hint; a longer one in
#: windows around its hints.
LONG_LINE = 8 * MAX_MATCH
#: How long the scan of one change may take (seconds).
SCAN_SECONDS = 5.0
#: How long the scan behind a read's note may take (it runs on the event loop, and the
#: note is advice: what it has no time for goes without one).
READ_SCAN_SECONDS = 0.5


def _windows(length: int, cols: list[int]) -> list[tuple[int, int]]:
    if length <= LONG_LINE:
        return [(0, length)]
    out: list[tuple[int, int]] = []
    for c in cols:
        lo, hi = max(0, c - MAX_MATCH), min(length, c + MAX_MATCH + 1)
        if out and lo <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], hi))
        else:
            out.append((lo, hi))
    return out


def _genuine(index: int, text: str, m: re.Match[str], end: int, next_line: str | None) -> bool:
    pattern = PATTERNS[index]
    if pattern.kind == "private key":
        verdict = _pem_body(text[m.end() :])
        if verdict is None and next_line is not None:
            verdict = _pem_body(next_line)
        return verdict is not False
    own = _each()[index].match(text, m.start(), end)
    body = own.group("body") if own is not None else ""
    return plausible(pattern, body)


def scan_numbered(
    lines: Sequence[tuple[int, str]],
    budget: Budget | None = None,
    *,
    cell: str | None = None,
    part: str | None = None,
) -> Scan:
    """Findings in numbered lines (``(line_number, text)``), in order, within
    ``budget`` (by default :data:`SCAN_SECONDS`); what was left is ``unscanned``."""
    out: list[Finding] = []
    if not lines:
        return Scan(out)
    budget = budget if budget is not None else Budget(SCAN_SECONDS)
    texts = [text for _, text in lines]
    joined = "\n".join(texts)
    hits = _hint_positions(joined)
    starts: list[int] = []
    pos = 0
    for t in texts:
        starts.append(pos)
        pos += len(t) + 1
    i = 0
    checks = 0
    while i < len(hits):
        li = bisect.bisect_right(starts, hits[i]) - 1
        text = texts[li]
        base = starts[li]
        j = bisect.bisect_left(hits, base + len(text) + 1, lo=i)
        number = lines[li][0]
        nxt = lines[li + 1] if li + 1 < len(lines) else None
        next_line = nxt[1] if nxt is not None and nxt[0] == number + 1 else None
        if budget.expired():
            return Scan(out, Unscanned(number, len(lines) - li, cell))
        for lo, hi in _windows(len(text), [h - base for h in hits[i:j]]):
            at = lo
            rx = _rx()
            while (m := rx.search(text, at, hi)) is not None:
                index = int((m.lastgroup or "p0")[1:])
                if _genuine(index, text, m, hi, next_line):
                    out.append(
                        Finding(PATTERNS[index].kind, number, _redact(m.group(0)), cell, part)
                    )
                    at = m.end()
                else:
                    at = m.start() + 1
                checks += 1
                if checks % 256 == 0 and budget.expired():
                    return Scan(out, Unscanned(number, len(lines) - li, cell))
        i = j
    return Scan(out)


def scan_lines(lines: list[tuple[int, str]]) -> list[Finding]:
    """Findings in numbered lines (``(line_number, text)``), in order."""
    return scan_numbered(lines).findings


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


def _scan_text(
    old_view: str | None, new_view: str, splices: Sequence[Splice] | None, budget: Budget
) -> Scan:
    if old_view and not splices:
        # a whole new text: look for hints in the added lines only (those of the diff the
        # tool just made, when there is one: they include every line counted as added)
        plus = known_added_text(old_view, new_view)
        if plus is not None and not has_hint(plus):
            return Scan([])
        lines = added_lines(old_view, new_view)
        if not has_hint("\n".join(text for _, text in lines)):
            return Scan([])
        return scan_numbered(lines, budget)
    region = spliced_lines(new_view, splices) if old_view and splices else new_view
    if not has_hint(region):
        return Scan([])  # no credential can match: the lines need not be split and counted
    return scan_numbered(added_lines(old_view, new_view), budget)


def scan_added(
    old_view: str | None,
    new_view: str,
    splices: Sequence[Splice] | None = None,
    *,
    budget: Budget | None = None,
) -> list[Finding]:
    """Credentials in the lines the change adds (lines already present are not reported).

    ``splices``: the view splices that turned ``old_view`` into ``new_view``, if known;
    they narrow the quick pre-check to the lines they touch.
    """
    return _scan_text(old_view, new_view, splices, budget or Budget(SCAN_SECONDS)).findings


# -- notebooks ----------------------------------------------------------------------


def _pairs(
    before: nb_fmt.Notebook | None, after: nb_fmt.Notebook
) -> list[tuple[nb_fmt.CellSpan, nb_fmt.CellSpan | None]]:
    """Each cell of ``after`` with the cell of ``before`` it came from: the one with its
    id (when one cell has it), else, for cells without ids, the one at its position."""
    if before is None:
        return [(c, None) for c in after.cells]
    ids = Counter(c.real_id for c in before.cells if c.real_id is not None)
    by_id = {c.real_id: c for c in before.cells if c.real_id is not None and ids[c.real_id] == 1}
    out: list[tuple[nb_fmt.CellSpan, nb_fmt.CellSpan | None]] = []
    for cell in after.cells:
        rid = cell.real_id
        if rid is not None:
            out.append((cell, by_id.get(rid)))
        else:
            old = before.cells[cell.index - 1] if cell.index <= len(before.cells) else None
            out.append((cell, old if old is not None and old.real_id is None else None))
    return out


def _outside_cells(nb: nb_fmt.Notebook) -> str:
    """The notebook's JSON with its cells list blanked out (line breaks kept, so lines
    keep their numbers): its metadata and whatever else it holds."""
    m = nb.cells_member
    text = nb.text
    return (
        text[: m.value_start]
        + "\n" * text.count("\n", m.value_start, m.value_end)
        + text[m.value_end :]
    )


def _maybe_notebook(view: str) -> nb_fmt.Notebook | None:
    try:
        return nb_fmt.parse(view)
    except nb_fmt.NotebookError:
        return None


def _scan_notebook(old_view: str | None, new_view: str, budget: Budget) -> Scan | None:
    """The scan of a change to a notebook, on what its user sees: each cell's source and
    outputs decoded, against the same cell before; then the JSON around the cells. None
    when ``new_view`` is no notebook, or when parsing both texts would pass the memory
    bound of a notebook (it is then scanned as text: the patterns also match inside
    JSON strings)."""
    old_cost = nb_fmt.parse_cost(old_view)[1] if old_view else 0
    if old_cost + nb_fmt.parse_cost(new_view)[1] > nb_fmt.PARSE_BUDGET:
        return None  # too large to parse within the memory bound: scanned as JSON text
    after = _maybe_notebook(new_view)
    if after is None:
        return None
    before = _maybe_notebook(old_view) if old_view else None
    found: list[Finding] = []
    for cell, old in _pairs(before, after):
        parts = (
            ("source", cell.source, old.source if old is not None else None),
            ("outputs", nb_fmt.output_text(cell), nb_fmt.output_text(old) if old else None),
        )
        for part, text, was in parts:
            if not text or not has_hint(text):
                continue
            lines = added_lines(to_view(was) if was else None, to_view(text))
            scan = scan_numbered(lines, budget, cell=cell.id, part=part)
            found.extend(scan.findings)
            if scan.unscanned is not None:
                return Scan(found, scan.unscanned)
    outer_old = (_outside_cells(before) if before is not None else old_view) or None
    scan = _scan_text(outer_old, _outside_cells(after), None, budget)
    return Scan(found + scan.findings, scan.unscanned)


def scan_change(
    path: str,
    old_view: str | None,
    new_view: str,
    splices: Sequence[Splice] | None = None,
    *,
    seconds: float = SCAN_SECONDS,
) -> Scan:
    """The credentials a change to ``path`` adds, and what the time bound left unscanned.
    A notebook is scanned as its user sees it (:func:`_scan_notebook`)."""
    budget = Budget(seconds)
    if nb_fmt.is_notebook_path(path) and (has_hint(new_view) or "\\u" in new_view):
        scan = _scan_notebook(old_view, new_view, budget)
        if scan is not None:
            return scan
    return _scan_text(old_view, new_view, splices, budget)


def describe(findings: Sequence[Finding], most: int = 4) -> str:
    """``AWS access key ID on line 3, GitHub token on line 9`` (the first few)."""
    parts = [f"{f.kind} {f.place()} ({f.excerpt})" for f in findings[:most]]
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
        found = scan_numbered(list(enumerate(lines, start=1)), Budget(READ_SCAN_SECONDS)).findings
        _FOUND_BY_CONTENT[content_key] = found
        while len(_FOUND_BY_CONTENT) > _FOUND_CACHE_SIZE:
            _FOUND_BY_CONTENT.popitem(last=False)
    else:
        _FOUND_BY_CONTENT.move_to_end(content_key)
    return found


_DO_NOT_COPY = (
    "Do not copy its values into other files, commands or replies; refer to them by name."
)


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
        numbered = list(enumerate(lines, start=first_line))
        found = scan_numbered(numbered, Budget(READ_SCAN_SECONDS)).findings
    by_name = looks_like_secrets_file(path)
    if not found and not by_name:
        return ""
    what = "This file looks like it holds secrets"
    if found:
        where = sorted({f.line for f in found})
        shown = ", ".join(str(n) for n in where[:6]) + (", …" if len(where) > 6 else "")
        kinds = ", ".join(sorted({f.kind for f in found}))
        what += f" (line(s) {shown} look like credentials: {kinds})"
    return f"({what}. {_DO_NOT_COPY})"


def notebook_read_note(cells: Sequence[nb_fmt.CellSpan]) -> str:
    """A note for a notebook read when the cells shown hold what looks like credentials
    (in their decoded sources or outputs)."""
    found: list[Finding] = []
    budget = Budget(SCAN_SECONDS)
    for cell in cells:
        for part, text in (("source", cell.source), ("outputs", nb_fmt.output_text(cell))):
            if text and has_hint(text):
                lines = list(enumerate(split_lines(to_view(text)), start=1))
                found.extend(scan_numbered(lines, budget, cell=cell.id, part=part).findings)
    if not found:
        return ""
    ids = list(dict.fromkeys(f.cell for f in found if f.cell is not None))
    shown = ", ".join(ids[:6]) + (", …" if len(ids) > 6 else "")
    kinds = ", ".join(sorted({f.kind for f in found}))
    return (
        f"(This notebook looks like it holds secrets (cell(s) {shown} look like they hold "
        f"credentials: {kinds}). {_DO_NOT_COPY})"
    )

"""Syntax errors as a model reads them, and which of them a change introduced. Pure.

An :class:`Issue` is one error: where (a byte range of the text's UTF-8 form, and the
1-based line and column in characters), a short message ("missing `}`", "unexpected
`)`", "unclosed `(`"), and the line it is on. :func:`introduced` keeps, of the errors
of the new text, those the old text did not have, so an error the file already had is
never blamed on the change, wherever the change moved it.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass

#: Longest excerpt of a line shown with an error (characters).
EXCERPT_CHARS = 120
#: Longest piece of source quoted in a message.
QUOTE_CHARS = 24

_OPENERS = {"(": ")", "[": "]", "{": "}"}
_CLOSERS = {")": "(", "]": "[", "}": "{"}


@dataclass(frozen=True, slots=True)
class Issue:
    """One syntax error of a text."""

    start: int  # where it is reported: a byte offset in the text's UTF-8 form
    end: int  # where the text that does not parse ends
    line: int  # 1-based
    column: int  # 1-based, in characters
    message: str
    excerpt: str
    #: The error's line without its indentation, and the column within that: an error
    #: moved with its line (a block cut and pasted elsewhere) keeps this.
    context: str = ""
    #: where the text that does not parse starts (at most ``start``; -1: at ``start``)
    span_start: int = -1
    #: for a missing closing bracket found far from its opening one: that bracket, where
    #: it is (byte offset) and its line
    opener: str = ""
    opener_at: int = -1
    opener_line: int = 0
    #: why the check cannot pin this error on the change, or tell that it is one ("": it
    #: can): reported, never refused
    doubt: str = ""

    @property
    def span(self) -> tuple[int, int]:
        """The byte range of the text that does not parse."""
        return (self.start if self.span_start < 0 else self.span_start), self.end

    @property
    def text(self) -> str:
        """The message as shown: "missing `}` (to close the `{` on line 12)"."""
        if self.opener and self.opener_line != self.line:
            return f"{self.message} (to close the {quote(self.opener)} on line {self.opener_line})"
        return self.message

    def as_dict(self) -> dict[str, object]:
        return {
            "line": self.line,
            "column": self.column,
            "message": self.text,
            "excerpt": self.excerpt,
        }


@dataclass(frozen=True, slots=True)
class Edit:
    """``old[start:end]`` became ``length`` bytes (offsets in the old text)."""

    start: int
    end: int
    length: int


# -- messages ------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Leaf:
    """A token inside an error: its kind, whether the kind is named (``identifier``) or a
    literal token (``)``), its text and where it starts."""

    kind: str
    named: bool
    text: str
    start: int


def quote(text: str) -> str:
    """``text`` in backticks, on one line and shortened."""
    text = " ".join(text.split())
    if len(text) > QUOTE_CHARS:
        text = text[: QUOTE_CHARS - 1] + "…"
    return f"`{text}`" if "`" not in text else f"“{text}”"


def missing_message(kind: str, named: bool) -> str:
    """What a zero-width missing node says: "missing `;`", "missing identifier"."""
    if named:
        return "missing " + kind.replace("_", " ")
    return "missing " + quote(kind)


def error_message(leaves: Sequence[Leaf], text: str) -> tuple[str, int | None]:
    """What an error region says, and the offset of the token that says it (None: the
    region's start). A bracket without its partner is named first ("unexpected `)`",
    "unclosed `(`"); a region of one token is that token ("unexpected `=`"); otherwise
    the region's first line is quoted ("syntax error near `if x`")."""
    stack: list[Leaf] = []
    for leaf in leaves:
        if leaf.named or not leaf.text:
            continue
        if leaf.kind in _OPENERS:
            stack.append(leaf)
        elif leaf.kind in _CLOSERS:
            if stack and stack[-1].kind == _CLOSERS[leaf.kind]:
                stack.pop()
            else:
                return "unexpected " + quote(leaf.kind), leaf.start
    if stack:
        return "unclosed " + quote(stack[-1].kind), stack[-1].start
    real = [leaf for leaf in leaves if leaf.text]
    if len(real) == 1:
        return "unexpected " + quote(real[0].text), real[0].start
    head = text.strip().split("\n", 1)[0].strip() if text.strip() else ""
    if not head:
        return "syntax error", None
    return "syntax error near " + quote(head), None


def excerpt(line: str, column: int) -> str:
    """The line an error is on, shortened around ``column`` (1-based) when long."""
    line = line.rstrip()
    if len(line) <= EXCERPT_CHARS:
        return line
    half = EXCERPT_CHARS // 2
    lo = max(0, min(column - 1 - half, len(line) - EXCERPT_CHARS))
    hi = lo + EXCERPT_CHARS
    return ("…" if lo > 0 else "") + line[lo:hi] + ("…" if hi < len(line) else "")


def context_of(line: str, column: int) -> str:
    """The signature of an error at ``column`` of ``line``: its column past the
    indentation, and the line's text without indentation."""
    body = line.strip()
    indent = len(line) - len(line.lstrip())
    return f"{column - 1 - indent}:{body[:200]}"


# -- what a change introduced --------------------------------------------------------


def map_offset(pos: int, edits: Sequence[Edit]) -> tuple[int, int | None]:
    """Where ``pos`` (an offset in the old text) is in the new text, and the index of the
    edit it lay strictly inside (then the offset returned is where that edit's new text
    starts), else None. ``edits``: ordered, not overlapping."""
    shift = 0
    for i, e in enumerate(edits):
        if pos <= e.start:
            break
        if pos < e.end:
            return e.start + shift, i
        shift += e.length - (e.end - e.start)
    return pos + shift, None


def new_range(edits: Sequence[Edit], index: int) -> tuple[int, int]:
    """The new text of edit ``index``, as offsets in the new text."""
    shift = sum(e.length - (e.end - e.start) for e in edits[:index])
    e = edits[index]
    return e.start + shift, e.start + shift + e.length


def introduced(old: Sequence[Issue], new: Sequence[Issue], edits: Sequence[Edit]) -> list[Issue]:
    """The errors of ``new`` that ``old`` did not have, in order.

    ``old`` are the errors of the text before the change, ``new`` those after it, and
    ``edits`` the change (ordered edits in old-text offsets). A new error is one the text
    already had when an old error with the same message is found for it, looked for in
    this order: at the place the change moved it to, on a line that reads the same; on a
    line that reads the same and at the same column past the indentation, anywhere (the
    line was moved); at the place the change moved it to; inside the text an edit
    replaced, when the old one was inside what it replaced. (By place, a region that does
    not parse is the same error whatever text the message quotes: "syntax error near
    `return x`" and, once that line is edited, "syntax error near `return y`".) Each old
    error accounts for one new one. Last, a new error within the span of an old one
    (text that did not parse before either) is not new.

    What is left is what no old error accounts for by these keys, not yet what the change
    broke: how a parser recovers from an error depends on everything around it, so the
    span and the message of an error the text had change with what is around it. The
    check (:meth:`steadyhand.syntax.engine.Checker.check`) tells the two apart where it
    can, and reports the others as errors it cannot pin on the change.
    """
    if not new:
        return []
    mapped: list[tuple[int, int | None]] = []  # (where it is reported, edit inside)
    spans: list[tuple[int, int]] = []
    for o in old:
        mapped.append(map_offset(o.start, edits))
        lo, hi = o.span
        s, _ = map_offset(lo, edits)
        e, e_inside = map_offset(hi, edits)
        if e_inside is not None:
            e = new_range(edits, e_inside)[1]
        if hi > lo and e > s:
            spans.append((s, e))
    used = [False] * len(old)
    left = list(range(len(new)))

    def take(match: dict[object, list[int]], key_of: Callable[[Issue], object]) -> None:
        nonlocal left
        keep: list[int] = []
        for j in left:
            key = key_of(new[j])
            candidates = match.get(key) if key is not None else None
            while candidates and used[candidates[-1]]:
                candidates.pop()
            if candidates:
                used[candidates.pop()] = True
            else:
                keep.append(j)
        left = keep

    # at the place the change moved it to, on a line that reads the same
    same: dict[object, list[int]] = defaultdict(list)
    exact: dict[object, list[int]] = defaultdict(list)
    moved: dict[object, list[int]] = defaultdict(list)
    for i in reversed(range(len(old))):
        start, inside = mapped[i]
        if inside is None:
            same[(old[i].message, start, old[i].context)].append(i)
            exact[(_kind(old[i].message), start)].append(i)
        moved[(old[i].message, old[i].context)].append(i)
    take(same, lambda n: (n.message, n.start, n.context))
    # on a line that reads the same, elsewhere (the line was moved)
    if left:
        take(moved, lambda n: (n.message, n.context))
    # at the place the change moved it to (its line changed around it)
    if left:
        take(exact, lambda n: (_kind(n.message), n.start))
    # inside the text an edit replaced
    if left and edits:
        ranges = [new_range(edits, k) for k in range(len(edits))]
        within: dict[object, list[int]] = defaultdict(list)
        for i in reversed(range(len(old))):
            inside = mapped[i][1]
            if inside is not None:
                within[(_kind(old[i].message), inside)].append(i)

        def edit_of(n: Issue) -> object:
            for k, (lo, hi) in enumerate(ranges):
                if lo <= n.start <= hi:
                    return (_kind(n.message), k)
            return None

        take(within, edit_of)
    # within an old error's span
    if left and spans:
        left = [j for j in left if not _covered(spans, new[j])]
    return [new[j] for j in left]


def _kind(message: str) -> str:
    """What a message says of an error, without the text it quotes when it quotes the
    region that does not parse ("syntax error near `if x`"): that text is what a change
    around the error alters, not the error."""
    return "syntax error" if message.startswith("syntax error near ") else message


def _covered(spans: list[tuple[int, int]], n: Issue) -> bool:
    return any(s <= n.start and n.end <= e for s, e in spans if s <= n.start)

"""Where a grammar cannot judge a text, so that an error it reports there is not one the
language's own tools would report. Pure but for the parses it is handed.

Three kinds:

* **Code newer than the grammar.** A grammar lags behind its language: Python 3.13's
  type parameter defaults, C++23's ``if consteval``, Java 25's module imports... An
  error on a line that reads like one of those constructs (:data:`GAPS`) is one the
  grammar cannot judge: a warning with the construct named, never a refusal.
* **Code split by preprocessor conditionals.** A C or C++ grammar reads ``#if`` /
  ``#else`` / ``#endif`` as it meets them, so a construct opened in one branch and
  closed after the conditional (``extern "C" {`` under ``#ifdef __cplusplus``) does not
  parse, though every configuration the compiler sees does. Each configuration is
  parsed on its own (:func:`configurations`: every conditional takes its first branch,
  then its second...); an error that some configuration holding its line does not have
  is one the grammar cannot judge.
* **Python the interpreter accepts.** The server runs on Python: an error in a top-level
  statement the interpreter's own parser accepts (:func:`python_accepts`) is none.
"""

from __future__ import annotations

import ast
import dataclasses
import re
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from steadyhand.syntax.elide import NodeLike, first_child_ending_after
from steadyhand.syntax.issues import Issue

#: Text of an error's lines looked at for a construct newer than the grammar (bytes).
MAX_LINES_BYTES = 2000
#: Top-level Python handed to the interpreter's parser at most (characters): it builds
#: a whole syntax tree of Python objects, about 1 ms per kilobyte.
MAX_PYTHON_CHARS = 16_384
#: Configurations of a text's preprocessor conditionals parsed at most.
MAX_CONFIGURATIONS = 3

PREPROCESSOR_REASON = (
    "the grammar cannot judge code split by preprocessor conditionals (#if, #ifdef, "
    "#else), which the compiler reads one configuration at a time"
)


@dataclass(frozen=True)
class Gap:
    """A construct a grammar does not know yet: the languages it is of, a pattern that
    finds it on the lines of an error, and what it is."""

    langs: frozenset[str]
    pattern: re.Pattern[bytes]
    what: str


def _gap(langs: str, pattern: bytes, what: str) -> Gap:
    return Gap(frozenset(langs.split()), re.compile(pattern, re.MULTILINE), what)


#: Constructs the grammars checked with do not know (as of their versions here).
GAPS: tuple[Gap, ...] = (
    _gap(
        "python",
        rb"^\s*(?:async\s+)?(?:def|class|type)\s+\w+\s*\[[^\]]*=",
        "type parameter defaults (Python 3.13)",
    ),
    _gap("cpp", rb"\bif\s*!?\s*consteval\b", "`if consteval` (C++23)"),
    _gap("cpp", rb"^\s*(?:export\s+)?module\b", "module declarations (C++20)"),
    _gap("cpp", rb"\(\s*this\s+[\w:]", "explicit object parameters, `this Self& self` (C++23)"),
    _gap("cpp", rb"\]\s*static\b", "`static` lambdas (C++23)"),
    _gap("c cpp", rb"\b\w+\s*:\s*\}", "a label at the end of a block (C23, C++23)"),
    _gap("c cpp", rb"^\s*#\s*embed\b", "`#embed` (C23, C++26)"),
    _gap("c", rb"\bauto\s+[A-Za-z_]\w*\s*=", "`auto` type inference (C23)"),
    _gap("c", rb"\b_BitInt\s*\(", "`_BitInt` (C23)"),
    _gap("c", rb"\benum\s*\w*\s*:\s*\w", "enumerations with a fixed underlying type (C23)"),
    _gap(
        "javascript typescript tsx",
        rb"\baccessor\s+[#\w\[]",
        "`accessor` fields (decorators, ES2025; TypeScript 4.9)",
    ),
    _gap(
        "javascript typescript tsx",
        rb"^\s*import\s+(?:defer|source)\b",
        "`import defer` and `import source`",
    ),
    _gap(
        "typescript tsx",
        rb"[<,]\s*(?:in\s+out|in|out)\s+[A-Za-z_$]",
        "variance annotations `in` and `out` on type parameters (TypeScript 4.7)",
    ),
    _gap("typescript tsx", rb"^\s*export\s+type\s+\*", "`export type *` (TypeScript 5.0)"),
    _gap(
        "rust", rb"\bsafe\s+(?:fn|static)\b", "`safe` items in `unsafe extern` blocks (Rust 1.82)"
    ),
    _gap("rust", rb"\bgen\s*(?:move\s*)?\{", "`gen` blocks (Rust, unstable)"),
    _gap("java", rb"^\s*import\s+module\b", "module import declarations (Java 25)"),
    _gap(
        "java",
        rb"^\s*(?:super|this)\s*\(",
        "statements before `super(…)` or `this(…)` in a constructor (Java 25)",
    ),
    _gap("csharp", rb"\bextension\s*(?:<[^>\n]*>\s*)?\(", "extension members (C# 14)"),
    _gap("csharp", rb"\ballows\s+ref\s+struct\b", "`allows ref struct` (C# 13)"),
    _gap(
        "css",
        rb"@(?:media|container)\b[^{;]*[<>]",
        "range comparisons in media and container queries (Media Queries 4)",
    ),
    _gap(
        "css",
        rb"@import\b[^;]*\b(?:layer|supports)\s*\(",
        "`layer()` and `supports()` in `@import`",
    ),
    _gap(
        "toml",
        rb"=\s*\{[^}\n]*(?:,\s*\}|$)",
        "inline tables over several lines or with a trailing comma (TOML 1.1)",
    ),
    _gap("toml", rb"\\e|\\x[0-9A-Fa-f]{2}", "the escapes `\\e` and `\\xHH` (TOML 1.1)"),
    _gap(
        "toml",
        rb"=\s*(?:\d{4}-\d{2}-\d{2}[Tt ])?\d{2}:\d{2}(?!:\d)",
        "times without seconds (TOML 1.1)",
    ),
)


def lines_of(data: bytes | bytearray, issue: Issue) -> bytes:
    """The lines an error's text lies on (at most :data:`MAX_LINES_BYTES`)."""
    lo, hi = issue.span
    start = data.rfind(b"\n", 0, lo) + 1
    end = data.find(b"\n", hi)
    end = len(data) if end < 0 else end
    return bytes(data[start : min(end, start + MAX_LINES_BYTES)])


def known_gap(lang: str, data: bytes | bytearray, issue: Issue) -> str:
    """The reason ``issue`` (an error of ``data``, of ``lang``) is one the grammar cannot
    judge, because its lines read like a construct newer than the grammar; "" if not."""
    text: bytes | None = None
    for gap in GAPS:
        if lang not in gap.langs:
            continue
        if text is None:
            text = lines_of(data, issue)
        if gap.pattern.search(text):
            return f"the grammar here does not know {gap.what}"
    return ""


# -- Python ---------------------------------------------------------------------------


def python_accepts(source: str) -> bool:
    """Whether the interpreter's own parser accepts ``source`` (only its syntax: nothing
    is compiled or run)."""
    if len(source) > MAX_PYTHON_CHARS:
        return False
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # (invalid escapes and the like)
            ast.parse(source)
    except (SyntaxError, ValueError, MemoryError, RecursionError, OverflowError):
        return False
    return True


def top_statements(root: NodeLike, data: bytes | bytearray, issue: Issue) -> str | None:
    """The top-level statements of ``data`` (children of ``root``) that ``issue`` lies
    in, whole lines from one that is not indented; None when they are not that."""
    lo, hi = issue.span
    first = last = None
    for i in range(first_child_ending_after(root, lo), root.child_count):
        child = root.child(i)
        if child is None or child.start_byte > hi:
            break
        first = child if first is None else first
        last = child
    if first is None or last is None:
        return None
    start = data.rfind(b"\n", 0, first.start_byte) + 1
    end = data.find(b"\n", last.end_byte)
    end = len(data) if end < 0 else end
    if data[start : first.start_byte].strip() or data[start : start + 1] in (b" ", b"\t"):
        return None  # not at the start of an unindented line
    if end - start > MAX_PYTHON_CHARS * 4:
        return None
    return bytes(data[start:end]).decode("utf-8", "replace")


# -- preprocessor conditionals -------------------------------------------------------

_DIRECTIVE = re.compile(rb"^[ \t]*#[ \t]*(if|ifdef|ifndef|elif|elifdef|elifndef|else|endif)\b(.*)")
_CONDITIONALS = re.compile(rb"^[ \t]*#[ \t]*(?:if|ifdef|ifndef)\b", re.MULTILINE)


@dataclass
class _Conditional:
    branches: int = 1
    #: the branch a constant condition (``#if 0``, ``#if 1``) always takes (-1: the one
    #: after it, when its condition is 0; None: none is constant)
    fixed: int | None = None


def has_conditionals(data: bytes | bytearray) -> bool:
    return _CONDITIONALS.search(data) is not None


def configurations(data: bytes | bytearray) -> list[tuple[bytes, list[bool]]]:
    """The text as the compiler sees it in each of a few configurations: every
    conditional takes its first branch, then every one its second (or its last), and so
    on, with the lines of the branches not taken and of the conditionals' directives
    blanked (so offsets and lines stay where they were). Each with which lines it
    keeps. Empty when the conditionals do not pair up (an ``#endif`` missing or too
    many)."""
    lines = bytes(data).split(b"\n")
    paths: list[tuple[tuple[int, int], ...] | None] = []  # None: a directive's line
    conds: list[_Conditional] = []
    stack: list[tuple[int, int]] = []  # (conditional, branch)
    going_on = False  # a directive's line ending with a backslash
    for line in lines:
        if going_on:
            paths.append(None)
            going_on = line.rstrip().endswith(b"\\")
            continue
        m = _DIRECTIVE.match(line)
        if m is None:
            paths.append(tuple(stack))
            continue
        word, rest = m.group(1), m.group(2).split(b"//")[0].split(b"/*")[0].strip()
        if word in (b"if", b"ifdef", b"ifndef"):
            fixed = None
            if word == b"if" and rest in (b"0", b"1"):
                fixed = 0 if rest == b"1" else -1
            conds.append(_Conditional(fixed=fixed))
            stack.append((len(conds) - 1, 0))
        elif word == b"endif":
            if not stack:
                return []
            stack.pop()
        else:  # elif, elifdef, elifndef, else
            if not stack:
                return []
            c, b = stack.pop()
            conds[c].branches += 1
            stack.append((c, b + 1))
        paths.append(None)
        going_on = line.rstrip().endswith(b"\\")
    if stack:
        return []
    count = min(MAX_CONFIGURATIONS, max((c.branches for c in conds), default=1))
    out: list[tuple[bytes, list[bool]]] = []
    for k in range(count):
        taken = [_taken(c, k) for c in conds]
        kept = [p is not None and all(taken[c] == b for c, b in p) for p in paths]
        text = b"\n".join(
            line if keep else b" " * len(line) for line, keep in zip(lines, kept, strict=True)
        )
        out.append((text, kept))
    return out


def _taken(cond: _Conditional, k: int) -> int:
    """The branch of ``cond`` configuration ``k`` takes (-1: none)."""
    if cond.fixed == 0:
        return 0
    if cond.fixed == -1:
        return 1 if cond.branches > 1 else -1
    return min(k, cond.branches - 1)


def _line_span(data: bytes | bytearray, issue: Issue) -> tuple[int, int]:
    lo, hi = issue.span
    first = data.count(b"\n", 0, lo)
    return first, first + data.count(b"\n", lo, hi)


def split_by_conditionals(
    data: bytes | bytearray,
    found: Sequence[Issue],
    parse: Callable[[bytes], Sequence[Issue] | None],
) -> list[bool]:
    """For each error of ``found`` (of ``data``), whether it comes from conditionals
    splitting the code: some configuration that keeps its line has no error on its lines
    (or none keeps it: code the compiler never sees). ``parse`` answers the errors of a
    configuration's text, None when it cannot in time (then the error is taken to be
    one: the grammar could not judge it either way)."""
    if not found or not has_conditionals(data):
        return [False] * len(found)
    configs = configurations(data)
    if not configs:
        return [False] * len(found)
    errors: list[Sequence[Issue] | None] = [None] * len(configs)
    parsed = [False] * len(configs)
    out: list[bool] = []
    for issue in found:
        first, last = _line_span(data, issue)
        split = True
        for k, (text, kept) in enumerate(configs):
            if not any(kept[first : last + 1]):
                continue
            if not parsed[k]:
                errors[k], parsed[k] = parse(text), True
            there = errors[k]
            if there is None:
                split = True
                break
            lines = [_line_span(text, e) for e in there]
            if not any(a <= last and first <= b for a, b in lines):
                split = True
                break
            split = False
        out.append(split)
    return out


def judge(
    lang: str,
    data: bytes | bytearray,
    root: NodeLike,
    found: Sequence[Issue],
    parse: Callable[[bytes], Sequence[Issue] | None],
) -> list[Issue]:
    """``found`` (errors of ``data``, of ``lang``; ``root``: its tree) without those the
    language's own parser accepts (Python), and with a ``doubt`` on those the grammar
    cannot judge. ``parse``: the errors of another text of the same language (None: not
    in time)."""
    out: list[Issue] = []
    accepted: dict[str, bool] = {}
    for issue in found:
        if lang == "python":
            source = top_statements(root, data, issue)
            if source is not None:
                if source not in accepted:
                    accepted[source] = python_accepts(source)
                if accepted[source]:
                    continue  # the interpreter reads it: the grammar is behind
        if not issue.doubt:
            reason = known_gap(lang, data, issue)
            if reason:
                issue = dataclasses.replace(issue, doubt=reason)
        out.append(issue)
    if lang in ("c", "cpp"):
        certain = [i for i, issue in enumerate(out) if not issue.doubt]
        split = split_by_conditionals(data, [out[i] for i in certain], parse)
        for i, s in zip(certain, split, strict=True):
            if s:
                out[i] = dataclasses.replace(out[i], doubt=PREPROCESSOR_REASON)
    return out

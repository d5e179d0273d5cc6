"""The outline of a text file too large to read whole.

Instead of a bare refusal, a whole-file read over the cap answers with a map the model
can navigate by: total lines and bytes, the first lines, and the line numbers of the
top-level structure that is cheap to recognize (definitions in common languages,
Markdown headings). Large files are scanned in one streaming pass with bounded memory:
only the first lines, a prefix of each line, and a bounded list of entries are kept.
"""

from __future__ import annotations

import codecs
import functools
import os
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from steadyhand.fs.reader import read_failed
from steadyhand.protocol.errors import ErrorCode, ToolError
from steadyhand.state.hashing import streaming_hasher
from steadyhand.text.encoding import BinaryContent, Encoding, looks_binary, sniff_encoding
from steadyhand.text.render import TRUNCATION_MARKER

#: How many of the file's first lines the outline shows.
HEAD_LINES = 20
#: How many structure entries are listed (the rest are counted).
MAX_ENTRIES = 300
#: Only this much of each line is kept (for the head) ...
LINE_PREFIX = 2000
#: ... and this much is looked at for structure.
CLASSIFY_CHARS = 240
#: Longest text shown for one entry.
ENTRY_CHARS = 120
CHUNK = 1 << 20

_MARKDOWN = frozenset({".md", ".markdown", ".mdx", ".rmd", ".qmd"})
_PY = frozenset({".py", ".pyi", ".pyw"})
_JS = frozenset({".js", ".jsx", ".mjs", ".cjs", ".ts", ".tsx", ".mts", ".cts"})
_C_LIKE = frozenset(
    {".c", ".h", ".cc", ".cpp", ".cxx", ".hpp", ".hh", ".hxx", ".java", ".cs", ".kt", ".kts"}
    | {".scala", ".swift", ".dart", ".php"}
)

#: Declaration patterns by language, compiled on first use (most servers never outline).
_SOURCES: dict[str, tuple[str, int]] = {
    "python": (r"(?:async\s+def|def|class)\s+\w+", 0),
    "js": (
        r"(?:export\s+(?:default\s+)?)?(?:declare\s+)?(?:abstract\s+)?"
        r"(?:(?:async\s+)?function\*?\s*\w*\s*[(<]|class\s+\w+|interface\s+\w+|"
        r"type\s+\w+\s*[=<]|enum\s+\w+|namespace\s+\w+|module\.exports\b|"
        r"(?:const|let|var)\s+\w+\s*(?::[^=]*)?=\s*(?:async\s*)?(?:function\b|\(|\w+\s*=>))",
        0,
    ),
    "go": (r"(?:func|type)\s+(?:\([^)]*\)\s*)?\w+", 0),
    "rust": (
        r"(?:pub(?:\([^)]*\))?\s+)?(?:async\s+|const\s+|unsafe\s+|extern\s+\"[^\"]*\"\s+)*"
        r"(?:fn|struct|enum|trait|impl|mod|type|union|macro_rules!)[\s<]",
        0,
    ),
    "ruby": (r"(?:class|module|def)\s+\S", 0),
    "shell": (r"(?:function\s+[\w.:-]+|[\w.:-]+\s*\(\s*\))\s*(?:\{|\(|$)", 0),
    "c_like": (
        r"(?:(?:public|private|protected|internal|static|final|abstract|sealed|open|data|"
        r"export|inline|extern|partial|async|override|virtual|const|unsafe)\s+)*"
        r"(?:class|interface|struct|enum|record|object|trait|namespace|fun|func|function|"
        r"impl|extension|protocol|union|typedef)\b"
        r"|[A-Za-z_][\w:<>,*& \t]*[\s*&]\**~?[A-Za-z_][\w:]*\s*\([^;]*$",
        0,
    ),
    "sql": (r"(?i:create|alter)\s+(?i:or\s+replace\s+)?\w+", re.ASCII),
}


@functools.cache
def _pattern(lang: str) -> re.Pattern[str]:
    source, flags = _SOURCES[lang]
    return re.compile(source, flags)


_LANGUAGE_BY_SUFFIX: dict[str, str] = {
    **dict.fromkeys(_PY, "python"),
    **dict.fromkeys(_JS, "js"),
    ".go": "go",
    ".rs": "rust",
    ".rb": "ruby",
    ".rake": "ruby",
    **dict.fromkeys((".sh", ".bash", ".zsh", ".ksh"), "shell"),
    **dict.fromkeys(_C_LIKE, "c_like"),
    ".sql": "sql",
}

_HEADING = re.compile(r"#{1,6}(?:\s|$)")
_FENCE = re.compile(r"(`{3,}|~{3,})")
_C_SKIP = re.compile(r"(?:return|else|if|for|while|switch|case|do|goto|sizeof)\b")


def language_of(path: str) -> str | None:
    """The structure rules for ``path``: a language name, "markdown", or None."""
    suffix = os.path.splitext(path)[1].lower()
    if suffix in _MARKDOWN:
        return "markdown"
    return _LANGUAGE_BY_SUFFIX.get(suffix)


@dataclass(frozen=True, slots=True)
class Entry:
    line: int
    text: str
    kind: str  # "heading" or "definition"

    def as_dict(self) -> dict[str, object]:
        return {"line": self.line, "text": self.text, "kind": self.kind}


@dataclass(slots=True)
class OutlineBuilder:
    """Collects an outline from lines fed one at a time, in bounded memory."""

    language: str | None
    head: list[tuple[str, int]] = field(default_factory=list)  # (prefix, full length)
    entries: list[Entry] = field(default_factory=list)
    more_entries: int = 0
    total_lines: int = 0
    _fence: str | None = None

    def feed(self, line: str, full_length: int) -> None:
        """Take the next line: a prefix of at least ``LINE_PREFIX`` characters (or all of
        it) and the line's full length."""
        self.total_lines += 1
        n = self.total_lines
        if n <= HEAD_LINES:
            self.head.append((line, full_length))
        line = line[:CLASSIFY_CHARS]
        kind = self._classify(line)
        if kind is None:
            return
        if len(self.entries) < MAX_ENTRIES:
            text = line.rstrip()
            if len(text) > ENTRY_CHARS:
                text = text[:ENTRY_CHARS] + "…"
            self.entries.append(Entry(n, text, kind))
        else:
            self.more_entries += 1

    def _classify(self, line: str) -> str | None:
        lang = self.language
        if lang is None or not line or line[0] in " \t":
            return None
        if lang == "markdown":
            fence = _FENCE.match(line)
            if fence is not None:
                mark = fence.group(1)
                if self._fence is None:
                    self._fence = mark[0] * 3
                elif mark.startswith(self._fence):
                    self._fence = None
                return None
            if self._fence is None and _HEADING.match(line):
                return "heading"
            return None
        pattern = _pattern(lang)
        if pattern.match(line) is None:
            return None
        if lang == "c_like" and (_C_SKIP.match(line) or line.rstrip().endswith((";", ","))):
            return None
        return "definition"


@dataclass(frozen=True, slots=True)
class Outline:
    path: str
    size: int
    total_lines: int
    head: list[tuple[str, int]]
    entries: list[Entry]
    more_entries: int
    language: str | None
    #: Set by a streaming scan: the file's hash, mtime and encoding, for the session record.
    hash: str = ""
    mtime_ns: int = 0
    encoding: Encoding | None = None
    line_ending: str = "lf"

    def fields(self) -> dict[str, object]:
        return {
            "type": "outline",
            "path": self.path,
            "size": self.size,
            "total_lines": self.total_lines,
            "head_lines": len(self.head),
            "outline": [e.as_dict() for e in self.entries],
            "outline_more": self.more_entries,
        }

    def render(self, max_line_chars: int) -> str:
        """The outline as text for the model (without the leading sentence)."""
        parts: list[str] = []
        if self.head:
            rows: list[str] = []
            for n, (text, full) in enumerate(self.head, start=1):
                if full > max_line_chars:
                    text = text[:max_line_chars] + TRUNCATION_MARKER.format(n=full - max_line_chars)
                rows.append(f"{n:>6}\t{text}")
            body = "\n".join(rows)
            parts.append(f"First {len(self.head)} line(s):\n{body}")
        if self.entries:
            what = "Headings" if self.language == "markdown" else "Top-level definitions"
            listing = "\n".join(f"{e.line:>6}\t{e.text}" for e in self.entries)
            more = (
                f"\n(and {self.more_entries:,} more not listed; read a range to see them)"
                if self.more_entries
                else ""
            )
            parts.append(f"{what} (line number, then the line):\n{listing}{more}")
        elif self.language is None:
            parts.append("(No structure is detected for this kind of file.)")
        else:
            parts.append("(No top-level definitions or headings were found.)")
        return "\n\n".join(parts)

    def advice(self) -> str:
        if self.entries:
            e = self.entries[min(1, len(self.entries) - 1)]
            return (
                "Read the part you need with offset and limit (for example "
                f"offset={e.line}, limit=200), or search the file for what you need."
            )
        return (
            "Read a part of it with offset and limit (for example offset=1, limit=200), "
            "or search it for what you need."
        )


def outline_of_lines(path: str, lines: Iterable[str], size: int) -> Outline:
    """The outline of text already in memory (its LF-split lines)."""
    b = OutlineBuilder(language_of(path))
    for line in lines:
        b.feed(line[:LINE_PREFIX], len(line))
    return Outline(path, size, b.total_lines, b.head, b.entries, b.more_entries, b.language)


class _NotUtf8(Exception):
    """The text is not valid in its encoding (raised at its first invalid sequence)."""

    def __init__(self, enc: Encoding) -> None:
        super().__init__()
        self.enc = enc


def _stream_lines(
    path: str, fd: int, hasher: object, latin1: bool = False
) -> Iterator[tuple[str, int, Encoding, str]]:
    """Yield (line prefix, line length, encoding, line endings so far) for each line.

    Text without a byte-order mark is decoded as strict UTF-8, or as Latin-1 when
    ``latin1`` is set; the first invalid UTF-8 sequence raises :class:`_NotUtf8`, so the
    caller can start over in Latin-1 as :func:`~steadyhand.text.encoding.decode` would.
    """
    update = hasher.update  # type: ignore[attr-defined]
    decoder: codecs.IncrementalDecoder | None = None
    enc = Encoding("latin-1" if latin1 else "utf-8")
    tail = ""  # the current line's prefix (at most LINE_PREFIX characters)
    tail_len = 0
    pending_cr = False
    saw_lf = saw_crlf = saw_cr = False
    first = True
    has_partial = False

    def style() -> str:
        kinds = [k for k, s in (("lf", saw_lf), ("crlf", saw_crlf), ("cr", saw_cr)) if s]
        return "mixed" if len(kinds) > 1 else kinds[0] if kinds else "none"

    while True:
        chunk = os.read(fd, CHUNK)
        if not chunk:
            break
        update(chunk)
        if first:
            first = False
            try:
                sniffed = sniff_encoding(chunk[:4])
            except BinaryContent as exc:
                raise ToolError(
                    ErrorCode.BINARY, f"{path} is a binary file ({exc}).", path=path
                ) from exc
            if sniffed is not None:
                enc = sniffed
                chunk = chunk[len(sniffed.bom_bytes()) :]
            elif looks_binary(chunk):
                raise ToolError(
                    ErrorCode.BINARY,
                    f"{path} is a binary file; it cannot be read as text.",
                    path=path,
                )
            decoder = codecs.getincrementaldecoder(enc.codec)("strict")
        assert decoder is not None
        try:
            text = decoder.decode(chunk)
        except UnicodeDecodeError as exc:
            raise _NotUtf8(enc) from exc
        if pending_cr:
            text = "\r" + text
            pending_cr = False
        if text.endswith("\r"):
            text = text[:-1]
            pending_cr = True
        if "\r" in text:
            n_crlf = text.count("\r\n")
            saw_crlf = saw_crlf or n_crlf > 0
            saw_cr = saw_cr or text.count("\r") > n_crlf
            saw_lf = saw_lf or text.count("\n") > n_crlf
            text = text.replace("\r\n", "\n").replace("\r", "\n")
        else:
            saw_lf = saw_lf or "\n" in text
        start = 0
        while True:
            nl = text.find("\n", start)
            if nl < 0:
                break
            if tail_len < LINE_PREFIX:
                tail += text[start : min(nl, start + LINE_PREFIX - tail_len)]
            yield tail, tail_len + nl - start, enc, style()
            tail, tail_len, has_partial = "", 0, False
            start = nl + 1
        rest = len(text) - start
        if rest:
            has_partial = True
            if tail_len < LINE_PREFIX:
                tail += text[start : start + LINE_PREFIX - tail_len]
            tail_len += rest
    if decoder is not None:
        try:
            decoder.decode(b"", final=True)
        except UnicodeDecodeError as exc:  # the file ends inside a character
            raise _NotUtf8(enc) from exc
    if pending_cr:
        saw_cr = True
    if pending_cr or has_partial:
        yield tail, tail_len, enc, style()


def _scan(path: str, fd: int, latin1: bool) -> tuple[Any, OutlineBuilder, Encoding, str]:
    hasher = streaming_hasher()
    b = OutlineBuilder(language_of(path))
    enc = Encoding("latin-1" if latin1 else "utf-8")
    style = "none"
    for line, length, line_enc, line_style in _stream_lines(path, fd, hasher, latin1):
        b.feed(line, length)
        enc, style = line_enc, line_style
    return hasher, b, enc, style


def stream_outline(
    path: str, *, links_ok: bool = False, expect: tuple[int, int] | None = None
) -> Outline:
    """Scan a large file once: its outline, plus its hash for the session record (the
    file checked as :func:`steadyhand.fs.reader.read_all` checks it)."""
    from steadyhand.fs.reader import _open

    fd, st = _open(path, links_ok=links_ok, expect=expect)
    try:
        try:
            hasher, b, enc, style = _scan(path, fd, latin1=False)
        except _NotUtf8 as exc:
            if exc.enc.bom:
                raise ToolError(
                    ErrorCode.BINARY,
                    f"{path} is a binary file (invalid {exc.enc.codec} after its byte-order "
                    "mark); it cannot be read or edited as text.",
                    path=path,
                ) from exc
            # Not UTF-8: scanned again from the start as Latin-1, as a whole read would
            # decode it, so the head lines are the text an edit matches.
            os.lseek(fd, 0, os.SEEK_SET)
            hasher, b, enc, style = _scan(path, fd, latin1=True)
    except OSError as exc:
        raise read_failed(path, exc) from exc
    finally:
        os.close(fd)
    return Outline(
        path,
        st.st_size,
        b.total_lines,
        b.head,
        b.entries,
        b.more_entries,
        b.language,
        hasher.hexdigest(),
        st.st_mtime_ns,
        enc,
        style,
    )

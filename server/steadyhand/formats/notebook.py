"""Jupyter notebooks: cells as text for a model, and cell edits that keep the file's bytes.

A notebook is located, not re-serialized: a shallow scan records where each cell and
each of its fields lies in the text, and an edit splices only the spans it changes
(a cell's ``source``, ``outputs`` and ``execution_count``; a whole cell for an insert or
a delete). New JSON is written in the file's own style (indent, separators, key order,
ASCII escaping), so everything the edit does not touch stays byte for byte as it was.
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from steadyhand.text.splices import Splice

NOTEBOOK_SUFFIX = ".ipynb"
CELL_TYPES = ("code", "markdown", "raw")
EditMode = Literal["replace", "insert", "delete"]

#: Longest text shown for one output (head and tail are kept).
OUTPUT_CHARS = 4000
#: Lines of an error traceback shown (the last ones, where the cause is).
TRACEBACK_LINES = 12
#: Outputs of one cell shown in a read, at most (the rest are counted).
MAX_OUTPUTS = 50
_IMAGE_TYPES = ("image/png", "image/jpeg", "image/gif", "image/webp")
_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]")
_SYNTHETIC_ID = re.compile(r"cell-(\d+)")
_DECODER = json.JSONDecoder()


class NotebookError(ValueError):
    """The text is not a notebook Steadyhand can read or edit."""


def is_notebook_path(path: str) -> bool:
    return path.lower().endswith(NOTEBOOK_SUFFIX)


#: What locating the cells of a notebook may cost in memory, at most (its text and the
#: parsed cells together): with the server's own, a read stays within 256 MiB.
PARSE_BUDGET = 160 * 1024 * 1024
#: What locating costs, measured over notebooks of many shapes and rounded up: a cell
#: (its members) some 2.1 KB, each JSON string (a source line, an output's field) some
#: 60 bytes for its object (two quotes: 30 each), each character two bytes (the text, and
#: the decoded values).
_CELL_BYTES = 2200
_QUOTE_BYTES = 32
_CHAR_BYTES = 2
_CELL_KEY = re.compile(r'"cell_type"\s*:')


def parse_cost(text: str) -> tuple[int, int]:
    """How many cells ``text`` seems to hold, and about how many bytes :func:`parse` and
    the text take together (found without parsing: one pass of a regex)."""
    cells = sum(1 for _ in _CELL_KEY.finditer(text))
    return cells, _CHAR_BYTES * len(text) + _CELL_BYTES * cells + _QUOTE_BYTES * text.count('"')


# -- locating cells -------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Member:
    key: str
    key_start: int
    value_start: int
    value_end: int
    value: Any


@dataclass(slots=True)
class CellSpan:
    index: int  # 1-based
    start: int
    end: int
    members: dict[str, Member]

    def get(self, key: str, default: Any = None) -> Any:
        m = self.members.get(key)
        return m.value if m is not None else default

    @property
    def cell_type(self) -> str:
        t = self.get("cell_type")
        return t if isinstance(t, str) else "code"

    @property
    def real_id(self) -> str | None:
        i = self.get("id")
        return i if isinstance(i, str) else None

    @property
    def id(self) -> str:
        return self.real_id or f"cell-{self.index}"

    @property
    def source(self) -> str:
        return join_text(self.get("source", ""))


@dataclass(frozen=True, slots=True)
class Style:
    """How the file writes JSON, so new JSON looks like the old."""

    indent: str | None
    item_sep: str
    key_sep: str
    ensure_ascii: bool
    sort_keys: bool
    key_order: tuple[str, ...]

    def dump(self, value: Any, base: str) -> str:
        """``value`` as JSON in this style, its continuation lines indented by ``base``."""
        text = json.dumps(
            value,
            indent=self.indent,
            separators=(self.item_sep, self.key_sep),
            ensure_ascii=self.ensure_ascii,
            sort_keys=self.sort_keys,
        )
        return text.replace("\n", "\n" + base) if self.indent is not None else text


@dataclass(slots=True)
class Notebook:
    text: str
    root: dict[str, Member]
    cells: list[CellSpan]
    cells_member: Member
    style: Style
    metadata: dict[str, Any] = field(default_factory=dict)

    @property
    def nbformat(self) -> tuple[int, int]:
        major = self.root.get("nbformat")
        minor = self.root.get("nbformat_minor")
        ma = major.value if major is not None and isinstance(major.value, int) else 4
        mi = minor.value if minor is not None and isinstance(minor.value, int) else 0
        return ma, mi

    @property
    def uses_ids(self) -> bool:
        return self.nbformat >= (4, 5) or any(c.real_id for c in self.cells)

    @property
    def language(self) -> str:
        info = self.metadata.get("language_info")
        if isinstance(info, dict) and isinstance(info.get("name"), str):
            return str(info["name"])
        ks = self.metadata.get("kernelspec")
        if isinstance(ks, dict) and isinstance(ks.get("language"), str):
            return str(ks["language"])
        return "unknown"

    def duplicate_ids(self) -> frozenset[str]:
        """Real ids that more than one cell carries."""
        seen: set[str] = set()
        dups: set[str] = set()
        for c in self.cells:
            rid = c.real_id
            if rid is not None:
                (dups if rid in seen else seen).add(rid)
        return frozenset(dups)

    def lookup(self, name: str) -> CellRef:
        """The cells ``name`` names: every cell with that real id, else (for ``cell-N``)
        the cell at position N. The caller refuses a name that matches several cells, so
        an edit never lands on a cell the model did not single out."""
        by_id = tuple(c for c in self.cells if c.real_id == name)
        if by_id:
            return CellRef(by_id, by_position=False)
        n = position_of(name)
        if n is not None and 1 <= n <= len(self.cells):
            return CellRef((self.cells[n - 1],), by_position=True)
        return CellRef((), by_position=n is not None)

    def find(self, cell_id: str) -> CellSpan | None:
        """The one cell ``cell_id`` names, or None (when it names none, or several)."""
        ref = self.lookup(cell_id)
        return ref.cells[0] if len(ref.cells) == 1 else None


#: A position with more digits than this is past the end of any notebook.
_MAX_POSITION_DIGITS = 12


def position_of(name: str) -> int | None:
    """N for a positional name ``cell-N`` (one past any notebook's end for a number too
    long for one)."""
    m = _SYNTHETIC_ID.fullmatch(name.strip())
    if m is None:
        return None
    digits = m.group(1)
    return int(digits) if len(digits) <= _MAX_POSITION_DIGITS else 10**_MAX_POSITION_DIGITS


def named_by_position(cell: CellSpan, duplicates: frozenset[str]) -> bool:
    """Whether the only name that singles ``cell`` out is its position (``cell-N``): it has
    no id, or shares its id with another cell. Such names move when cells are inserted or
    deleted before it."""
    rid = cell.real_id
    return rid is None or rid in duplicates


@dataclass(frozen=True, slots=True)
class CellRef:
    """What a cell name matched, and whether it named a position."""

    cells: tuple[CellSpan, ...]
    by_position: bool


def join_text(value: Any) -> str:
    if isinstance(value, list):
        return "".join(v for v in value if isinstance(v, str))
    return value if isinstance(value, str) else ""


def _ws(s: str, i: int) -> int:
    n = len(s)
    while i < n and s[i] in " \t\r\n":
        i += 1
    return i


def _expect(s: str, i: int, ch: str) -> int:
    if i >= len(s) or s[i] != ch:
        got = repr(s[i]) if i < len(s) else "the end"
        raise NotebookError(f"expected {ch!r} at character {i}, found {got}")
    return i + 1


def _value(s: str, i: int) -> tuple[Any, int]:
    try:
        return _DECODER.raw_decode(s, i)
    except json.JSONDecodeError as exc:
        raise NotebookError(f"invalid JSON: {exc.msg} at character {exc.pos}") from exc
    except RecursionError as exc:
        raise NotebookError(f"JSON nested too deep at character {i}") from exc
    except ValueError as exc:  # an integer too long to convert (over 4,300 digits)
        raise NotebookError(f"a number too long to read at character {i}") from exc


def _members(
    s: str, i: int, scan: dict[str, Callable[[str, int], tuple[Any, int]]] | None = None
) -> tuple[dict[str, Member], int]:
    """Members of the object at ``i`` and the index after its ``}``. Values are decoded
    by the JSON module, except those of keys in ``scan``, which their scanner reads."""
    i = _expect(s, _ws(s, i), "{")
    out: dict[str, Member] = {}
    i = _ws(s, i)
    if i < len(s) and s[i] == "}":
        return out, i + 1
    while True:
        key_start = i
        key, i = _value(s, i)
        if not isinstance(key, str):
            raise NotebookError(f"an object key at character {key_start} is not a string")
        i = _expect(s, _ws(s, i), ":")
        vstart = _ws(s, i)
        scanner = scan.get(key) if scan is not None else None
        value, i = scanner(s, vstart) if scanner is not None else _value(s, vstart)
        out[key] = Member(key, key_start, vstart, i, value)
        i = _ws(s, i)
        if i < len(s) and s[i] == ",":
            i = _ws(s, i + 1)
            continue
        i = _expect(s, i, "}")
        return out, i


def _scan_cells(s: str, i: int) -> tuple[list[CellSpan], int]:
    cells: list[CellSpan] = []
    i = _ws(s, _expect(s, i, "["))
    if i < len(s) and s[i] == "]":
        return cells, i + 1
    while True:
        start = i
        members, i = _members(s, i)
        cells.append(CellSpan(len(cells) + 1, start, i, members))
        i = _ws(s, i)
        if i < len(s) and s[i] == ",":
            i = _ws(s, i + 1)
            continue
        return cells, _expect(s, i, "]")


def parse(text: str) -> Notebook:
    """Locate the cells of a v4 notebook, or raise :class:`NotebookError`."""
    root, end = _members(text, 0, scan={"cells": _scan_cells})
    if _ws(text, end) != len(text):
        raise NotebookError(f"extra text after the notebook's JSON at character {end}")
    major = root.get("nbformat")
    if major is None or not isinstance(major.value, int):
        raise NotebookError("no `nbformat` version: this is not a Jupyter notebook")
    if major.value < 4:
        raise NotebookError(
            f"notebook format version {major.value} is too old (version 4 is supported)"
        )
    member = root.get("cells")
    if member is None or not isinstance(member.value, list):
        raise NotebookError("no `cells` list")
    cells: list[CellSpan] = member.value
    meta = root.get("metadata")
    metadata = meta.value if meta is not None and isinstance(meta.value, dict) else {}
    return Notebook(text, root, cells, member, _style(text, root, cells), metadata)


def _line_indent(s: str, pos: int) -> str:
    start = s.rfind("\n", 0, pos) + 1
    j = start
    while j < pos and s[j] in " \t":
        j += 1
    return s[start:j]


def _style(text: str, root: dict[str, Member], cells: list[CellSpan]) -> Style:
    members = sorted(root.values(), key=lambda m: m.key_start)
    first = members[0] if members else None
    indent: str | None = None
    key_sep = ": "
    item_sep = ","
    if first is not None:
        if "\n" in text[: first.key_start]:
            indent = _line_indent(text, first.key_start) or None
        key_end = _value(text, first.key_start)[1]
        between = text[key_end : first.value_start]
        if "\n" not in between:
            key_sep = between
        if indent is None and len(members) > 1:
            gap = text[first.value_end : members[1].key_start]
            item_sep = gap if "\n" not in gap else ", "
    non_ascii = any(ord(ch) > 127 for ch in text)
    # An escaped character that an ensure_ascii=False writer leaves raw (DEL or above).
    escaped = re.search(r"\\u(?:007[fF]|00[89a-fA-F]|0[1-9a-fA-F]|[1-9a-fA-F])", text)
    ensure_ascii = not non_ascii and escaped is not None
    orders = [list(c.members) for c in cells]
    sort_keys = all(o == sorted(o) for o in orders) if orders else True
    key_order = tuple(orders[0]) if orders else ()
    return Style(indent, item_sep, key_sep, ensure_ascii, sort_keys, key_order)


# -- rendering for a model ------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class OutputImage:
    cell_index: int
    cell_id: str
    media_type: str
    data_b64: str


def _cap(text: str, limit: int = OUTPUT_CHARS) -> str:
    if len(text) <= limit:
        return text
    half = limit // 2
    cut = len(text) - 2 * half
    return f"{text[:half]}\n… [{cut:,} characters cut] …\n{text[-half:]}"


def _traceback(lines: Any) -> str:
    if not isinstance(lines, list):
        return ""
    text = _ANSI.sub("", "\n".join(str(x) for x in lines))
    rows = text.split("\n")
    if len(rows) <= TRACEBACK_LINES:
        return text
    return f"… [{len(rows) - TRACEBACK_LINES} traceback lines cut] …\n" + "\n".join(
        rows[-TRACEBACK_LINES:]
    )


def render_outputs(cell: CellSpan, want_images: bool) -> tuple[list[str], list[OutputImage]]:
    """Text for each output of a code cell, and image outputs (only when asked)."""
    outs = cell.get("outputs", [])
    parts: list[str] = []
    images: list[OutputImage] = []
    if not isinstance(outs, list):
        return parts, images
    for shown, out in enumerate(outs):
        if shown == MAX_OUTPUTS:
            parts.append(f"… [{len(outs) - shown:,} more outputs not shown] …")
            break
        if not isinstance(out, dict):
            continue
        kind = out.get("output_type")
        if kind == "stream":
            name = out.get("name", "stdout")
            text = _ANSI.sub("", join_text(out.get("text", ""))).rstrip("\n")
            parts.append(f"[{name}]\n{_cap(text)}")
        elif kind in ("execute_result", "display_data"):
            data = out.get("data", {})
            if not isinstance(data, dict):
                continue
            label = "result" if kind == "execute_result" else "display"
            lines: list[str] = []
            for media in _IMAGE_TYPES:
                b64 = data.get(media)
                if b64 is None:
                    continue
                b64 = join_text(b64).replace("\n", "")
                size = len(b64) * 3 // 4
                if want_images:
                    images.append(OutputImage(cell.index, cell.id, media, b64))
                    lines.append(f"({media} output, {size:,} bytes: delivered in `images`)")
                else:
                    lines.append(
                        f"({media} output, {size:,} bytes, not shown; read with "
                        "include_images=true to receive it)"
                    )
                break
            plain = data.get("text/plain")
            if plain is not None:
                lines.append(_cap(join_text(plain).rstrip("\n")))
            others = sorted(
                k for k in data if k not in ("text/plain", "image/svg+xml", *_IMAGE_TYPES)
            )
            if "image/svg+xml" in data:
                others.insert(0, "image/svg+xml")
            if others and plain is None:
                lines.append(f"({', '.join(others)} output, not shown)")
            parts.append(f"[{label}]\n" + "\n".join(lines))
        elif kind == "error":
            head = f"{out.get('ename', 'Error')}: {out.get('evalue', '')}"
            tb = _traceback(out.get("traceback"))
            parts.append(f"[error] {head}" + (f"\n{tb}" if tb else ""))
    return parts, images


def output_text(cell: CellSpan | None) -> str:
    """All the text a cell's outputs show, whole and decoded (streams, ``text/*`` and
    JSON data, errors with their tracebacks), one output after another: what a scan for
    credentials reads. Images and other binary data are left out."""
    if cell is None:
        return ""
    outs = cell.get("outputs", [])
    if not isinstance(outs, list):
        return ""
    parts: list[str] = []
    for out in outs:
        if not isinstance(out, dict):
            continue
        if "text" in out:
            parts.append(join_text(out.get("text")))
        data = out.get("data")
        if isinstance(data, dict):
            for media, value in data.items():
                if not isinstance(media, str):
                    continue
                if media.startswith("text/") or media.endswith("json"):
                    if isinstance(value, dict | list) and media.endswith("json"):
                        parts.append(json.dumps(value, ensure_ascii=False, indent=1))
                    else:
                        parts.append(join_text(value))
        if out.get("output_type") == "error":
            parts.append(f"{out.get('ename', '')}: {out.get('evalue', '')}")
            tb = out.get("traceback")
            if isinstance(tb, list):
                parts.append(_ANSI.sub("", "\n".join(str(x) for x in tb)))
    return "\n".join(p for p in parts if p)


def render_cell(cell: CellSpan, want_images: bool) -> tuple[str, list[OutputImage]]:
    attrs = f'index="{cell.index}" id="{cell.id}" type="{cell.cell_type}"'
    count = cell.get("execution_count")
    if cell.cell_type == "code" and isinstance(count, int):
        attrs += f' execution_count="{count}"'
    source = cell.source
    end = "" if source.endswith("\n") or not source else "\n"
    text = f"<cell {attrs}>\n{source}{end}</cell>"
    if cell.cell_type != "code":
        return text, []
    parts, images = render_outputs(cell, want_images)
    if parts:
        text += f'\n<outputs index="{cell.index}">\n' + "\n".join(parts) + "\n</outputs>"
    return text, images


def cell_summary(cell: CellSpan) -> dict[str, Any]:
    outs = cell.get("outputs", [])
    return {
        "index": cell.index,
        "id": cell.id,
        "cell_type": cell.cell_type,
        "execution_count": cell.get("execution_count"),
        "num_outputs": len(outs) if isinstance(outs, list) else 0,
    }


# -- editing --------------------------------------------------------------------------


def split_source(source: str) -> list[str]:
    """Source text as nbformat stores it: split as ``str.splitlines`` splits, each piece
    keeping its line break (joining the pieces gives the source back exactly)."""
    return source.splitlines(keepends=True)


def _source_value(source: str, like: Any) -> Any:
    return source if isinstance(like, str) else split_source(source)


def _new_id(nb: Notebook) -> str:
    taken = {c.real_id for c in nb.cells}
    while True:
        candidate = uuid.uuid4().hex[:8]
        if candidate not in taken:
            return candidate


#: Keys the nbformat v4 schema allows in a cell of each type.
_CELL_KEYS = {
    "code": frozenset({"id", "cell_type", "metadata", "execution_count", "outputs", "source"}),
    "markdown": frozenset({"id", "cell_type", "metadata", "attachments", "source"}),
    "raw": frozenset({"id", "cell_type", "metadata", "attachments", "source"}),
}
_KNOWN_KEYS = frozenset().union(*_CELL_KEYS.values())


def dropped_keys(cell: CellSpan, cell_type: str) -> tuple[str, ...]:
    """Keys of ``cell`` a cell of ``cell_type`` may not have (they go with the type
    change). Outputs and the execution count are reported as cleared, not here."""
    allowed = _CELL_KEYS.get(cell_type, _KNOWN_KEYS)
    return tuple(
        k
        for k in cell.members
        if k in _KNOWN_KEYS and k not in allowed and k not in ("outputs", "execution_count")
    )


def _new_cell(
    nb: Notebook, cell_type: str, source: str, keep: CellSpan | None = None
) -> dict[str, Any]:
    values: dict[str, Any] = {"cell_type": cell_type}
    cid = keep.real_id if keep is not None else None
    if cid is None and keep is None and nb.uses_ids:
        cid = _new_id(nb)
    if cid is not None:
        values["id"] = cid
    meta = keep.get("metadata") if keep is not None else None
    values["metadata"] = meta if isinstance(meta, dict) else {}
    if cell_type == "code":
        values["execution_count"] = None
        values["outputs"] = []
    values["source"] = split_source(source)
    if keep is not None:
        # A type change keeps what the new type may hold (a markdown cell's attachments
        # stay with a raw cell), and keys nbformat does not know: they are the user's.
        allowed = _CELL_KEYS.get(cell_type, _KNOWN_KEYS)
        for key, m in keep.members.items():
            if key not in values and (key in allowed or key not in _KNOWN_KEYS):
                values[key] = m.value
    if nb.style.sort_keys:
        return values
    order = [k for k in nb.style.key_order if k in values]
    order += [k for k in values if k not in order]
    return {k: values[k] for k in order}


def _cell_base(nb: Notebook) -> str:
    if nb.cells:
        return _line_indent(nb.text, nb.cells[0].start)
    cells_key_indent = _line_indent(nb.text, nb.cells_member.key_start)
    return cells_key_indent + (nb.style.indent or "")


def _between_cells(nb: Notebook) -> str:
    if len(nb.cells) >= 2:
        return nb.text[nb.cells[0].end : nb.cells[1].start]
    if nb.style.indent is not None:
        return ",\n" + _cell_base(nb)
    return nb.style.item_sep


@dataclass(frozen=True, slots=True)
class CellEdit:
    """The splices of one notebook edit, and what it did."""

    splices: tuple[Splice, ...]
    index: int  # 1-based index of the cell concerned (after the edit for inserts)
    cell_id: str
    cell_type: str
    old_source: str
    new_source: str
    cleared_outputs: bool = False
    #: Keys the cell lost because its new type may not have them (e.g. ``attachments``).
    dropped: tuple[str, ...] = ()


def replace_cell(nb: Notebook, cell: CellSpan, source: str, cell_type: str | None) -> CellEdit:
    text = nb.text
    if cell_type is not None and cell_type != cell.cell_type:
        values = _new_cell(nb, cell_type, source, keep=cell)
        new = nb.style.dump(values, _line_indent(text, cell.start))
        cleared = bool(cell.get("outputs"))
        return CellEdit(
            (Splice(cell.start, cell.end, new),),
            cell.index,
            cell.id,
            cell_type,
            cell.source,
            source,
            cleared,
            dropped_keys(cell, cell_type),
        )
    splices: list[Splice] = []
    src = cell.members.get("source")
    if src is None:
        raise NotebookError(f"cell {cell.id} has no `source` field")
    value = _source_value(source, src.value)
    dumped = nb.style.dump(value, _line_indent(text, src.key_start))
    splices.append(Splice(src.value_start, src.value_end, dumped))
    cleared = False
    if cell.cell_type == "code":
        outs = cell.members.get("outputs")
        if outs is not None and outs.value != []:
            splices.append(Splice(outs.value_start, outs.value_end, "[]"))
            cleared = True
        count = cell.members.get("execution_count")
        if count is not None and count.value is not None:
            splices.append(Splice(count.value_start, count.value_end, "null"))
            cleared = True
    splices.sort(key=lambda sp: sp.start)
    return CellEdit(
        tuple(splices), cell.index, cell.id, cell.cell_type, cell.source, source, cleared
    )


def insert_cell(nb: Notebook, after: CellSpan | None, source: str, cell_type: str) -> CellEdit:
    values = _new_cell(nb, cell_type, source)
    base = _cell_base(nb)
    new = nb.style.dump(values, base)
    cid = values.get("id")
    index = after.index + 1 if after is not None else 1
    shown_id = cid if isinstance(cid, str) else f"cell-{index}"
    if not nb.cells:
        m = nb.cells_member
        close = _line_indent(nb.text, m.key_start)
        body = f"[\n{base}{new}\n{close}]" if nb.style.indent is not None else f"[{new}]"
        sp = Splice(m.value_start, m.value_end, body)
    elif after is None:
        sp = Splice(nb.cells[0].start, nb.cells[0].start, new + _between_cells(nb))
    else:
        sp = Splice(after.end, after.end, _between_cells(nb) + new)
    return CellEdit((sp,), index, shown_id, cell_type, "", source)


def delete_cell(nb: Notebook, cell: CellSpan) -> CellEdit:
    cells = nb.cells
    i = cell.index - 1
    if len(cells) == 1:
        m = nb.cells_member
        sp = Splice(m.value_start, m.value_end, "[]")
    elif i + 1 < len(cells):
        sp = Splice(cell.start, cells[i + 1].start, "")
    else:
        sp = Splice(cells[i - 1].end, cell.end, "")
    return CellEdit((sp,), cell.index, cell.id, cell.cell_type, cell.source, "")

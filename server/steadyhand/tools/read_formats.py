"""Reading files that are more than plain text: notebooks, images, PDFs, and the outline
of text files too large to read whole.

:func:`read_special` is called by the ``read`` tool before its text path: it answers for
a notebook, an image or a PDF, and returns None for everything else. Every answer keeps
the session's record of what the agent saw (hash, shown cells or pages) by the read
kernel's rule (:mod:`steadyhand.tools.seen`), so the read-before-write and staleness
rules hold for these files too.
"""

from __future__ import annotations

import asyncio
import dataclasses
import os

from steadyhand.context import ToolContext
from steadyhand.documents.snapshot import Snapshot
from steadyhand.formats import image as image_fmt
from steadyhand.formats import notebook as nb_fmt
from steadyhand.formats import outline as outline_fmt
from steadyhand.formats import pdf as pdf_fmt
from steadyhand.formats import sandbox
from steadyhand.fs.checked_open import identity, open_checked
from steadyhand.guards.secrets import notebook_read_note
from steadyhand.paths.resolve import ResolvedPath
from steadyhand.protocol.errors import ErrorCode, ToolError
from steadyhand.protocol.params import ReadParams
from steadyhand.protocol.results import Result, success
from steadyhand.state.file_state import FileRecord, Range
from steadyhand.state.hashing import content_hash
from steadyhand.text.lines import line_ending_name
from steadyhand.text.render import estimate_tokens
from steadyhand.tools.records import file_unchanged
from steadyhand.tools.seen import ReadKey, disk_record, seen_bytes, seen_text
from steadyhand.tools.suggest import not_found

IMAGE_SUFFIXES = frozenset({".png", ".jpg", ".jpeg", ".gif", ".webp"})
PDF_SUFFIX = ".pdf"
#: Image outputs delivered by one notebook read, at most.
MAX_NOTEBOOK_IMAGES = 8
#: Cells shown by one notebook read, at most (each has an entry in ``cells``).
MAX_CELLS = 500


def kind_by_name(path: str) -> str | None:
    suffix = os.path.splitext(path)[1].lower()
    if suffix == nb_fmt.NOTEBOOK_SUFFIX:
        return "notebook"
    if suffix in IMAGE_SUFFIXES:
        return "image"
    if suffix == PDF_SUFFIX:
        return "pdf"
    return None


#: How many first bytes :func:`kind_by_head` looks at.
HEAD_BYTES = 1024


def kind_by_head(head: bytes) -> str | None:
    """``image`` or ``pdf`` from a file's first bytes (its magic), else None."""
    if image_fmt.sniff(head[:HEAD_BYTES]) is not None:
        return "image"
    if head.startswith(pdf_fmt.MAGIC):
        return "pdf"
    return None


def _sniff(ctx: ToolContext, rp: ResolvedPath) -> str | None:
    """``image`` or ``pdf`` from the first bytes of the regular file resolved, never
    blocking and never opening anything else put in its place."""
    try:
        fd, _ = open_checked(rp.path, links_ok=ctx.roots.allow_hard_links, expect=identity(rp.stat))
    except (OSError, ToolError):
        return None  # the read that follows says what it is
    try:
        head = os.read(fd, HEAD_BYTES)
    except OSError:
        return None
    finally:
        os.close(fd)
    return kind_by_head(head)


async def read_special(ctx: ToolContext, p: ReadParams, rp: ResolvedPath) -> Result | None:
    """The answer for a notebook, image or PDF; None when ``read`` should treat the file
    as text."""
    path = rp.path
    buffer = ctx.world.current(path)
    kind = kind_by_name(path)
    sniffed = False
    if kind is None and buffer is None and rp.stat is not None and rp.stat.st_size > 0:
        kind = _sniff(ctx, rp)
        sniffed = kind is not None
    if kind is None:
        if p.pages is not None:
            raise ToolError(
                ErrorCode.WRONG_TOOL,
                f"`pages` selects pages of a PDF, and {path} is not a PDF. Read it without "
                "`pages` (offset and limit choose lines).",
                path=path,
            )
        return None
    if kind == "notebook":
        return await _read_notebook(ctx, p, rp)
    if buffer is not None:
        return None  # an image or PDF open as text in the editor: the text path decides
    size = rp.stat.st_size if rp.stat is not None else 0
    cap = ctx.settings.max_document_bytes
    if size > cap:
        raise ToolError(
            ErrorCode.TOO_LARGE,
            f"{path} is {size:,} bytes, over the {cap:,}-byte limit for reading a "
            f"{'PDF' if kind == 'pdf' else 'image'}. Ask the user for a smaller version, or "
            "raise the maxDocumentBytes setting.",
            path=path,
            size=size,
        )
    if kind == "image":
        try:
            return await _read_image(ctx, p, rp)
        except ToolError as err:
            if sniffed and err.code is ErrorCode.UNREADABLE:
                return None  # looked like an image but is not one: a binary file
            raise
    try:
        return await _read_pdf(ctx, p, rp)
    except ToolError as err:
        if sniffed and err.fields.get("reason") == "corrupt":
            return None
        raise


# -- bookkeeping shared by images and PDFs ---------------------------------------------


def _binary_record(
    path: str,
    digest: str,
    st: os.stat_result,
    parts: int,
    shown: tuple[Range, ...],
    key: ReadKey | None,
) -> FileRecord:
    return disk_record(
        path,
        digest,
        st.st_size,
        st.st_mtime_ns,
        encoding="binary",
        line_ending="none",
        total=parts,
        shown=shown,
        key=key,
    )


def _ignored(p: ReadParams, *names: str) -> str:
    given = [n for n in names if getattr(p, n) not in (None, False)]
    if not given:
        return ""
    listed = " and ".join(f"`{n}`" for n in given)
    verb = "does" if len(given) == 1 else "do"
    return f" ({listed} {verb} not apply to this file and was ignored.)"


# -- images -------------------------------------------------------------------------


def _budget(ctx: ToolContext) -> image_fmt.Budget:
    s = ctx.settings
    return image_fmt.Budget(s.image_max_pixels, s.image_max_dimension, s.image_max_bytes)


def _over_limit(over: sandbox.OverLimit, what: str, advice: str, **fields: object) -> ToolError:
    """The ``too_large`` refusal of a decoding stopped at its time or memory bound."""
    if over.what == "time":
        bound = f"did not finish within the {over.seconds:g}-second limit"
        more: dict[str, object] = {"reason": "time_limit", "limit_seconds": over.seconds}
    else:
        bound = f"needed more than the {over.memory_bytes >> 20} MiB memory limit"
        more = {"reason": "memory_limit", "limit_bytes": over.memory_bytes}
    return ToolError(
        ErrorCode.TOO_LARGE, f"{what} {bound}, so it was stopped. {advice}", **fields, **more
    )


def _decoder_failed(path: str, what: str, exc: sandbox.DecoderFailed) -> ToolError:
    return ToolError(
        ErrorCode.UNREADABLE,
        f"{path} could not be read as {what} ({exc}). Check the file, or ask the user for a "
        "working copy.",
        path=path,
        reason="decoder_failed",
    )


_SMALLER_IMAGE = "Ask the user for a smaller version, or downscale it with an image tool first."


def _decode_images(
    ctx: ToolContext, items: list[tuple[str, bytes]]
) -> list[image_fmt.DeliveredImage | ToolError]:
    """Each image of ``items`` (a name for messages, its bytes) as it should reach the
    model, or why not: decoded in one bounded decoding process."""
    b = _budget(ctx)
    params = {
        "items": [{"path": name, "size": len(data)} for name, data in items],
        "budget": [b.max_pixels, b.max_dimension, b.max_bytes],
    }
    answers = sandbox.run("images", params, b"".join(data for _, data in items))
    out: list[image_fmt.DeliveredImage | ToolError] = []
    try:
        for (name, _), answer in zip(items, answers, strict=True):
            if "image" in answer:
                out.append(image_fmt.DeliveredImage.from_wire(answer["image"]))
            elif "error" in answer:
                out.append(sandbox.refusal(answer["error"]))
            else:
                over = sandbox.OverLimit("memory", sandbox.SECONDS, sandbox.MEMORY_BYTES)
                out.append(_over_limit(over, f"Decoding {name}", _SMALLER_IMAGE, path=name))
    except (KeyError, TypeError, ValueError) as exc:
        raise sandbox.DecoderFailed(f"a malformed answer: {exc}") from None
    return out


def _decode_image(ctx: ToolContext, path: str, data: bytes) -> image_fmt.DeliveredImage:
    try:
        (answer,) = _decode_images(ctx, [(path, data)])
    except sandbox.OverLimit as over:
        raise _over_limit(over, f"Decoding {path}", _SMALLER_IMAGE, path=path) from None
    except sandbox.DecoderFailed as exc:
        raise _decoder_failed(path, "an image", exc) from None
    if isinstance(answer, ToolError):
        raise answer
    return answer


async def _read_image(ctx: ToolContext, p: ReadParams, rp: ResolvedPath) -> Result:
    path = rp.path
    async with ctx.locks.hold(path):
        raw = await asyncio.to_thread(ctx.read_raw, path, expect=identity(rp.stat))
    digest = content_hash(raw.data)
    seen = seen_bytes(ctx, p.session, path, digest)
    key: ReadKey = (None, None)
    if seen.again(key):
        return file_unchanged(path, 1, {"path": path, "size": raw.st.st_size}, what="this part")
    img = await asyncio.to_thread(_decode_image, ctx, path, raw.data)
    seen.store(_binary_record(path, digest, raw.st, 1, ((1, 1),), key))
    message = (
        f"Image {path}: {img.original_format}, {img.original_width}×{img.original_height} "
        f"pixels, {img.original_bytes:,} bytes."
    )
    if img.resized:
        message += (
            f" Downscaled to {img.width}×{img.height} to fit the image budget and delivered as "
            f"{img.media_type} ({len(img.data):,} bytes)"
        )
        if img.frames > 1:
            message += f", first of its {img.frames} frames"
        message += "."
    elif img.reencoded:
        message += (
            f" Re-encoded at its own size as {img.media_type} ({len(img.data):,} bytes) to "
            "fit the image budget."
        )
    else:
        message += f" Delivered as it is ({img.media_type})."
    message += " The image is in the result's `data` field (base64)."
    message += _ignored(p, "offset", "limit", "pages", "include_images")
    return success(
        message,
        type="image",
        path=path,
        **img.fields(),
        original_bytes=img.original_bytes,
        bytes=len(img.data),
        frames=img.frames,
    )


# -- PDFs ---------------------------------------------------------------------------


def _pdf_text(
    ctx: ToolContext, path: str, data: bytes, spec: str | None
) -> tuple[int, list[pdf_fmt.PageText]]:
    """The page count and the text of the pages ``spec`` names, extracted in a bounded
    decoding process."""
    s = ctx.settings
    params = {
        "path": path,
        "pages": spec,
        "max_pages": s.pdf_max_pages,
        # one page is never shown longer than one read holds
        "text_cap": max(4 * s.max_read_tokens, s.max_read_bytes) + 1024,
    }
    try:
        answer = sandbox.run("pdf", params, data)
    except sandbox.OverLimit as over:
        raise _pdf_over_limit(path, spec, over) from None
    except sandbox.DecoderFailed as exc:
        raise _decoder_failed(path, "a PDF", exc) from None
    try:
        pages = [pdf_fmt.PageText.from_wire(p) for p in answer["pages"]]
        return int(answer["count"]), pages
    except (KeyError, TypeError, ValueError) as exc:
        raise _decoder_failed(path, "a PDF", sandbox.DecoderFailed(str(exc))) from None


def _pdf_over_limit(path: str, spec: str | None, over: sandbox.OverLimit) -> ToolError:
    """The refusal of a PDF read stopped at its bound, with the pages it had read by then
    and a range that may fit."""
    numbers: list[int] = []
    done: list[int] = []
    count: int | None = None
    for message in over.progress:
        if "numbers" in message:
            numbers = [int(n) for n in message["numbers"]]
            count = int(message["count"])
        elif "done" in message:
            done.append(int(message["done"]))
    which = f"pages {spec!r}" if spec is not None else "the pages"
    what = f"Reading {which} of {path}"
    if done:
        first, last = done[0], done[-1]
        if len(done) == 1:
            span = f"{first}"
            what += f" (page {span} was read in time)"
        else:
            contiguous = done == list(range(first, last + 1))
            span = f"{first}-{last}" if contiguous else ",".join(map(str, done))
            what += f" (pages {span} were read in time)"
        advice = (
            f'Read fewer pages at once, for example pages="{span}", or ask the user for a '
            "text version."
        )
    elif numbers and len(numbers) > 1:
        advice = (
            f'Read fewer pages at once, for example pages="{numbers[0]}", or ask the user for '
            "a text version."
        )
    else:
        advice = "Ask the user for a text version of the PDF."
    fields: dict[str, object] = {"path": path}
    if count is not None:
        fields["num_pages"] = count
    return _over_limit(over, what, advice, **fields)


async def _read_pdf(ctx: ToolContext, p: ReadParams, rp: ResolvedPath) -> Result:
    s = ctx.settings
    path = rp.path
    async with ctx.locks.hold(path):
        raw = await asyncio.to_thread(ctx.read_raw, path, expect=identity(rp.stat))
    digest = content_hash(raw.data)
    seen = seen_bytes(ctx, p.session, path, digest)
    count, pages = await asyncio.to_thread(_pdf_text, ctx, path, raw.data, p.pages)
    numbers = [pg.number for pg in pages]
    contiguous = bool(numbers) and numbers == list(range(numbers[0], numbers[-1] + 1))
    key: ReadKey | None = (numbers[0], numbers[-1]) if contiguous else None
    fields: dict[str, object] = {"path": path, "num_pages": count}
    if key is not None and seen.again(key):
        return file_unchanged(path, numbers[0], fields, what="this part")
    if not pages:
        seen.store(_binary_record(path, digest, raw.st, count, seen.shown(), None))
        return success(
            f"{path} has only {count} page(s), so pages={p.pages!r} names none of them. "
            f"Ask for pages between 1 and {count}.",
            type="pdf",
            pages=[],
            **fields,
        )
    body = pdf_fmt.render(pages, count)
    tokens = estimate_tokens(body)
    if tokens > s.max_read_tokens and len(pages) == 1:
        # One page over the limit cannot be read in fewer pages: its text is cut.
        page = pages[0]
        room = max(1, 4 * s.max_read_tokens - 256)  # the page's head line and the marker
        cut = _cut_text(page.text, room, s.max_read_bytes, "page", total=page.length)
        pages = [dataclasses.replace(page, text=cut)]
        body = pdf_fmt.render(pages, count)
        tokens = estimate_tokens(body)
    if tokens > s.max_read_tokens:
        fit = max(1, len(pages) * s.max_read_tokens // tokens)
        first = numbers[0]
        some = f"{first}" if fit == 1 else f"{first}-{first + fit - 1}"
        raise ToolError(
            ErrorCode.TOO_LARGE,
            f"The text of {len(pages)} page(s) of {path} is about {tokens:,} tokens, over the "
            f"{s.max_read_tokens:,}-token limit. Read fewer pages at once, for example "
            f'pages="{some}".',
            path=path,
            num_pages=count,
        )
    shown = seen.shown(*((n, n) for n in numbers))
    seen.store(_binary_record(path, digest, raw.st, count, shown, key))
    notes: list[str] = []
    if numbers[-1] < count and contiguous:
        notes.append(
            f"(Showing pages {numbers[0]}-{numbers[-1]} of {count}. To read on, call read "
            f'with pages="{numbers[-1] + 1}-{min(count, numbers[-1] + s.pdf_max_pages)}".)'
        )
    if not any(pg.has_text for pg in pages):
        if any(pg.images for pg in pages):
            notes.append(
                "(None of these pages has a text layer: the PDF seems to be scanned images. "
                "Its text needs OCR; ask the user for a text version.)"
            )
        else:
            notes.append("(None of these pages holds any text.)")
    head = f"{path}: PDF, {count} page(s)."
    tail = (" " + " ".join(notes)) if notes else ""
    message = f"{head}\n\n{body}\n\n{tail.strip()}" if notes else f"{head}\n\n{body}"
    message += _ignored(p, "offset", "limit", "include_images")
    return success(
        message,
        type="pdf",
        pages=[
            {"page": pg.number, "chars": pg.length, "has_text": pg.has_text, "images": pg.images}
            for pg in pages
        ],
        **fields,
    )


# -- notebooks ----------------------------------------------------------------------


async def _read_notebook(ctx: ToolContext, p: ReadParams, rp: ResolvedPath) -> Result | None:
    s = ctx.settings
    path = rp.path
    async with ctx.locks.hold(path):
        buffer = ctx.world.current(path)
        if buffer is None:
            # the size resolving found, of the very file read below (``expect``)
            st = rp.stat
            if st is None:
                raise not_found(path)
            if st.st_size > s.max_document_bytes:
                raise ToolError(
                    ErrorCode.TOO_LARGE,
                    f"{path} is {st.st_size:,} bytes, over the {s.max_document_bytes:,}-byte "
                    "limit for reading a notebook. Clear its outputs (for example with "
                    "`jupyter nbconvert --clear-output`) or raise the maxDocumentBytes setting.",
                    path=path,
                    size=st.st_size,
                )
        snap = buffer if buffer is not None else ctx.snapshot(path, expect=identity(rp.stat))
    cells, cost = nb_fmt.parse_cost(snap.view)
    if cost > nb_fmt.PARSE_BUDGET:
        raise ToolError(
            ErrorCode.TOO_LARGE,
            f"{path} holds about {cells:,} cells in {snap.size:,} bytes: reading it would take "
            f"about {cost >> 20:,} MiB, over the {nb_fmt.PARSE_BUDGET >> 20} MiB bound for a "
            "notebook. Clear its outputs (for example with `jupyter nbconvert "
            "--clear-output`) or split it, or ask the user to.",
            path=path,
            size=snap.size,
            reason="memory_limit",
            limit_bytes=nb_fmt.PARSE_BUDGET,
        )
    try:
        # off the event loop: a notebook near the size cap takes a second or two
        nb = await asyncio.to_thread(nb_fmt.parse, snap.view)
    except nb_fmt.NotebookError:
        return None  # not a notebook after all: show its text, so it can be repaired
    seen = seen_text(ctx, p.session, snap)
    key = (p.offset, p.limit)
    total = len(nb.cells)
    fields: dict[str, object] = {
        "path": path,
        "total_cells": total,
        "language": nb.language,
        "nbformat": "{}.{}".format(*nb.nbformat),
        "source": snap.source,
    }
    if seen.again(key) and not p.include_images:
        return file_unchanged(path, max(1, p.offset or 1), fields, what="this part")
    start = max(1, p.offset or 1)
    header = f"{path}: Jupyter notebook ({nb.language}), {total} cell(s)."
    if total == 0 or start > total:
        seen.store_text(snap, seen.shown(), key if total == 0 else None, total=total)
        text = (
            f"{header} It has no cells; add one with notebookEdit (edit_mode=insert)."
            if total == 0
            else f"{header} offset {start} is past its last cell; read with an offset "
            f"between 1 and {total} (offset and limit count cells in a notebook)."
        )
        return success(text, type="notebook", start_cell=start, num_cells=0, cells=[], **fields)
    end = min(total, start + (p.limit or total) - 1)
    parts: list[str] = []
    outputs: list[nb_fmt.OutputImage] = []
    used = 0
    last = start - 1
    for cell in nb.cells[start - 1 : end]:
        text, imgs = nb_fmt.render_cell(cell, p.include_images)
        if not parts:  # the first cell is shown even alone over the limit: cut
            text = _cut_text(text, 4 * s.max_read_tokens, s.max_read_bytes, "cell")
        cost = estimate_tokens(text)
        if parts and (used + cost > s.max_read_tokens or len(parts) == MAX_CELLS):
            break
        parts.append(text)
        outputs.extend(imgs)
        used += cost
        last = cell.index
    seen.store_text(snap, seen.shown((start, last)), key, total=total)
    images = await asyncio.to_thread(_deliver_outputs, ctx, path, outputs)
    notes: list[str] = []
    if last < total:
        why = ""
        if last < end:
            why = (
                f" (one read shows at most {MAX_CELLS} cells)"
                if last - start + 1 == MAX_CELLS
                else " (the rest would pass the token limit)"
            )
        notes.append(
            f"(Showing cells {start}-{last} of {total}{why}. To read more, call read with "
            f"offset={last + 1}; offset and limit count cells in a notebook.)"
        )
    elif start > 1:
        notes.append(f"(Showing cells {start}-{last} of {total}.)")
    if len(outputs) > len(images):
        notes.append(
            f"(Only the first {len(images)} image outputs were delivered; read fewer cells "
            "to receive the others.)"
        )
    notes.append(
        "(Change cells with notebookEdit, naming a cell by its id; edit does not work on "
        "notebooks.)"
    )
    if snap.source == "buffer" and snap.unsaved:
        notes.append("(This is the editor's open buffer, which has unsaved changes.)")
    secrets_note = await asyncio.to_thread(notebook_read_note, nb.cells[start - 1 : last])
    if secrets_note:
        notes.append(secrets_note)
    message = f"{header}\n\n" + "\n".join(parts) + "\n\n" + " ".join(notes)
    message += _ignored(p, "pages")
    result = success(
        message,
        type="notebook",
        start_cell=start,
        num_cells=last - start + 1,
        cells=[nb_fmt.cell_summary(c) for c in nb.cells[start - 1 : last]],
        **fields,
    )
    if p.include_images:
        result["images"] = images
    return result


def _cut_text(
    text: str, max_chars: int, max_bytes: int, what: str, *, total: int | None = None
) -> str:
    """``text`` (a rendered cell, a page's text) cut to ``max_chars`` characters and
    ``max_bytes`` bytes of UTF-8, with a marker saying how much was left out (of
    ``total`` characters, when ``text`` is itself a part of a longer text)."""
    total = len(text) if total is None else total
    keep = text[:max_chars]
    if not keep.isascii():
        data = keep.encode("utf-8", "surrogatepass")
        if len(data) > max_bytes:
            keep = data[:max_bytes].decode("utf-8", "ignore")
    elif len(keep) > max_bytes:
        keep = keep[:max_bytes]
    if len(keep) == total:
        return text
    return (
        f"{keep}\n… [{what} cut here: {total - len(keep):,} more characters, over the "
        "limit of one read] …"
    )


def _deliver_outputs(
    ctx: ToolContext, path: str, outputs: list[nb_fmt.OutputImage]
) -> list[dict[str, object]]:
    """The image outputs (the first few), decoded together in one bounded decoding
    process; an output that cannot be delivered has an ``error``."""
    import base64
    import binascii

    entries: list[dict[str, object]] = []
    items: list[tuple[str, bytes]] = []
    places: list[int] = []
    for o in outputs[:MAX_NOTEBOOK_IMAGES]:
        entry: dict[str, object] = {"cell_index": o.cell_index, "cell_id": o.cell_id}
        entries.append(entry)
        try:
            data = base64.b64decode(o.data_b64, validate=False)
        except (binascii.Error, ValueError) as exc:
            entry["error"] = str(exc)
            continue
        items.append((f"{path} (cell {o.cell_id})", data))
        places.append(len(entries) - 1)
    if not items:
        return entries
    try:
        answers: list[image_fmt.DeliveredImage | ToolError] = _decode_images(ctx, items)
    except sandbox.OverLimit as over:
        err = _over_limit(over, "Decoding the image outputs", _SMALLER_IMAGE, path=path)
        answers = [err] * len(items)
    except sandbox.DecoderFailed as exc:
        answers = [_decoder_failed(path, "images", exc)] * len(items)
    for at, answer in zip(places, answers, strict=True):
        if isinstance(answer, ToolError):
            entries[at]["error"] = answer.message
        else:
            entries[at].update(answer.fields())
    return entries


# -- outlines of large text files ---------------------------------------------------


def _outline_error(
    ol: outline_fmt.Outline, reason: str, max_line_chars: int, **extra: object
) -> ToolError:
    return ToolError(
        ErrorCode.TOO_LARGE,
        f"{reason} Here is its outline instead. {ol.advice()}\n\n{ol.render(max_line_chars)}",
        **ol.fields(),
        **extra,
    )


async def outline_large_file(ctx: ToolContext, p: ReadParams, rp: ResolvedPath) -> ToolError:
    """The ``too_large`` refusal of a whole read over the byte cap, carrying the file's
    outline (one streaming pass, bounded memory). The head lines count as shown."""
    s = ctx.settings
    async with ctx.locks.hold(rp.path):
        ol = await asyncio.to_thread(
            outline_fmt.stream_outline,
            rp.path,
            links_ok=ctx.roots.allow_hard_links,
            expect=identity(rp.stat),
        )
    seen = seen_bytes(ctx, p.session, rp.path, ol.hash)
    enc = ol.encoding
    seen.store(
        disk_record(
            rp.path,
            ol.hash,
            ol.size,
            ol.mtime_ns,
            encoding=enc.label if enc is not None else "utf-8",
            line_ending=line_ending_name(ol.line_ending),  # type: ignore[arg-type]
            total=ol.total_lines,
            shown=seen.shown((1, len(ol.head))) if ol.head else seen.shown(),
            key=None,
        )
    )
    reason = (
        f"{rp.path} is {ol.size:,} bytes ({ol.total_lines:,} lines), over the "
        f"{s.max_read_bytes:,}-byte limit for reading a whole file."
    )
    return _outline_error(ol, reason, s.max_line_chars)


def outline_snapshot(ctx: ToolContext, p: ReadParams, snap: Snapshot, tokens: int) -> ToolError:
    """The ``too_large`` refusal of a whole read over the token cap, with the outline."""
    s = ctx.settings
    ol = outline_fmt.outline_of_lines(snap.path, snap.lines, snap.size)
    seen = seen_text(ctx, p.session, snap)
    seen.store_text(snap, seen.shown((1, len(ol.head))) if ol.head else seen.shown(), None)
    reason = (
        f"{snap.path} is too long to read at once (about {tokens:,} tokens, over the "
        f"{s.max_read_tokens:,}-token limit; {ol.total_lines:,} lines)."
    )
    return _outline_error(ol, reason, s.max_line_chars)

"""PDF text, page by page (pypdf, pure Python).

Pages are chosen with a ``pages`` string: ``"3"``, ``"1-5"``, ``"7-"`` or a comma list
of those. A PDF longer than the page limit must be read with ``pages``; encrypted and
image-only PDFs say so instead of returning nothing.

Text extraction parses a page's content (its drawing instructions) in Python, at some
40 bytes of memory and a few microseconds per byte, so a page whose content is over
:data:`MAX_PAGE_CONTENT` is not parsed: it is shown with a note instead (pages may share
one content stream, and each would parse it again). :func:`extract` runs in the
decoding process (:mod:`steadyhand.formats.sandbox`), never in the server, under its
time and memory bound.
"""

from __future__ import annotations

import io
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from steadyhand.protocol.errors import ErrorCode, ToolError

if TYPE_CHECKING:
    from pypdf import PdfReader

# pypdf is imported when a PDF is first read: it costs start-up time and memory that a
# server which never sees a PDF should not pay.
logging.getLogger("pypdf").setLevel(logging.ERROR)

MAGIC = b"%PDF-"


def parse_pages(spec: str, count: int) -> list[int]:
    """1-based page numbers named by ``spec`` (in order, without repeats), capped to
    ``count``. ``spec`` is assumed valid (the ``pages`` parameter's check refuses
    any other)."""
    out: list[int] = []
    seen: set[int] = set()
    for part in spec.split(","):
        lo_s, dash, hi_s = part.partition("-")
        lo = _page(lo_s, count)
        hi = (_page(hi_s, count) if hi_s.strip() else count) if dash else lo
        for n in range(max(1, lo), min(hi, count) + 1):
            if n not in seen:
                seen.add(n)
                out.append(n)
    return out


#: Most digits of a page number (the parameter's check refuses more).
MAX_PAGE_DIGITS = 9


def _page(number: str, count: int) -> int:
    """A page number of ``spec``; one too long to be a page is past the end."""
    digits = number.strip()
    return int(digits) if len(digits) <= MAX_PAGE_DIGITS else count + 1


#: A page whose content, decompressed, is larger than this is not parsed for its text.
MAX_PAGE_CONTENT = 4 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class PageText:
    number: int
    text: str
    images: int
    #: The length of the page's whole text (``text`` may be cut to what one read shows).
    chars: int = -1
    #: The size of the page's content when it was too large to parse (0: it was parsed).
    content_bytes: int = 0

    @property
    def has_text(self) -> bool:
        return bool(self.text.strip())

    @property
    def length(self) -> int:
        return self.chars if self.chars >= 0 else len(self.text)

    def to_wire(self) -> list[object]:
        return [self.number, self.text, self.images, self.length, self.content_bytes]

    @classmethod
    def from_wire(cls, wire: list[Any]) -> PageText:
        number, text, images, chars, content = wire
        return cls(int(number), str(text), int(images), int(chars), int(content))


def _unreadable(path: str, detail: str) -> ToolError:
    return ToolError(
        ErrorCode.UNREADABLE,
        f"{path} could not be read as a PDF ({detail}); it may be damaged or not a PDF. "
        "Check the file, or ask the user for a working copy.",
        path=path,
        reason="corrupt",
    )


def _encrypted(path: str) -> ToolError:
    return ToolError(
        ErrorCode.UNREADABLE,
        f"{path} is an encrypted PDF that needs a password, so its text cannot be "
        "read. Ask the user for a decrypted copy.",
        path=path,
        reason="encrypted",
    )


def open_pdf(path: str, data: bytes) -> PdfReader:
    from pypdf import PdfReader
    from pypdf.errors import DependencyError, FileNotDecryptedError, PyPdfError

    try:
        reader = PdfReader(io.BytesIO(data))
        if reader.is_encrypted:
            try:
                ok = reader.decrypt("")
            except DependencyError as exc:
                raise _encrypted(path) from exc
            if not ok:
                raise _encrypted(path)
        _ = len(reader.pages)
    except (FileNotDecryptedError, DependencyError) as exc:
        raise _encrypted(path) from exc
    except ToolError:
        raise
    except (PyPdfError, OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise _unreadable(path, str(exc) or type(exc).__name__) from exc
    except RecursionError as exc:  # objects nested deeper than the parser recurses
        raise _unreadable(path, "objects nested too deep") from exc
    return reader


def _content_bytes(page: Any) -> int:
    """The size of ``page``'s content streams, decompressed (0 when it has none)."""
    contents = page.get("/Contents")
    if contents is None:
        return 0
    obj = contents.get_object()
    streams = list(obj) if isinstance(obj, list) else [obj]
    total = 0
    for stream in streams:
        data = stream.get_object().get_data()
        total += len(data) if isinstance(data, bytes | str) else 0
    return total


def page_texts(
    path: str,
    reader: PdfReader,
    numbers: list[int],
    *,
    text_cap: int | None = None,
    progress: Callable[[int], None] | None = None,
) -> list[PageText]:
    """The text of each page of ``numbers``, each cut to ``text_cap`` characters (its
    whole length kept); ``progress`` hears of each page as it is done."""
    from pypdf.errors import DependencyError, FileNotDecryptedError, PyPdfError

    out: list[PageText] = []
    for n in numbers:
        try:
            page = reader.pages[n - 1]
            images = _count_images(page)
            content = _content_bytes(page)
            text = (page.extract_text() or "") if content <= MAX_PAGE_CONTENT else ""
        except (FileNotDecryptedError, DependencyError) as exc:
            raise _encrypted(path) from exc
        except (PyPdfError, OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
            raise _unreadable(path, f"page {n}: {exc or type(exc).__name__}") from exc
        except RecursionError as exc:
            raise _unreadable(path, f"page {n}: objects nested too deep") from exc
        text = text.replace("\r\n", "\n").replace("\r", "\n")
        cut = text if text_cap is None else text[:text_cap]
        skipped = content if content > MAX_PAGE_CONTENT else 0
        out.append(PageText(n, cut, images, len(text), skipped))
        if progress is not None:
            progress(n)
    return out


def extract(
    path: str,
    data: bytes,
    spec: str | None,
    max_pages: int,
    *,
    text_cap: int | None = None,
    progress: Callable[[int], None] | None = None,
    announce: Callable[[int, list[int]], None] | None = None,
) -> tuple[int, list[PageText]]:
    """The page count of the PDF in ``data`` and the text of the pages ``spec`` names
    (all of them without ``spec``): ``too_large`` when that is more than ``max_pages``.
    ``announce`` hears the count and the pages to read before the first is read."""
    reader = open_pdf(path, data)
    count = len(reader.pages)
    if spec is None:
        if count > max_pages:
            raise ToolError(
                ErrorCode.TOO_LARGE,
                f"{path} has {count} pages, more than the {max_pages} one read returns. "
                f'Read it in parts with pages, for example pages="1-{min(count, 10)}".',
                path=path,
                num_pages=count,
            )
        numbers = list(range(1, count + 1))
    else:
        numbers = parse_pages(spec, count)
        if len(numbers) > max_pages:
            first = numbers[0]
            raise ToolError(
                ErrorCode.TOO_LARGE,
                f"pages={spec!r} names {len(numbers)} pages of {path}, more than the "
                f"{max_pages} one read returns. Ask for fewer, for example "
                f'pages="{first}-{first + max_pages - 1}".',
                path=path,
                num_pages=count,
            )
    if announce is not None:
        announce(count, numbers)
    return count, page_texts(path, reader, numbers, text_cap=text_cap, progress=progress)


def _count_images(page: object) -> int:
    from pypdf.errors import PyPdfError

    try:
        resources = page["/Resources"].get_object()  # type: ignore[index]
        xobjects = resources.get("/XObject") if resources is not None else None
        if xobjects is None:
            return 0
        xobjects = xobjects.get_object()
        return sum(1 for v in xobjects.values() if v.get_object().get("/Subtype") == "/Image")
    except (KeyError, AttributeError, TypeError, PyPdfError, RecursionError):
        return 0


def render(pages: list[PageText], total: int) -> str:
    parts: list[str] = []
    for p in pages:
        head = f"--- Page {p.number} of {total} ---"
        if p.content_bytes:
            parts.append(
                f"{head}\n(This page's content is {p.content_bytes / 2**20:.1f} MiB of drawing "
                f"instructions, over the {MAX_PAGE_CONTENT >> 20} MiB Steadyhand extracts text "
                "from: a drawing or a map, probably. Its text is not shown; ask the user "
                "for a text version if it is needed.)"
            )
        elif p.has_text:
            parts.append(f"{head}\n{p.text.strip()}")
        elif p.images:
            parts.append(
                f"{head}\n(No text layer: this page holds only {p.images} image(s), "
                "for example a scan, so there is no text to extract.)"
            )
        else:
            parts.append(f"{head}\n(This page has no text.)")
    return "\n\n".join(parts)

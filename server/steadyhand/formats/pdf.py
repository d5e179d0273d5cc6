"""PDF text, page by page (pypdf, pure Python).

Pages are chosen with a ``pages`` string: ``"3"``, ``"1-5"``, ``"7-"`` or a comma list
of those. A PDF longer than the page limit must be read with ``pages``; encrypted and
image-only PDFs say so instead of returning nothing.
"""

from __future__ import annotations

import io
import logging
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from steadyhand.protocol.errors import ErrorCode, ToolError

if TYPE_CHECKING:
    from pypdf import PdfReader

# pypdf is imported when a PDF is first read: it costs start-up time and memory that a
# server which never sees a PDF should not pay.
logging.getLogger("pypdf").setLevel(logging.ERROR)

MAGIC = b"%PDF-"
PAGES_RE = re.compile(r"^\s*\d+\s*(?:-\s*\d*\s*)?(?:,\s*\d+\s*(?:-\s*\d*\s*)?)*$")


def valid_pages(spec: str) -> bool:
    return PAGES_RE.match(spec) is not None


def parse_pages(spec: str, count: int) -> list[int]:
    """1-based page numbers named by ``spec`` (in order, without repeats), capped to
    ``count``. ``spec`` is assumed valid (see :func:`valid_pages`)."""
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


@dataclass(frozen=True, slots=True)
class PageText:
    number: int
    text: str
    images: int

    @property
    def has_text(self) -> bool:
        return bool(self.text.strip())


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


def page_texts(path: str, reader: PdfReader, numbers: list[int]) -> list[PageText]:
    from pypdf.errors import DependencyError, FileNotDecryptedError, PyPdfError

    out: list[PageText] = []
    for n in numbers:
        try:
            page = reader.pages[n - 1]
            text = page.extract_text() or ""
            images = _count_images(page)
        except (FileNotDecryptedError, DependencyError) as exc:
            raise _encrypted(path) from exc
        except (PyPdfError, OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
            raise _unreadable(path, f"page {n}: {exc or type(exc).__name__}") from exc
        except RecursionError as exc:
            raise _unreadable(path, f"page {n}: objects nested too deep") from exc
        out.append(PageText(n, text.replace("\r\n", "\n").replace("\r", "\n"), images))
    return out


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
        if p.has_text:
            parts.append(f"{head}\n{p.text.strip()}")
        elif p.images:
            parts.append(
                f"{head}\n(No text layer: this page holds only {p.images} image(s), "
                "for example a scan, so there is no text to extract.)"
            )
        else:
            parts.append(f"{head}\n(This page has no text.)")
    return "\n\n".join(parts)

"""PDFs end to end: text per page, page ranges, and the cases that have no text to give."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from fpdf import FPDF
from PIL import Image
from pygls.exceptions import JsonRpcInvalidParams
from pypdf import PdfReader, PdfWriter
from pytest_lsp import LanguageClient

from steadyhand.protocol.commands import READ
from tests.conftest import call


def text_pdf(pages: int) -> bytes:
    pdf = FPDF()
    pdf.set_font("helvetica", size=12)
    for i in range(1, pages + 1):
        pdf.add_page()
        pdf.cell(text=f"Chapter {i} begins here")
        pdf.ln(10)
        pdf.cell(text=f"The secret word of page {i} is word{i}.")
    return bytes(pdf.output())


def image_pdf() -> bytes:
    pdf = FPDF()
    for color in ("red", "blue"):
        pdf.add_page()
        pdf.image(Image.new("RGB", (80, 60), color), x=10, y=10, w=80)
    return bytes(pdf.output())


async def test_read_pdf_text_per_page(client: LanguageClient, workspace: Path) -> None:
    (workspace / "doc.pdf").write_bytes(text_pdf(3))
    r = await call(client, READ, file_path="doc.pdf")
    assert r["ok"] and r["type"] == "pdf" and r["num_pages"] == 3
    msg = r["message"]
    for i in (1, 2, 3):
        assert f"--- Page {i} of 3 ---" in msg and f"word{i}." in msg
    assert msg.index("word1") < msg.index("word2") < msg.index("word3")
    assert [p["page"] for p in r["pages"]] == [1, 2, 3] and all(p["has_text"] for p in r["pages"])
    again = await call(client, READ, file_path="doc.pdf")
    assert again["type"] == "file_unchanged"


async def test_page_ranges(client: LanguageClient, workspace: Path) -> None:
    (workspace / "doc.pdf").write_bytes(text_pdf(6))
    one = await call(client, READ, file_path="doc.pdf", pages="3")
    assert one["ok"] and [p["page"] for p in one["pages"]] == [3]
    assert "word3." in one["message"] and "word2." not in one["message"]
    assert 'pages="4-6"' in one["message"]
    span = await call(client, READ, file_path="doc.pdf", pages="2-4")
    assert [p["page"] for p in span["pages"]] == [2, 3, 4]
    listed = await call(client, READ, file_path="doc.pdf", pages="1, 5-")
    assert [p["page"] for p in listed["pages"]] == [1, 5, 6]
    beyond = await call(client, READ, file_path="doc.pdf", pages="9-12")
    assert beyond["ok"] and beyond["pages"] == [] and "only 6 page(s)" in beyond["message"]
    with pytest.raises(JsonRpcInvalidParams, match="pages"):
        await call(client, READ, file_path="doc.pdf", pages="two")


async def test_large_pdf_needs_pages(client: LanguageClient, workspace: Path) -> None:
    (workspace / "long.pdf").write_bytes(text_pdf(25))
    r = await call(client, READ, file_path="long.pdf")
    assert r["ok"] is False and r["error"] == "too_large"
    assert r["num_pages"] == 25 and "25 pages" in r["message"] and "pages=" in r["message"]
    part = await call(client, READ, file_path="long.pdf", pages="21-25")
    assert part["ok"] and "word25." in part["message"]
    many = await call(client, READ, file_path="long.pdf", pages="1-25")
    assert many["ok"] is False and many["error"] == "too_large"


async def test_image_only_pdf_says_so(client: LanguageClient, workspace: Path) -> None:
    (workspace / "scan.pdf").write_bytes(image_pdf())
    r = await call(client, READ, file_path="scan.pdf")
    assert r["ok"] and r["type"] == "pdf" and r["num_pages"] == 2
    assert not any(p["has_text"] for p in r["pages"]) and r["pages"][0]["images"] == 1
    assert "No text layer" in r["message"] and "OCR" in r["message"]


async def test_encrypted_pdf_says_so(client: LanguageClient, workspace: Path) -> None:
    writer = PdfWriter(clone_from=PdfReader(io.BytesIO(text_pdf(2))))
    writer.encrypt(user_password="secret", owner_password="owner", algorithm="RC4-128")
    out = io.BytesIO()
    writer.write(out)
    (workspace / "locked.pdf").write_bytes(out.getvalue())
    r = await call(client, READ, file_path="locked.pdf")
    assert r["ok"] is False and r["error"] == "unreadable" and r["reason"] == "encrypted"
    assert "password" in r["message"]


async def test_corrupt_pdf_and_pages_on_text(client: LanguageClient, workspace: Path) -> None:
    (workspace / "broken.pdf").write_bytes(b"%PDF-1.4\n%garbage with no objects at all\n")
    r = await call(client, READ, file_path="broken.pdf")
    assert r["ok"] is False and r["error"] == "unreadable" and r["reason"] == "corrupt"
    (workspace / "notes.txt").write_text("hello\n")
    t = await call(client, READ, file_path="notes.txt", pages="1")
    assert t["ok"] is False and t["error"] == "wrong_tool" and "not a PDF" in t["message"]


async def test_pdf_recognized_without_extension(client: LanguageClient, workspace: Path) -> None:
    (workspace / "report").write_bytes(text_pdf(1))
    r = await call(client, READ, file_path="report")
    assert r["ok"] and r["type"] == "pdf" and "word1." in r["message"]

"""Small files that are costly to read, made on the spot (no big binary is kept): a PDF
whose pages share one content stream of megabytes, and a PNG of a few hundred KB that
declares tens of millions of 16-bit pixels."""

from __future__ import annotations

import io
import struct
import zlib
from pathlib import Path

#: One line of drawing instructions: a short text shown on the page.
_LINE = b"BT /F1 12 Tf 72 712 Td (Hello world) Tj ET\n"


def shared_stream_pdf(pages: int = 20, content_bytes: int = 8 * 1024 * 1024) -> bytes:
    """A PDF of ``pages`` pages that all draw one Flate stream of ``content_bytes`` bytes
    of text instructions (a few KB once compressed)."""
    content = zlib.compress(_LINE * (content_bytes // len(_LINE)), 9)
    first_page = 5
    kids = " ".join(f"{first_page + i} 0 R" for i in range(pages))
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        f"<< /Type /Pages /Count {pages} /Kids [{kids}] >>".encode(),
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
        b"<< /Length %d /Filter /FlateDecode >>\nstream\n" % len(content)
        + content
        + b"\nendstream",
    ]
    objects += [
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] "
        b"/Resources << /Font << /F1 3 0 R >> >> /Contents 4 0 R >>"
    ] * pages
    out = io.BytesIO()
    out.write(b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(out.tell())
        out.write(b"%d 0 obj\n" % number + body + b"\nendobj\n")
    xref = out.tell()
    out.write(b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1))
    for offset in offsets:
        out.write(b"%010d 00000 n \n" % offset)
    out.write(
        b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    )
    return out.getvalue()


def _chunk(kind: bytes, data: bytes) -> bytes:
    body = kind + data
    return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))


def grey16_png(width: int = 9000, height: int = 9000, level: int = 0x1234) -> bytes:
    """A 16-bit greyscale PNG of one tone: ``width`` × ``height`` pixels (81 million by
    default, under Pillow's warning threshold) in a few hundred KB. Its rows are
    compressed one at a time, so making it takes little memory."""
    row = b"\x00" + level.to_bytes(2, "big") * width
    packer = zlib.compressobj(9)
    parts = [packer.compress(row) for _ in range(height)]
    parts.append(packer.flush())
    header = struct.pack(">IIBBBBB", width, height, 16, 0, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + _chunk(b"IHDR", header)
        + _chunk(b"IDAT", b"".join(parts))
        + _chunk(b"IEND", b"")
    )


def write(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path

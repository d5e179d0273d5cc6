"""Decoding file bytes into text and encoding it back exactly as it was stored."""

from __future__ import annotations

import codecs
from dataclasses import dataclass

#: File name endings that are binary whatever their bytes say.
BINARY_SUFFIXES = frozenset(
    ".png .jpg .jpeg .gif .webp .bmp .ico .tif .tiff .pdf .zip .gz .tgz .bz2 .xz .zst .7z .rar "
    ".tar .jar .war .class .exe .dll .so .dylib .o .a .lib .obj .pyc .pyo .whl .egg .bin .dat "
    ".db .sqlite .sqlite3 .mp3 .mp4 .m4a .wav .ogg .flac .avi .mov .mkv .webm .woff .woff2 "
    ".ttf .otf .eot .psd .xcf .iso .img .dmg .deb .rpm .apk .wasm .npy .npz .pkl .pickle "
    ".parquet".split()
)


class BinaryContent(ValueError):
    """The bytes are not text Steadyhand can edit safely."""


@dataclass(frozen=True, slots=True)
class Encoding:
    """How a file's text is stored: codec name and whether a byte-order mark leads it."""

    codec: str  # "utf-8", "utf-16-le", "utf-16-be", "latin-1"
    bom: bool = False

    @property
    def label(self) -> str:
        if self.codec == "utf-8":
            return "utf-8-sig" if self.bom else "utf-8"
        if self.codec.startswith("utf-16"):
            return self.codec  # UTF-16 always carries its BOM here
        return self.codec

    def bom_bytes(self) -> bytes:
        if not self.bom:
            return b""
        return {
            "utf-8": codecs.BOM_UTF8,
            "utf-16-le": codecs.BOM_UTF16_LE,
            "utf-16-be": codecs.BOM_UTF16_BE,
        }[self.codec]

    def encode(self, text: str) -> bytes:
        """Bytes for ``text`` in this encoding, BOM included (raises UnicodeEncodeError)."""
        return self.bom_bytes() + text.encode(self.codec)


UTF8 = Encoding("utf-8")


#: Why a UTF-32 file is refused (a UTF-32-LE mark also starts like a UTF-16-LE one).
UTF32_UNSUPPORTED = (
    "it is UTF-32 text, an encoding Steadyhand does not read or edit; ask the user to "
    "convert it to UTF-8 if you need it"
)


def sniff_encoding(head: bytes) -> Encoding | None:
    """The encoding announced by a byte-order mark, if any. Raises
    :class:`BinaryContent` for a UTF-32 mark (checked first: ``FF FE 00 00`` also begins
    with the UTF-16-LE mark)."""
    if head.startswith((codecs.BOM_UTF32_LE, codecs.BOM_UTF32_BE)):
        raise BinaryContent(UTF32_UNSUPPORTED)
    if head.startswith(codecs.BOM_UTF8):
        return Encoding("utf-8", bom=True)
    if head.startswith(codecs.BOM_UTF16_LE):
        return Encoding("utf-16-le", bom=True)
    if head.startswith(codecs.BOM_UTF16_BE):
        return Encoding("utf-16-be", bom=True)
    return None


#: Bytes that do not count as control characters when sniffing for binary content.
_NOT_CONTROL = bytes(b for b in range(256) if b >= 32 or b in (9, 10, 12, 13, 27, 8, 11))


def looks_binary(data: bytes) -> bool:
    """Whether the first bytes hold a NUL, or too many control bytes for text."""
    sample = data[:8192]
    if b"\x00" in sample:
        return True
    if not sample:
        return False
    controls = len(sample.translate(None, _NOT_CONTROL))
    return controls / len(sample) > 0.1


def decode(data: bytes) -> tuple[str, Encoding]:
    """Decode file bytes, or raise :class:`BinaryContent`.

    UTF-8 (with or without BOM) and UTF-16 with a BOM are read as such; UTF-32 (by its
    BOM) is refused. Bytes that are not valid UTF-8 but look like text are read as
    Latin-1, which maps every byte to one character, so writing back never changes a
    byte the agent did not touch.
    """
    enc = sniff_encoding(data[:4])  # (raises for UTF-32)
    if enc is not None:
        body = data[len(enc.bom_bytes()) :]
        try:
            return body.decode(enc.codec), enc
        except UnicodeDecodeError as exc:
            raise BinaryContent(f"invalid {enc.codec} after its byte-order mark") from exc
    if looks_binary(data):
        raise BinaryContent("the file holds NUL or control bytes")
    try:
        return data.decode("utf-8"), UTF8
    except UnicodeDecodeError:
        return data.decode("latin-1"), Encoding("latin-1")


def reads_back(data: bytes, text: str, enc: Encoding) -> bool:
    """Whether :func:`decode` of ``data``, which is ``enc.encode(text)``, gives back
    exactly ``text`` and ``enc``: told from the first bytes and the encoding, without
    decoding (a text Steadyhand just wrote is taken as what the file now holds)."""
    try:
        sniffed = sniff_encoding(data[:4])
    except BinaryContent:
        return False
    if sniffed is not None:
        return sniffed == enc  # the body is then ``text`` in that very codec
    if enc.bom or looks_binary(data):
        return False
    if enc == UTF8:
        return True
    try:  # (Latin-1: read as UTF-8 first, which its bytes may also be)
        return decode(data) == (text, enc)
    except BinaryContent:
        return False


def binary_reason(data: bytes, enc: Encoding) -> str | None:
    """Why :func:`decode` would take ``data`` (just encoded as ``enc``) for a binary
    file, or None when it reads back as text: a NUL or too many control bytes in the
    first bytes :func:`looks_binary` samples, or a byte-order mark that says another
    encoding (UTF-32, or UTF-16 the bytes are not). Only the first bytes are looked at,
    as :func:`decode` does, unless a byte-order mark names another encoding."""
    try:
        sniffed = sniff_encoding(data[:4])
    except BinaryContent:
        return "a UTF-32 byte-order mark at its start"
    if sniffed is not None:
        if sniffed == enc:
            return None  # bytes this very encoding just made
        try:
            data[len(sniffed.bom_bytes()) :].decode(sniffed.codec)
        except UnicodeDecodeError:
            return f"a {sniffed.label} byte-order mark at its start, which the rest does not follow"
        return None
    if not looks_binary(data):
        return None
    if b"\x00" in data[:8192]:
        return "a NUL character (U+0000) in its first 8 KB"
    return "control characters in more than a tenth of its first 8 KB"


def decode_anyway(data: bytes) -> tuple[str, Encoding]:
    """:func:`decode` without the binary sniff: the text bytes of a file that holds a NUL
    or many control bytes would be, as UTF-8 (or Latin-1 when they are not UTF-8).
    Raises :class:`BinaryContent` only for what no text encoding here can read."""
    enc = sniff_encoding(data[:4])
    if enc is not None:
        return decode(data)
    try:
        return data.decode("utf-8"), UTF8
    except UnicodeDecodeError:
        return data.decode("latin-1"), Encoding("latin-1")

"""Whether bytes just encoded would read back as a binary file: ``binary_reason`` says
exactly when ``decode`` refuses them, for every text and encoding."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from steadyhand.text.encoding import (
    UTF8,
    BinaryContent,
    Encoding,
    binary_reason,
    decode,
    decode_anyway,
    reads_back,
)

ENCODINGS = [
    UTF8,
    Encoding("utf-8", bom=True),
    Encoding("utf-16-le", bom=True),
    Encoding("utf-16-be", bom=True),
    Encoding("latin-1"),
]
#: Texts rich in what matters here: NUL and control characters, byte-order marks.
TEXT = st.text(
    st.one_of(
        st.sampled_from("\x00\x01\x02\x1b\t\n\r \ufeff\xff\xfeab"),
        st.characters(blacklist_categories=("Cs",)),
    ),
    max_size=40,
)


def _reads_as_binary(data: bytes) -> bool:
    try:
        decode(data)
    except BinaryContent:
        return True
    return False


@given(text=TEXT, enc=st.sampled_from(ENCODINGS))
def test_binary_reason_is_exactly_when_decode_refuses(text: str, enc: Encoding) -> None:
    try:
        data = enc.encode(text)
    except UnicodeEncodeError:
        return  # refused before this check (the file's encoding cannot hold it)
    assert (binary_reason(data, enc) is not None) is _reads_as_binary(data)


@given(text=TEXT)
def test_decode_anyway_gives_back_utf8_text_holding_a_nul(text: str) -> None:
    data = text.encode("utf-8")
    if data.startswith((b"\xef\xbb\xbf", b"\xff\xfe", b"\xfe\xff")):
        return  # a byte-order mark decides
    assert decode_anyway(data) == (text, UTF8)


def test_the_reasons_name_the_cause() -> None:
    assert "NUL" in str(binary_reason(b"a\x00b", UTF8))
    assert "control" in str(binary_reason(b"\x01\x02\x03a", UTF8))
    assert "UTF-32" in str(binary_reason(b"\xff\xfe\x00\x00", Encoding("latin-1")))
    assert binary_reason(b"plain\n", UTF8) is None
    assert binary_reason("\ufeffa\x00".encode("utf-16-le"), Encoding("utf-16-le", True)) is None


@given(TEXT, st.sampled_from(ENCODINGS))
def test_reads_back_says_exactly_when_decoding_gives_the_text_written(
    text: str, enc: Encoding
) -> None:
    """A text just written is taken as the file's content without decoding its bytes
    again only when decoding them would give exactly it, in its encoding."""
    try:
        data = enc.encode(text)
    except UnicodeEncodeError:
        return
    try:
        same = decode(data) == (text, enc)
    except BinaryContent:
        same = False
    assert reads_back(data, text, enc) is same

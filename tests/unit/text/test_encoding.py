"""Decoding and encoding (``text/encoding.py``): round trips, the Latin-1 fallback, BOMs."""

from __future__ import annotations

import codecs

from hypothesis import given
from hypothesis import strategies as st

from steadyhand.text.encoding import BinaryContent, Encoding, decode


@given(st.text(max_size=50), st.sampled_from(["utf-8", "utf-16-le", "utf-16-be"]), st.booleans())
def test_encoding_round_trip(text: str, codec: str, bom: bool) -> None:
    text = text.replace("\x00", "")
    try:
        text.encode(codec)
    except UnicodeEncodeError:
        return
    enc = Encoding(codec, bom=bom or codec != "utf-8")
    data = enc.encode(text)
    try:
        decoded, got = decode(data)
    except BinaryContent:
        # only possible for control-heavy text without a BOM
        assert not enc.bom
        return
    assert decoded == text and got.encode(decoded) == data


def test_latin1_fallback_round_trips_every_byte() -> None:
    data = "café\n".encode("latin-1")
    text, enc = decode(data)
    assert enc.codec == "latin-1" and enc.encode(text) == data
    assert decode(codecs.BOM_UTF8 + b"x")[1].bom

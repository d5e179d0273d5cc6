"""Hypothesis strategies shared by the tests of text and positions."""

from __future__ import annotations

from hypothesis import strategies as st

line_text = st.text(st.characters(blacklist_characters="\r\n"), max_size=20)
endings = st.sampled_from(["\n", "\r\n", "\r"])


@st.composite
def raw_texts(draw: st.DrawFn) -> str:
    lines = draw(st.lists(line_text, max_size=12))
    out = []
    for line in lines:
        out.append(line + draw(endings))
    if draw(st.booleans()) and lines:
        out[-1] = out[-1].rstrip("\r\n")
    return "".join(out)

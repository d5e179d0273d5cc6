"""The characters models write in place of others: typographic quotes, dashes, odd
spaces and invisible characters. Matching tolerates them (:mod:`steadyhand.text.matching`)
and the closest-region search names them (:mod:`steadyhand.text.nearmiss`)."""

from __future__ import annotations

# Curly and other typographic quotes models flatten to straight ones (one to one).
_QUOTE_TABLE = str.maketrans(
    {
        "\u2018": "'",
        "\u2019": "'",
        "\u201a": "'",
        "\u201b": "'",
        "\u2032": "'",
        "\u201c": '"',
        "\u201d": '"',
        "\u201e": '"',
        "\u201f": '"',
        "\u2033": '"',
    }
)

#: Dashes and minus signs models write as ``-``.
DASHES = "\u2010\u2011\u2012\u2013\u2014\u2015\u2212\ufe58\ufe63\uff0d"
#: Spaces models write as a plain space.
ODD_SPACES = (
    "\u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"
    "\u202f\u205f\u3000"
)
#: Invisible characters models drop.
INVISIBLES = "\u200b\u2060\ufeff"
ELLIPSIS = "\u2026"


def normalize_quotes(text: str) -> str:
    """``text`` with typographic quotes replaced by straight ones (length-preserving)."""
    return text.translate(_QUOTE_TABLE)

"""Numbers too long and nesting too deep, from a file or a parameter, are refused with a
code of their own (a format error, Invalid params), never a crash of the parser."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from steadyhand.formats import notebook as nb
from steadyhand.formats import pdf
from steadyhand.protocol.params import NotebookEditParams, ParamsError, ReadParams, structure
from steadyhand.runtime.wire import loads

DIGITS = "9" * 5000


@pytest.mark.parametrize(
    "text",
    [
        '{"cells": [], "metadata": ' + "[" * 5000 + "]" * 5000 + ', "nbformat": 4}',
        '{"cells": [], "metadata": {}, "nbformat": ' + DIGITS + "}",
        '{"cells": [{"cell_type": "code", "source": "", "outputs": [], "metadata": '
        + "{" * 3000
        + "}" * 3000
        + '}], "metadata": {}, "nbformat": 4}',
        '{"cells": [{"cell_type": "code", "source": "", "execution_count": -'
        + DIGITS
        + '}], "metadata": {}, "nbformat": 4}',
    ],
)
def test_a_notebook_too_deep_or_with_a_number_too_long_is_a_notebook_error(text: str) -> None:
    with pytest.raises(nb.NotebookError):
        nb.parse(text)


def test_a_position_too_long_for_a_number_is_past_the_end() -> None:
    book = nb.parse(json.dumps({"cells": [], "metadata": {}, "nbformat": 4}))
    assert nb.position_of("cell-" + DIGITS) is not None
    ref = book.lookup("cell-" + DIGITS)
    assert ref.cells == () and ref.by_position


@given(lo=st.integers(0, 10**30), hi=st.integers(0, 10**30), count=st.integers(0, 50))
def test_page_numbers_of_any_size_are_capped_to_the_count(lo: int, hi: int, count: int) -> None:
    pages = pdf.parse_pages(f"{lo}-{hi},{lo}", count)
    assert all(1 <= n <= count for n in pages)
    assert pdf.parse_pages(DIGITS, count) == []
    assert pdf.parse_pages(f"1-{DIGITS}", count) == list(range(1, count + 1))


@pytest.mark.parametrize("pages", [DIGITS, f"1-{DIGITS}", f"{DIGITS}-", "1,1234567890"])
def test_pages_with_a_number_too_long_is_invalid_params(pages: str) -> None:
    with pytest.raises(ParamsError) as exc:
        structure(ReadParams, {"file_path": "a.pdf", "pages": pages})
    assert exc.value.field_name == "pages"
    structure(ReadParams, {"file_path": "a.pdf", "pages": "1-123456789"})


def test_a_cell_id_too_long_is_invalid_params() -> None:
    for cell_id in ("cell-" + DIGITS, DIGITS, "x" * 257):
        with pytest.raises(ParamsError) as exc:
            structure(NotebookEditParams, {"file_path": "n.ipynb", "cell_id": cell_id})
        assert exc.value.field_name == "cell_id"


def test_a_json_number_too_long_is_parsed_and_refused_by_the_parameter_check() -> None:
    body = ('{"id": 7, "params": {"offset": ' + DIGITS + ', "limit": -' + DIGITS + "}}").encode()
    data = loads(body)
    assert data["id"] == 7 and data["params"]["offset"] == float("inf")
    for key in ("offset", "limit"):
        with pytest.raises(ParamsError) as exc:
            structure(ReadParams, {"file_path": "a", key: data["params"][key]})
        assert exc.value.field_name == key and "far too large" in str(exc.value)

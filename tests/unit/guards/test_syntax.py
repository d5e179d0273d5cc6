"""The guard's own decisions: notebook cells as Python, which cells changed, sentences."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from steadyhand.formats import notebook as nb_fmt
from steadyhand.guards.syntax import (
    SyntaxReport,
    _changed_code_cells,
    describe,
    python_cell,
    syntax_clause,
    syntax_fields,
    syntax_summary,
)


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("%matplotlib inline\nx = 1\n", "#matplotlib inline\nx = 1\n"),
        ("!pip install numpy\n", "#pip install numpy\n"),
        ("  %time f()\n", "  #time f()\n"),
        ("files = !ls -la\n", "files = None  #ls -la\n"),
        ("len?\n", "len\n"),
        ("obj.method??\n", "obj.method\n"),
        ("x = 1\n", "x = 1\n"),
        ("%%bash\necho hi\n", None),
    ],
)
def test_ipython_lines_become_python(source: str, expected: str | None) -> None:
    assert python_cell(source) == expected


@given(st.lists(st.sampled_from(["x = 1", "!ls", "%time f()", "y = !pwd", "f?", "if x:"])))
def test_masking_keeps_every_line_where_it_was(lines: list[str]) -> None:
    source = "\n".join(lines)
    masked = python_cell(source)
    assert masked is not None and masked.count("\n") == source.count("\n")


def notebook(cells: list[tuple[str | None, str, str]]) -> nb_fmt.Notebook:
    """A notebook of (id, type, source) cells."""
    body = {
        "cells": [
            {
                **({"id": cid} if cid is not None else {}),
                "cell_type": kind,
                "metadata": {},
                "source": src,
                **({"outputs": [], "execution_count": None} if kind == "code" else {}),
            }
            for cid, kind, src in cells
        ],
        "metadata": {},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    return nb_fmt.parse(json.dumps(body, indent=1))


def test_changed_cells_are_paired_by_id_or_place() -> None:
    before = notebook([("a", "code", "x = 1"), ("b", "markdown", "# t"), ("c", "code", "y = 2")])
    after = notebook(
        [
            ("a", "code", "x = 1"),
            ("n", "code", "new("),
            ("b", "markdown", "# t!"),
            ("c", "code", "y = ("),
        ]
    )
    got = [(old, cell.id) for old, cell in _changed_code_cells(before, after)]
    assert got == [(None, "n"), ("y = 2", "c")]
    # cells without ids: an edited one is paired with the one it replaced in place
    before = notebook([(None, "code", "a = 1"), (None, "code", "b = 2")])
    after = notebook([(None, "code", "a = 1"), (None, "code", "b = (")])
    assert [(old, c.index) for old, c in _changed_code_cells(before, after)] == [("b = 2", 2)]
    # and a new notebook's code cells are all new
    assert [old for old, _ in _changed_code_cells(None, after)] == [None, None]


E1 = {"line": 3, "column": 7, "message": "missing `)`", "excerpt": "f(a"}
E2 = {"line": 9, "column": 1, "message": "unexpected `}`", "excerpt": "}"}


def test_sentences_say_where_and_what_to_do() -> None:
    assert describe([E1]) == (
        "Syntax check: the change leaves a syntax error at line 3, column 7 (missing `)`); "
        "fix it with another edit."
    )
    assert describe([E1, E2]) == (
        "Syntax check: the change leaves 2 syntax errors, at line 3, column 7 (missing `)`); "
        "line 9, column 1 (unexpected `}`); fix them with another edit."
    )
    many = describe([E1] * 5)
    assert "5 syntax errors" in many and "and 2 more" in many
    cell = describe([{**E1, "cell": "abc"}])
    assert "line 3, column 7 of cell abc (missing `)`)" in cell
    restored = describe([E1], restoring=True)
    assert restored.startswith("Syntax check: the restored text has a syntax error at line 3")
    assert "fix it with an edit" in restored


def test_report_fields() -> None:
    assert SyntaxReport().fields() == {"syntax_errors": []}
    assert SyntaxReport().sentence() == ""
    skipped = SyntaxReport(skipped="it could not finish within 50 ms")
    assert skipped.fields() == {"syntax_check": "skipped"}
    assert skipped.sentence() == (
        "(The syntax check was skipped: it could not finish within 50 ms.)"
    )
    many = SyntaxReport([E1] * 30).fields()
    assert len(many["syntax_errors"]) == 10  # type: ignore[arg-type]
    assert many["syntax_errors_more"] == 20
    assert "syntax_errors_more" not in SyntaxReport([E1] * 10).fields()


def test_several_files() -> None:
    by_path = {
        "/w/a.py": {"syntax_errors": [E1]},
        "/w/b.py": {"syntax_errors": []},
        "/w/c.py": {"syntax_check": "skipped"},
    }
    assert syntax_fields(by_path) == {
        "syntax_errors": [{"path": "/w/a.py", **E1}],
        "syntax_check": "skipped",
    }
    assert syntax_clause(by_path["/w/a.py"]) == (
        " (it has a syntax error at line 3, column 7 (missing `)`))"
    )
    assert syntax_clause(by_path["/w/b.py"]) == ""
    assert syntax_clause(by_path["/w/c.py"]) == " (its syntax check was skipped)"
    assert "1 restored file has a syntax error" in syntax_summary(by_path)
    assert syntax_summary({"/w/b.py": {"syntax_errors": []}}) == ""


def test_several_files_count_every_error_left_out() -> None:
    """Each file lists at most 10 and counts the rest; a rewind lists 10 of them all
    and counts every other, those each file left out included."""
    a = SyntaxReport([E1] * 12).fields()
    b = SyntaxReport([E1] * 3).fields()
    out = syntax_fields({"/w/a.py": a, "/w/b.py": b})
    assert len(out["syntax_errors"]) == 10  # type: ignore[arg-type]
    assert out["syntax_errors_more"] == 15 - 10
    assert (
        syntax_clause(a)
        == " (it has 12 syntax errors, the first at line 3, column 7 (missing `)`))"
    )


W1 = {
    **E1,
    "reason": "the file already had a syntax error at line 2, which may account for this one",
}


def test_warnings_are_fields_and_a_sentence_of_their_own() -> None:
    only = SyntaxReport(warnings=[W1])
    assert only.fields() == {"syntax_errors": [], "syntax_warnings": [W1]}
    assert only.sentence() == (
        "Syntax check: possibly a syntax error at line 3, column 7 (missing `)`), not "
        "counted against the change: the file already had a syntax error at line 2, which "
        "may account for this one. Fix it if it is one."
    )
    both = SyntaxReport([E2], warnings=[W1, {**W1, "reason": "another"}])
    assert both.sentence().startswith("Syntax check: the change leaves a syntax error at line 9")
    assert "possibly 2 syntax errors" in both.sentence()
    assert "see each one's reason in syntax_warnings. Fix those that are." in both.sentence()
    many = SyntaxReport(warnings=[W1] * 12).fields()
    assert len(many["syntax_warnings"]) == 10 and many["syntax_warnings_more"] == 2  # type: ignore[arg-type]
    assert "syntax_warnings" not in SyntaxReport([E1]).fields()
    # a rewind lists them with their file
    out = syntax_fields({"/w/a.py": only.fields()})
    assert out == {"syntax_errors": [], "syntax_warnings": [{"path": "/w/a.py", **W1}]}

"""The syntax guard: the errors a change introduces, reported or refused.

Every change passes :class:`~steadyhand.guards.world.GuardedWorld`, which calls
:func:`check_syntax` (a dry run calls it too). The file's language comes from the open
document's language id, its name, or its ``#!`` line; other files pass unchecked. With
the ``syntaxCheck`` setting at ``warn`` the change is made and the result carries the
errors it introduced (``syntax_errors``) and a sentence saying where; at ``block`` a
change that introduces one is refused with ``syntax_error`` and nothing is written. An
error the check cannot pin on the change (the file had one next to it already), or that
the grammar cannot judge (code newer than the grammar, or split by preprocessor
conditionals), is a warning (``syntax_warnings``, each with its ``reason``): reported,
never refused. A change that puts back earlier content (undo, rewind) is never refused:
the user must always be able to take a change back. In a notebook, the code cells a
change touches are checked, each on its own, in the notebook's language.

Reads hand the text they show to :func:`prime_read`, so the tree of the text an agent
is about to change is usually built before the change arrives (see
:mod:`steadyhand.syntax.engine`).
"""

from __future__ import annotations

import os
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

from steadyhand.context import ToolContext
from steadyhand.documents.snapshot import Snapshot, from_disk
from steadyhand.formats import notebook as nb_fmt
from steadyhand.protocol.errors import ErrorCode, ToolError
from steadyhand.protocol.lists import list_fields, listed
from steadyhand.state.hashing import text_hash
from steadyhand.syntax.engine import MAX_BYTES, Checker, Outcome, Text, deadline_from
from steadyhand.syntax.issues import Issue
from steadyhand.syntax.jsonc import without_trailing_commas
from steadyhand.syntax.languages import LANGUAGE_IDS, detect, first_line
from steadyhand.text.diff import line_splices
from steadyhand.text.lines import to_view
from steadyhand.world import Change

#: Tools that put back content the file held before: never scanned for secrets (an undo
#: must be able to restore a file that held a credential before the agent touched it),
#: and never refused for its syntax (what they bring back is reported).
RESTORING_TOOLS = frozenset({"undo", "rewind"})
#: Errors listed in a result at most (the message names fewer; ``syntax_errors_more``
#: counts the others).
MAX_LISTED = 10
#: Errors named in a message at most.
MAX_NAMED = 3
#: Texts (old and new together, in characters) above which a whole-text change is checked
#: as the lines it changes rather than as one edit spanning them all.
WHOLE_CHARS = 8192

#: The trees of the texts agents read and change, shared by every session; the deadline
#: of a check is 50 ms unless ``$STEADYHAND_SYNTAX_DEADLINE_MS`` says otherwise.
CHECKER = Checker(deadline=deadline_from(os.environ))


@dataclass
class SyntaxReport:
    """What the syntax check of one change found."""

    #: the errors the change introduced, as results list them (``cell`` for notebooks)
    errors: list[dict[str, object]] = field(default_factory=list)
    #: why the check was skipped ("" when it ran)
    skipped: str = ""
    #: errors the check cannot pin on the change or judge, each with its ``reason``
    warnings: list[dict[str, object]] = field(default_factory=list)
    restoring: bool = False
    #: the new text the change was checked as
    new_view: str = ""
    _commits: list[Callable[[Snapshot], None]] = field(default_factory=list, repr=False)

    def fields(self) -> dict[str, object]:
        """The result's fields: ``syntax_errors`` (a check that ran) and
        ``syntax_warnings`` (when there are any), or ``syntax_check: "skipped"``."""
        if self.skipped:
            return {"syntax_check": "skipped"}
        out = list_fields("syntax_errors", self.errors, MAX_LISTED)
        if self.warnings:
            out.update(list_fields("syntax_warnings", self.warnings, MAX_LISTED))
        return out

    def sentence(self) -> str:
        """The sentence a result's message gains ("" when there is nothing to say)."""
        if self.skipped:
            return f"(The syntax check was skipped: {self.skipped}.)"
        parts = [describe(self.errors, restoring=self.restoring)] if self.errors else []
        if self.warnings:
            parts.append(describe_warnings(self.warnings))
        return " ".join(parts)

    def commit(self, applied: Snapshot) -> None:
        """The change was made (``applied`` is what the file holds now): keep the new
        text's tree for the next check, unless the file holds another text (an editor's
        formatter ran on save, say)."""
        new_view = self.new_view
        if not self._commits or (applied.view is not new_view and applied.view != new_view):
            return
        for commit in self._commits:
            commit(applied)


def _where(e: dict[str, object]) -> str:
    cell = f" of cell {e['cell']}" if "cell" in e else ""
    return f"line {e['line']}, column {e['column']}{cell} ({e['message']})"


def describe(errors: list[dict[str, object]], *, restoring: bool = False) -> str:
    """The sentence a result gains: ``Syntax check: the change leaves a syntax error at
    line 3, column 7 (missing `)`); fix it with another edit.`` (``restoring``: said of
    the text an undo or a rewind brought back)."""
    n = len(errors)
    if n == 1:
        where = f"a syntax error at {_where(errors[0])}"
    else:
        named = "; ".join(_where(e) for e in errors[:MAX_NAMED])
        more = f"; and {n - MAX_NAMED} more" if n > MAX_NAMED else ""
        where = f"{n} syntax errors, at {named}{more}"
    if restoring:
        it, they = ("it", "it") if n == 1 else ("them", "they")
        return (
            f"Syntax check: the restored text has {where}, which the version it replaced "
            f"did not have; if {they} should not be there, fix {it} with an edit."
        )
    them = "it" if n == 1 else "them"
    return f"Syntax check: the change leaves {where}; fix {them} with another edit."


def describe_warnings(warnings: list[dict[str, object]]) -> str:
    """The sentence a result gains for errors the check cannot pin on the change:
    ``Syntax check: possibly a syntax error at line 3, column 7 (missing `)`), not
    counted against the change: the file already had a syntax error at line 2, which may
    account for this one. Fix it if it is one.``"""
    n = len(warnings)
    if n == 1:
        where = f"a syntax error at {_where(warnings[0])}"
    else:
        named = "; ".join(_where(w) for w in warnings[:MAX_NAMED])
        more = f"; and {n - MAX_NAMED} more" if n > MAX_NAMED else ""
        where = f"{n} syntax errors, at {named}{more}"
    reasons = list(dict.fromkeys(str(w.get("reason", "")) for w in warnings))
    why = reasons[0] if len(reasons) == 1 else "see each one's reason in syntax_warnings"
    it = "it if it is one" if n == 1 else "those that are"
    return f"Syntax check: possibly {where}, not counted against the change: {why}. Fix {it}."


def language_of(ctx: ToolContext, path: str, view: str) -> str | None:
    """The language ``path`` (holding ``view``) is checked as, None: not checked."""
    return detect(path, first_line(view), ctx.language_id(path))


def check_syntax(ctx: ToolContext, change: Change) -> SyntaxReport | None:
    """The syntax errors ``change`` introduces (None: not checked: the setting is off,
    or the file is of no checked language). Refused with ``syntax_error`` when the
    setting is ``block`` and the change is not a restoring one. A dry run calls this
    too, so it answers what the real call would."""
    mode = ctx.settings.syntax_check
    if mode == "off":
        return None
    restoring = change.tool in RESTORING_TOOLS
    new_view = to_view(change.new_raw)
    if nb_fmt.is_notebook_path(change.path):
        report = _check_notebook(change, new_view)
    else:
        report = _check_text(ctx, change, new_view)
    if report is None:
        return None
    report.restoring = restoring
    report.new_view = new_view
    if report.errors and mode == "block" and not restoring:
        raise _refusal(change, report.errors, report.warnings)
    return report


def _check_text(ctx: ToolContext, change: Change, new_view: str) -> SyntaxReport | None:
    lang = language_of(ctx, change.path, new_view)
    if lang is None:
        return None
    before = change.before
    if lang == "jsonc":
        # Checked as JSON with its trailing commas blanked: as a whole (a change may make
        # a comma trailing or not), each text kept under the key of what was checked.
        after = without_trailing_commas(new_view)
        old_text = None
        if before is not None:
            seen = without_trailing_commas(before.view)
            old_text = Text(text_hash(seen), seen)
        jsonc = CHECKER.check(lang, old_text, after)
        report = _report(jsonc)
        key = text_hash(after)
        report._commits.append(lambda _snap: jsonc.commit(key))
        return report
    old = Text(before.view_hash, before.view) if before is not None else None
    splices = change.splices if old is not None else None
    if old is not None and splices is None and len(old.view) + len(new_view) > WHOLE_CHARS:
        # A write: the lines it changes, so that only the text around them is parsed.
        splices = tuple(line_splices(old.view, new_view))
    outcome = CHECKER.check(lang, old, new_view, splices)
    report = _report(outcome)
    report._commits.append(lambda snap: outcome.commit(snap.view_hash))
    return report


def _report(outcome: Outcome, cell: str | None = None) -> SyntaxReport:
    report = SyntaxReport(skipped=outcome.skipped)
    _add(report, outcome, cell)
    return report


def _add(report: SyntaxReport, outcome: Outcome, cell: str | None) -> None:
    """Put the errors ``outcome`` found in ``report``: those the change introduced, and
    those the check cannot pin on it (warnings, with their reason)."""
    for issue in outcome.errors:
        if issue.doubt:
            report.warnings.append({**_as_dict(issue, cell), "reason": issue.doubt})
        else:
            report.errors.append(_as_dict(issue, cell))


def _as_dict(issue: Issue, cell: str | None) -> dict[str, object]:
    d = issue.as_dict()
    if cell is not None:
        d["cell"] = cell
    return d


def _refusal(
    change: Change, errors: list[dict[str, object]], warnings: list[dict[str, object]]
) -> ToolError:
    if len(errors) == 1:
        where = f"a syntax error at {_where(errors[0])}"
    else:
        named = "; ".join(_where(e) for e in errors[:MAX_NAMED])
        where = f"{len(errors)} syntax errors (at {named})"
    return ToolError(
        ErrorCode.SYNTAX_ERROR,
        f"The {change.tool} would leave {where} in {change.path}, so nothing was written "
        "(syntaxCheck is block). Correct the new text at that place and retry.",
        path=change.path,
        syntax_errors=errors[:MAX_LISTED],
        **({"syntax_warnings": warnings[:MAX_LISTED]} if warnings else {}),
    )


# -- several files (rewind) ---------------------------------------------------------


def _errors_of(
    fields: dict[str, object] | None, key: str = "syntax_errors"
) -> list[dict[str, object]]:
    errors = (fields or {}).get(key)
    return [e for e in errors if isinstance(e, dict)] if isinstance(errors, list) else []


def _count(fields: dict[str, object]) -> int:
    """How many errors ``fields`` report: those listed and those left out."""
    more = fields.get("syntax_errors_more", 0)
    return len(_errors_of(fields)) + (more if isinstance(more, int) else 0)


def syntax_clause(fields: dict[str, object] | None) -> str:
    """What a list of restored files says after one of them: `` (it has a syntax error
    at line 3, column 1 (unexpected `)`))``, or nothing."""
    if fields is None:
        return ""
    if fields.get("syntax_check") == "skipped":
        return " (its syntax check was skipped)"
    errors = _errors_of(fields)
    if not errors:
        return ""
    if len(errors) == 1:
        return f" (it has a syntax error at {_where(errors[0])})"
    return f" (it has {_count(fields)} syntax errors, the first at {_where(errors[0])})"


def syntax_summary(by_path: dict[str, dict[str, object]]) -> str:
    """The sentence a result about several files gains when some have new errors."""
    n = sum(1 for f in by_path.values() if _errors_of(f))
    if not n:
        return ""
    files = (
        "1 restored file has a syntax error" if n == 1 else f"{n} restored files have syntax errors"
    )
    return (
        f" Syntax check: {files} it did not have just before (named below); if that should "
        "not be there, fix it with an edit."
        if n == 1
        else f" Syntax check: {files} they did not have just before (named below); if those "
        "should not be there, fix them with edits."
    )


def syntax_fields(by_path: dict[str, dict[str, object]]) -> dict[str, object]:
    """The syntax fields of a result about several files: ``syntax_errors`` (and
    ``syntax_warnings``, when any) with a ``path`` each, and ``syntax_check: "skipped"``
    when a file's check was."""
    out: dict[str, object] = {}
    checked = [f for f in by_path.values() if "syntax_errors" in f]
    if checked:
        every = [{"path": path, **e} for path, f in by_path.items() for e in _errors_of(f)]
        shown, _ = listed(every, MAX_LISTED)
        out["syntax_errors"] = shown
        more = sum(_count(f) for f in checked) - len(shown)  # and those each file left out
        if more:
            out["syntax_errors_more"] = more
    doubts = [
        {"path": path, **w} for path, f in by_path.items() for w in _errors_of(f, "syntax_warnings")
    ]
    if doubts:
        out.update(list_fields("syntax_warnings", doubts, MAX_LISTED))
    if any(f.get("syntax_check") == "skipped" for f in by_path.values()):
        out["syntax_check"] = "skipped"
    return out


# -- notebooks -----------------------------------------------------------------------

_CELL_MAGIC = re.compile(r"\A\s*%%")
_LINE_MAGIC = re.compile(r"^(\s*)[%!]", re.MULTILINE)
_ASSIGNED_MAGIC = re.compile(r"^(\s*[\w.,\s\[\]]+=\s*)[%!](.*)$", re.MULTILINE)
_HELP = re.compile(r"\?{1,2}[ \t]*$", re.MULTILINE)


def python_cell(source: str) -> str | None:
    """A code cell's source as Python: IPython's line magics (``%time``, ``!pip``,
    ``x = !ls``) and help (``obj?``) turned into comments and values; None for a cell
    magic (``%%bash``), which is not Python at all."""
    if _CELL_MAGIC.match(source):
        return None
    source = _LINE_MAGIC.sub(r"\1#", source)
    source = _ASSIGNED_MAGIC.sub(r"\1None  #\2", source)
    return _HELP.sub("", source)


def _notebook_language(nb: nb_fmt.Notebook) -> str | None:
    name = nb.language
    if name == "unknown":
        return "python"  # Jupyter's own kernel, when the notebook does not say
    return LANGUAGE_IDS.get(name.lower())


def _check_notebook(change: Change, new_view: str) -> SyntaxReport | None:
    try:
        after = nb_fmt.parse(new_view)
    except nb_fmt.NotebookError:
        return None
    lang = _notebook_language(after)
    if lang is None:
        return None
    before: nb_fmt.Notebook | None = None
    if change.before is not None:
        try:
            before = nb_fmt.parse(change.before.view)
        except nb_fmt.NotebookError:
            before = None
    report = SyntaxReport()
    for old_source, cell in _changed_code_cells(before, after):
        new_source = cell.source
        if lang == "python":
            new_py = python_cell(new_source)
            old_py = python_cell(old_source) if old_source is not None else None
            if new_py is None:
                continue
        else:
            new_py, old_py = new_source, old_source
        old = Text(text_hash(old_py), old_py) if old_py is not None else None
        outcome = CHECKER.check(lang, old, new_py)
        if outcome.skipped:
            report.skipped = outcome.skipped
        _add(report, outcome, cell.id)
        report._commits.append(_commit_cell(outcome, text_hash(new_py)))
    return report


def _commit_cell(outcome: Outcome, key: str) -> Callable[[Snapshot], None]:
    def commit(_snap: Snapshot) -> None:
        outcome.commit(key)

    return commit


def _changed_code_cells(
    before: nb_fmt.Notebook | None, after: nb_fmt.Notebook
) -> list[tuple[str | None, nb_fmt.CellSpan]]:
    """The code cells of ``after`` whose source is new, each with the source it had
    before (None: a new cell): the cell with the same id, else the cell at the same
    place when that one's source is gone from the notebook."""
    old_cells = before.cells if before is not None else []
    old_sources = Counter(c.source for c in old_cells if c.cell_type == "code")
    new_sources = {c.source for c in after.cells}
    by_id = {c.real_id: c for c in old_cells if c.real_id is not None}
    out: list[tuple[str | None, nb_fmt.CellSpan]] = []
    for cell in after.cells:
        if cell.cell_type != "code":
            continue
        src = cell.source
        twin = by_id.get(cell.real_id) if cell.real_id is not None else None
        if twin is not None:
            if twin.source != src:
                out.append((twin.source if twin.cell_type == "code" else None, cell))
            continue
        if old_sources[src] > 0:
            old_sources[src] -= 1
            continue
        at = old_cells[cell.index - 1] if 0 < cell.index <= len(old_cells) else None
        if at is not None and at.cell_type == "code" and at.source not in new_sources:
            out.append((at.source, cell))
        else:
            out.append((None, cell))
    return out


# -- reads ---------------------------------------------------------------------------


def prime_read(ctx: ToolContext, snap: Snapshot) -> None:
    """A read showed ``snap``: have its tree built in the background (once nothing else
    happens), ready for the change that usually follows."""
    if ctx.settings.syntax_check == "off":
        return
    lang = language_of(ctx, snap.path, snap.view)
    if lang == "jsonc":
        seen = without_trailing_commas(snap.view)
        CHECKER.prime(lang, text_hash(seen), seen)
    elif lang is not None:
        CHECKER.prime(lang, snap.view_hash, snap.view)


def prime_file(ctx: ToolContext, path: str, first: str, expect_hash: str, size: int) -> None:
    """A read showed part of the large file ``path`` (first line ``first``, content hash
    ``expect_hash``, ``size`` bytes): have its tree built in the background, reading it
    then."""
    if ctx.settings.syntax_check == "off" or size > MAX_BYTES:
        return
    lang = detect(path, first, ctx.language_id(path))
    if lang is None:
        return

    def load() -> tuple[str, str] | None:
        try:
            snap = from_disk(path)
        except (ToolError, OSError):
            return None
        if snap.hash != expect_hash:
            return None  # changed since: the next read says so
        if lang == "jsonc":
            seen = without_trailing_commas(snap.view)
            return text_hash(seen), seen
        return snap.view_hash, snap.view

    CHECKER.prime_with(lang, load)

"""The guard around the world: every change passes the write rules, the secret scan and
the syntax check.

:class:`GuardedWorld` wraps whatever world the server uses (disk, editor, or a history
wrapper around either), so every tool that changes a file is covered without calling the
guards itself. Tools may still call :func:`check_writable` early for a faster refusal.
"""

from __future__ import annotations

import asyncio
import dataclasses

from steadyhand.context import ToolContext, WorldLayer
from steadyhand.documents.snapshot import Snapshot
from steadyhand.guards.protected import check_writable
from steadyhand.guards.secrets import SCAN_SECONDS, Finding, Scan, Unscanned, describe, scan_change
from steadyhand.guards.syntax import RESTORING_TOOLS, SyntaxReport, check_syntax
from steadyhand.protocol.errors import ErrorCode, ToolError
from steadyhand.protocol.lists import list_fields
from steadyhand.text.lines import to_view
from steadyhand.world import Applied, Change

#: Above this many characters the scan runs off the event loop (a text of this size
#: dense with would-be credentials takes some 0.1 s).
_THREAD_CHARS = 1 << 18


class GuardedWorld(WorldLayer):
    """A world that refuses what may not be written and reports credentials being added."""

    async def apply(self, change: Change) -> Applied:
        check_writable(self.ctx, change.path, change.session)
        scan = await check_secrets(self.ctx, change)
        findings = scan.findings
        syntax = check_syntax(self.ctx, change)
        applied = await self.inner.apply(change)
        if syntax is not None:
            syntax.commit(applied.snapshot)
            # rewind names each file's findings in its own list of files
            applied = with_syntax(applied, syntax, say=change.tool != "rewind")
        if not findings and scan.unscanned is None:
            return applied
        warning = secrets_warning(findings, scan.unscanned)
        note = f"{applied.note} {warning}" if applied.note else warning
        found = tuple(f.as_dict() for f in findings)
        unscanned = scan.unscanned.fields() if scan.unscanned is not None else None
        return dataclasses.replace(
            applied,
            note=note,
            findings=applied.findings + found,
            secrets_unscanned=unscanned or applied.secrets_unscanned,
        )

    async def delete(self, path: str, before: Snapshot, *, tool: str, session: str) -> Applied:
        check_writable(self.ctx, path, session)
        return await self.inner.delete(path, before, tool=tool, session=session)


async def check_secrets(ctx: ToolContext, change: Change) -> Scan:
    """The credentials ``change`` adds (none when the scan is off or the tool restores),
    and what the scan's time bound left unscanned: refused with ``secret_detected`` when
    the ``secrets`` setting is ``block`` and a credential was found. A dry run calls this
    too, so it answers what the real call would."""
    if ctx.settings.secrets == "off" or change.tool in RESTORING_TOOLS:
        return Scan([])
    old = change.before.view if change.before is not None else None
    new = to_view(change.new_raw)
    if len(change.new_raw) > _THREAD_CHARS:
        scan = await asyncio.to_thread(scan_change, change.path, old, new, change.splices)
    else:
        scan = scan_change(change.path, old, new, change.splices)
    findings = scan.findings
    if findings and ctx.settings.secrets == "block":
        raise ToolError(
            ErrorCode.SECRET_DETECTED,
            f"The new text for {change.path} adds what looks like a credential "
            f"({describe(findings)}), so nothing was written. Keep credentials out of "
            "files: read them from an environment variable or a secrets manager, and "
            "retry without the value.",
            path=change.path,
            **list_fields("secrets", [f.as_dict() for f in findings]),
        )
    return scan


def secrets_warning(findings: list[Finding], unscanned: Unscanned | None = None) -> str:
    """The sentence a result carries when its change adds credential-like text, and the
    one saying what the scan had no time for."""
    parts: list[str] = []
    if findings:
        parts.append(
            f"Warning: the change adds what looks like a credential ({describe(findings)}). "
            "Unless the user asked for it there, move it to an environment variable or a "
            "secrets manager."
        )
    if unscanned is not None:
        parts.append(unscanned.sentence(SCAN_SECONDS))
    return " ".join(parts)


def with_syntax(applied: Applied, syntax: SyntaxReport, *, say: bool = True) -> Applied:
    """``applied`` carrying the syntax check's fields, and (``say``) its sentence in the
    note."""
    sentence = syntax.sentence() if say else ""
    note = f"{applied.note} {sentence}" if applied.note and sentence else applied.note or sentence
    return dataclasses.replace(applied, note=note, syntax=syntax.fields())


def dry_run_fields(
    findings: list[Finding],
    syntax: SyntaxReport | None = None,
    unscanned: Unscanned | None = None,
) -> dict[str, object]:
    """The ``secrets`` field of a dry run's result, when the change would add any (and
    ``secrets_unscanned`` when the scan ran out of time), and the syntax check's fields,
    when the file was checked."""
    fields = list_fields("secrets", [f.as_dict() for f in findings]) if findings else {}
    if unscanned is not None:
        fields["secrets_unscanned"] = unscanned.fields()
    if syntax is not None:
        fields.update(syntax.fields())
    return fields


def dry_run_note(
    findings: list[Finding], syntax: SyntaxReport | None, unscanned: Unscanned | None = None
) -> str:
    """What a dry run's message adds: the secrets warning and the syntax sentence, each
    when there is one (with a leading space)."""
    parts = [secrets_warning(findings, unscanned)] if findings or unscanned else []
    if syntax is not None and syntax.sentence():
        parts.append(syntax.sentence())
    return "".join(" " + p for p in parts)


def findings_fields(applied: Applied) -> dict[str, object]:
    """The ``secrets`` field of a result, when the change added credential-like text, and
    the syntax check's fields, when the file was checked."""
    fields = list_fields("secrets", applied.findings) if applied.findings else {}
    if applied.secrets_unscanned is not None:
        fields["secrets_unscanned"] = applied.secrets_unscanned
    if applied.syntax is not None:
        fields.update(applied.syntax)
    return fields

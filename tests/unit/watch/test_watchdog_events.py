"""What the watchdog observer's events (macOS's FSEvents, Windows's
ReadDirectoryChangesW) mean for the tracked files: folders made, removed or renamed,
lost events, renames that change only the case of a name."""

from __future__ import annotations

import asyncio

import pytest
from watchdog import events

from steadyhand.watch.watcher import _Watchdog


async def _seen(raw: list[events.FileSystemEvent], roots: set[str]) -> list[tuple[str, str]]:
    seen: list[tuple[str, str]] = []
    w = _Watchdog(asyncio.get_running_loop(), lambda p, k: seen.append((p, k)))
    w.watched = set(roots)
    for event in raw:
        w.on_event(event)
    await asyncio.sleep(0.01)
    return seen


async def test_file_events() -> None:
    seen = await _seen(
        [
            events.FileModifiedEvent("/ws/a.txt"),
            events.FileClosedEvent("/ws/a.txt"),
            events.FileCreatedEvent("/ws/b.txt"),
            events.FileDeletedEvent("/ws/c.txt"),
            events.FileMovedEvent("/ws/d.txt", "/ws/e.txt"),
            events.FileCreatedEvent("/ws/.a.txt.steadyhand-12-0123abcd.tmp"),
        ],
        {"/ws"},
    )
    assert seen == [
        ("/ws/a.txt", "modified"),
        ("/ws/a.txt", "modified"),
        ("/ws/b.txt", "created"),
        ("/ws/c.txt", "deleted"),
        ("/ws/d.txt", "moved"),
        ("/ws/e.txt", "created"),
    ]


async def test_a_rename_of_case_only_reports_both_spellings() -> None:
    seen = await _seen([events.FileMovedEvent("/ws/Readme.md", "/ws/README.md")], {"/ws"})
    assert seen == [("/ws/Readme.md", "moved"), ("/ws/README.md", "created")]


async def test_folders_made_removed_or_renamed_are_checked_again() -> None:
    seen = await _seen(
        [
            events.DirCreatedEvent("/ws/new"),
            events.DirDeletedEvent("/ws/gone"),
            events.DirMovedEvent("/ws/Src", "/ws/src"),
            events.DirModifiedEvent("/ws"),  # every change in it: nothing of its own
        ],
        {"/ws"},
    )
    assert seen == [
        ("/ws/new", "folder"),
        ("/ws/gone", "folder"),
        ("/ws/Src", "folder"),
        ("/ws/src", "folder"),
    ]


async def test_lost_events_have_every_root_checked_again() -> None:
    lost = getattr(events, "EventsLostEvent", None)
    if lost is None:
        pytest.skip("this watchdog reports no lost events")
    seen = await _seen([lost("/ws", is_directory=True)], {"/ws", "/other"})
    assert seen == [("/other", "folder"), ("/ws", "folder")]

"""What the garbage collector does while the server starts.

Start-up makes tens of thousands of objects that live as long as the server: modules,
classes, functions, the tool source's tables, the LSP types. The interpreter's own
objects are set aside before it begins (:func:`hold`), and everything start-up made
once it is over (:func:`release`), so that no later collection walks them. In between,
young objects are still collected, in larger batches, so that the garbage importing
makes (classes replaced by their slotted copies, above all) is freed while start-up
goes on and its memory reused; but no collection of everything runs, which would walk
every object made so far, all of it alive.

(Collecting nothing until start-up is over was measured too: fewer instructions, but
the garbage freed late leaves its memory scattered among live objects, and the idle
server stayed some 6 MiB larger.)
"""

from __future__ import annotations

import gc

#: During start-up: young objects collected in batches of this many (the interpreter's
#: default is 700), and no collection of everything.
START_UP_THRESHOLDS = (10_000, 10, 1_000_000)

_before: tuple[int, int, int] | None = None


def hold() -> None:
    """Start-up begins (see the module's docstring)."""
    global _before
    gc.freeze()
    if _before is None:
        _before = gc.get_threshold()
        gc.set_threshold(*START_UP_THRESHOLDS)


def release() -> None:
    """Start-up is over, before the first answer: what it made is set aside, and the
    collector runs as it did before :func:`hold`."""
    global _before
    gc.freeze()
    if _before is not None:
        gc.set_threshold(*_before)
        _before = None

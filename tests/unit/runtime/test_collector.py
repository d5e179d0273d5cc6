"""The garbage collector at start-up (runtime/collector.py): young garbage is still
freed while start-up goes on, nothing walks every object made so far, and what start-up
made is set aside at its end. Each check runs in an interpreter of its own, since the
collector's state is the process's."""

from __future__ import annotations

import subprocess
import sys
import textwrap


def _run(code: str) -> None:
    out = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 0, out.stderr


def test_start_up_frees_young_garbage_without_walking_everything() -> None:
    _run(
        """
        import gc, weakref
        from steadyhand.runtime import collector

        before = gc.get_threshold()
        generations = []
        gc.callbacks.append(
            lambda phase, info: generations.append(info["generation"]) if phase == "start" else None
        )
        collector.hold()

        class Node:
            pass

        alive = []
        garbage = []
        for i in range(200_000):  # classes, functions, tables: and cycles no one keeps
            alive.append(Node())
            cycle = Node()
            cycle.me = cycle
            if i % 1000 == 0:
                garbage.append(weakref.ref(cycle))
        del cycle
        assert generations and max(generations) < 2, set(generations)
        assert sum(r() is None for r in garbage) > len(garbage) * 0.9  # freed meanwhile
        collector.release()
        assert gc.get_threshold() == before
        assert gc.get_freeze_count() > len(alive)  # set aside: no later collection walks it
        """
    )


def test_release_without_hold_changes_nothing_but_setting_aside() -> None:
    _run(
        """
        import gc
        from steadyhand.runtime import collector

        gc.set_threshold(123, 4, 5)
        collector.release()
        assert gc.get_threshold() == (123, 4, 5)
        collector.hold()
        collector.hold()  # nested: the thresholds before the first are the ones restored
        collector.release()
        assert gc.get_threshold() == (123, 4, 5)
        """
    )

"""Syncs made on a thread of their own, so that the work around them need not wait.

A sync (``fsync``) waits for the disk, some 0.2-0.4 ms each on a quiet SSD and far more
on a busy one, while the interpreter is free: :func:`os.fsync` lets go of it. A change
that is durable before it is answered syncs its new bytes before they take the file's
name, and the folder after (:mod:`steadyhand.fs.atomic`); with :func:`start`, the
checks, the history and the answer's text are worked out meanwhile, and the change waits
(:meth:`Sync.wait`) only where it must: before the new file takes the name, and before
the answer goes out. A failed sync is never lost: :meth:`Sync.wait` raises its error.

One thread takes the syncs in turn (a second sync waits for the first, as it would
inline). :func:`start` returns once that thread has taken the sync up, so it is not
left waiting for the interpreter while the caller works on.
"""

from __future__ import annotations

import _thread
import os
import queue
import threading
from collections.abc import Callable

__all__ = ["Sync", "done", "inline", "start"]


class Sync:
    """One sync handed to the syncing thread (or made at once: ``inline``)."""

    __slots__ = ("_call", "_done", "_error", "_taken")

    def __init__(self, call: Callable[[], None]) -> None:
        self._call = call
        self._error: BaseException | None = None
        self._taken = _thread.allocate_lock()
        self._taken.acquire()
        self._done = _thread.allocate_lock()
        self._done.acquire()

    def run(self) -> None:
        self._taken.release()
        try:
            self._call()
        except BaseException as exc:  # handed to whoever waits: never lost
            self._error = exc
        finally:
            self._done.release()

    def wait(self) -> None:
        """Block until the sync is made; raise its error if it failed."""
        self._done.acquire()
        self._done.release()
        if self._error is not None:
            raise self._error

    @property
    def finished(self) -> bool:
        return not self._done.locked()


_jobs: queue.SimpleQueue[Sync] = queue.SimpleQueue()
_worker: threading.Thread | None = None
_start_lock = threading.Lock()


def _forget_worker() -> None:
    """In a child made by ``fork``: the parent's thread is not there, nor its queue."""
    global _jobs, _worker
    _jobs = queue.SimpleQueue()
    _worker = None


if hasattr(os, "register_at_fork"):  # (not on Windows)
    os.register_at_fork(after_in_child=_forget_worker)


def _serve() -> None:
    while True:
        _jobs.get().run()


def _running() -> bool:
    """Whether the syncing thread runs (started on first use); False where no thread can
    be started (the interpreter shutting down)."""
    global _worker
    if _worker is not None and _worker.is_alive():
        return True
    with _start_lock:
        if _worker is None or not _worker.is_alive():
            worker = threading.Thread(target=_serve, name="steadyhand-sync", daemon=True)
            try:
                worker.start()
            except RuntimeError:
                return False
            _worker = worker
    return True


def start(call: Callable[[], None]) -> Sync:
    """Make ``call`` (a sync) on the syncing thread; returns once that thread has it.
    Where there is no such thread it is made at once (its error kept for :meth:`wait`)."""
    job = Sync(call)
    if not _running():
        job.run()
        return job
    _jobs.put(job)
    job._taken.acquire()  # the thread has it: the interpreter is the caller's again
    return job


def done() -> Sync:
    """A sync with nothing left to wait for."""
    job = Sync(lambda: None)
    job.run()
    return job


def inline(call: Callable[[], None]) -> Sync:
    """Make ``call`` now, on this thread; its error is raised by :meth:`Sync.wait`."""
    job = Sync(call)
    job.run()
    return job

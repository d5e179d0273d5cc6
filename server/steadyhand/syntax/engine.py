"""The syntax check of a change, and the trees it keeps to be quick.

A change's new text is compared with its old text: :meth:`Checker.check` answers the
errors the change introduced (:func:`~steadyhand.syntax.issues.introduced`), or that the
check was skipped (it could not finish within the deadline).

Speed comes from four things:

* **The tree of the old text is already there.** A read hands the text to
  :meth:`Checker.prime`; it is parsed in slices of a couple of milliseconds on the event
  loop once nothing else has happened for a moment (so never while an answer waits), and
  kept by content hash. A change leaves the tree of its new text behind the same way
  (:meth:`Outcome.commit`), so the next change to that file starts from it too.
* **Nothing but the check is done before the answer.** The tree a change leaves is the
  old one told about the change; telling it is done on the event loop's next turns,
  after the answer went out (:class:`Later`), or by the next check if that comes first.
* **Most of the text is left out.** The change is checked on its new text with the
  siblings far from every edit removed (:mod:`steadyhand.syntax.elide`), each edit cut
  to what it changes (the ends it leaves as they were are no part of it): a few hundred
  bytes to parse instead of the whole file, however large, and one parse, for an edit
  as for a write changing lines all over it (:class:`Tally` counts them). When that
  parses without error, the change introduced none; when it does not and the old text
  had no error, every error found is the change's, placed where it is in the whole
  file. A text that had errors already is judged whole (reparsed incrementally from its
  tree), since how the parser recovers from an error depends on everything around it;
  what no old error accounts for counts against the change only when the change makes
  it on its own (:meth:`Checker._attribute`), else it is reported with its doubt, never
  refused. Errors where the grammar cannot judge the text carry a doubt too
  (:mod:`steadyhand.syntax.gaps`).
* **Positions are worked out locally.** Byte offsets come from character offsets through
  marks a few thousand characters apart (ASCII text needs none), lines and columns from
  the nearest node of the tree, or from the edit just before, never by counting from the
  top.

A parse that would not finish before the deadline is stopped (tree-sitter's progress
callback) and the check skipped; the parse is then finished in the background, so the
next change to that text is checked.
"""

from __future__ import annotations

import asyncio
import bisect
import contextlib
import dataclasses
import functools
import logging
import sys
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from tree_sitter import Language, Node, Parser, Range, Tree

from steadyhand.syntax import gaps, grammars
from steadyhand.syntax.elide import MARGIN, removals, top_removals
from steadyhand.syntax.issues import Edit, Issue, introduced, map_offset
from steadyhand.syntax.offsets import (
    CharEdit,
    Marks,
    apply_edits,
    build_marks,
    byte_offset,
    cores,
    encode,
    shift_marks,
    whole_edit,
)
from steadyhand.syntax.tree import issue_at, issues, points_at

log = logging.getLogger(__name__)

#: A check that cannot finish within this many seconds is skipped.
DEADLINE_S = 0.05
#: The environment variable that sets another deadline, in milliseconds (a machine too
#: busy or too slow for 50 ms, such as a test run sharing its cores); see
#: :func:`deadline_from`.
DEADLINE_ENV = "STEADYHAND_SYNTAX_DEADLINE_MS"
#: The longest deadline it may set, in milliseconds: a check runs on the event loop, and
#: holds every other request up while it runs.
DEADLINE_MAX_MS = 60_000.0
#: Texts larger than this (bytes of UTF-8) are not checked, nor parsed in the background.
#: A tree takes some 40 times the memory of its text; a text of 1 MiB (about 25,000
#: lines of code) takes some 50 ms to parse here, longer than a check may take.
MAX_BYTES = 1 << 20
#: Background parsing runs in slices of about this many seconds ...
SLICE_S = 0.002
#: ... once nothing has been checked or read for this many seconds.
IDLE_S = 0.02
#: Trees kept: at most this many, of texts of at most this many bytes in all (versions
#: of one file made by changes share most of their trees).
CACHE_ENTRIES = 16
CACHE_BYTES = 1 << 20
#: Texts waiting to be parsed in the background; older requests are dropped.
MAX_JOBS = 8
#: Languages whose siblings depend on their neighbours further than others: the check
#: keeps this many siblings on each side of what a change touches (else
#: :data:`~steadyhand.syntax.elide.MARGIN`). (YAML's indentation needs one on each
#: side, which every language now has.)
WIDER_MARGIN = {"yaml": (1, 1)}
#: Changes of at most this many edits have each edit cut to what it changes.
TRIM = 8


class Splicelike(Protocol):
    """What a change is made of: ``text[start:end]`` (characters of the old text)
    replaced with ``text``. (The tools' ``Splice`` has exactly this shape.)"""

    @property
    def start(self) -> int: ...
    @property
    def end(self) -> int: ...
    @property
    def text(self) -> str: ...


@dataclass(eq=False)
class Entry:
    """The tree of one text, and what is known about it."""

    lang: str
    tree: Tree
    #: the text's UTF-8 form (None once handed on to the entry of a change made from it)
    data: bytearray | None
    marks: Marks | None
    size: int
    #: False when the tree was edited without a full reparse since (still a good base
    #: for a reparse, and its siblings are still where the text's siblings are)
    fresh: bool = True
    #: Where the text has syntax errors the tree does not show (byte ranges): those a
    #: change introduced, found without reparsing the whole text, each from the bracket
    #: it leaves open, if any (the error is there even where it is no longer noticed)
    known: tuple[tuple[int, int], ...] = ()


@dataclass(eq=False)
class Later:
    """The entry of a text a change made, still to be made from the entry of the text
    before it (its tree told about the change): made after the change's answer went out,
    or when a check asks for it first, whichever comes first."""

    lang: str
    size: int
    make: Callable[[], Entry]


@dataclass(eq=False)
class Job:
    """A parse run in slices: of a text (``view``, or ``data`` already encoded), or of a
    text still to be loaded (``load``)."""

    lang: str
    key: str | None
    view: str | None = None
    load: Callable[[], tuple[str, str] | None] | None = None
    data: bytearray | None = None
    parser: Parser | None = None
    marks: Marks | None = None
    #: the parse under way (None: not started)
    reader: Reader | None = None

    def step(self, language: Language, until: float) -> Entry | None:
        """Parse until ``until`` (perf_counter seconds); the entry once done, else None."""
        if self.data is None:
            if self.view is None and self.load is not None:
                loaded = self.load()
                self.load = None
                if loaded is None:
                    raise _Dropped
                self.key, self.view = loaded
            if self.view is None:
                raise _Dropped
            self.data = bytearray(encode(self.view))
            self.marks = build_marks(self.view)
            self.view = None
        if self.parser is None:
            self.parser = Parser(language)
        if self.reader is None:
            tree, self.reader = _stopped(self.parser, self.data, until)
        else:
            tree = _parse(self.parser, self.data, until, reader=self.reader)
        if tree is None:
            return None
        return Entry(self.lang, tree, self.data, self.marks, len(self.data))


@dataclass
class Tally:
    """How much parsing the checks did (a debug statistic: tests count the parses a check
    runs; the background's parses are not counted)."""

    #: parses run by checks, and the bytes they parsed
    parses: int = 0
    parsed_bytes: int = 0

    def count(self, data: bytes | bytearray) -> None:
        self.parses += 1
        self.parsed_bytes += len(data)


class _Dropped(Exception):
    """A background job whose text went away (the file changed or vanished)."""


class Reader:
    """Hands a text to tree-sitter piece by piece (a parse that can be stopped at a
    deadline reads its text through a callback).

    tree-sitter's Python binding (0.26) keeps one reference to every piece a read
    callback hands it and never lets go of it; each piece holds the whole text, so
    every such parse would keep its text alive for good. :meth:`settle` gives those
    references back once the binding is done with them (checked once per process, by
    :func:`_keeps_pieces`, so a binding without the fault is left alone).
    """

    __slots__ = ("pieces", "view")

    def __init__(self, data: bytes | bytearray) -> None:
        self.view: memoryview | None = memoryview(data)
        self.pieces: list[memoryview] = []

    def __call__(self, offset: int, _point: object) -> memoryview | None:
        view = self.view
        if view is None or offset >= len(view):
            return None  # the end of the text
        piece = view[offset:]
        self.pieces.append(piece)
        return piece

    def settle(self) -> None:
        """After a call to ``parse`` returned (or was stopped)."""
        if _KEEPS_PIECES.get(True, False):
            for piece in self.pieces:
                _decref(piece)
        self.pieces.clear()

    def close(self) -> None:
        """The parse is over: let go of the text (the tree keeps the reader)."""
        self.settle()
        if self.view is not None:
            with contextlib.suppress(BufferError):
                self.view.release()
            self.view = None


#: Whether the binding keeps a reference to what a read callback hands it (see
#: :class:`Reader`), found out the first time it matters.
_KEEPS_PIECES: dict[bool, bool] = {}


def _decref(obj: object) -> None:
    import ctypes

    ctypes.pythonapi.Py_DecRef(ctypes.py_object(obj))


def _keeps_pieces(language: Language) -> bool:
    """Parse a tiny text through a callback and see whether the piece handed over is
    still referenced once nothing of ours holds it."""
    known = _KEEPS_PIECES.get(True)
    if known is None:
        piece = bytearray(b"\n")
        before = sys.getrefcount(piece)

        def read(offset: int, _point: object) -> bytearray | None:
            return piece if offset == 0 else None

        tree = Parser(language).parse(read)
        del tree, read
        known = _KEEPS_PIECES[True] = sys.getrefcount(piece) > before
        if known:
            _decref(piece)
    return known


def _parse(
    parser: Parser,
    data: bytes | bytearray,
    until: float,
    old_tree: Tree | None = None,
    *,
    reader: Reader | None = None,
    tally: Tally | None = None,
) -> Tree | None:
    """Parse ``data`` (from ``old_tree``, edited to fit it, when given) until the
    deadline; None when stopped there. A ``reader`` given is of a parse stopped before,
    which goes on where it stopped; else a new parse starts (counted in ``tally``)."""
    if tally is not None and reader is None:
        tally.count(data)
    if parser.language is not None:
        _keeps_pieces(parser.language)
    resume = reader is not None
    if reader is None:
        parser.reset()
        reader = Reader(data)

    def past(_offset: int, _has_error: bool) -> bool:
        return time.perf_counter() > until

    try:
        if old_tree is not None:
            tree = parser.parse(reader, old_tree, progress_callback=past)
        else:
            tree = parser.parse(reader, progress_callback=past)
    except ValueError:
        reader.settle()
        if not resume:
            reader.close()
        return None
    reader.close()
    return tree


def _stopped(
    parser: Parser,
    data: bytes | bytearray,
    until: float,
    old_tree: Tree | None = None,
    tally: Tally | None = None,
) -> tuple[Tree | None, Reader]:
    """Like :func:`_parse`, and the reader, to go on with a parse stopped at the
    deadline (pass it back as ``reader``)."""
    if tally is not None:
        tally.count(data)
    parser.reset()
    reader = Reader(data)
    tree = _parse(parser, data, until, old_tree, reader=reader)
    return tree, reader


@dataclass
class Outcome:
    """What the check of one change found."""

    #: the errors the change introduced, in text order
    errors: tuple[Issue, ...] = ()
    #: why the check did not run to its end ("" when it did)
    skipped: str = ""
    #: how many parses the check ran (a debug statistic)
    parses: int = field(default=0, compare=False)
    _store: Callable[[str], None] | None = field(default=None, repr=False)

    def commit(self, key: str) -> None:
        """The change was made and its new text has content key ``key``: keep the tree
        of that text for the next check."""
        store, self._store = self._store, None
        if store is not None:
            store(key)


@dataclass(frozen=True, slots=True)
class Text:
    """A text as the check sees it: its content key (a hash) and its characters."""

    key: str
    view: str


def deadline_from(environ: Mapping[str, str]) -> float:
    """The deadline of a check, in seconds: ``$STEADYHAND_SYNTAX_DEADLINE_MS`` when it is a
    number of milliseconds over 0 and at most :data:`DEADLINE_MAX_MS`, else
    :data:`DEADLINE_S` (an unset, empty or unreadable value changes nothing)."""
    raw = environ.get(DEADLINE_ENV, "").strip()
    try:
        ms = float(raw)
    except ValueError:
        return DEADLINE_S
    if not 0.0 < ms <= DEADLINE_MAX_MS:  # (NaN fails both)
        return DEADLINE_S
    return ms / 1000.0


class Checker:
    """Syntax checks of changes, with the trees they need (see the module docstring)."""

    def __init__(
        self,
        *,
        deadline: float = DEADLINE_S,
        entries: int = CACHE_ENTRIES,
        budget: int = CACHE_BYTES,
    ) -> None:
        self.deadline = deadline
        self.max_entries = entries
        self.budget = budget
        self._entries: OrderedDict[tuple[str, str], Entry | Later] = OrderedDict()
        self._bytes = 0
        self._jobs: OrderedDict[tuple[str, str | None, int], Job] = OrderedDict()
        self._job_ids = 0
        self._parsers: dict[str, Parser] = {}
        self._last_activity = 0.0
        self._timer: asyncio.TimerHandle | None = None
        self.tally = Tally()

    # -- the cache -------------------------------------------------------------------

    def get(self, lang: str, key: str) -> Entry | None:
        e = self._entries.get((lang, key))
        if e is None:
            return None
        self._entries.move_to_end((lang, key))
        if isinstance(e, Later):
            return self._settle(key, e)
        return e

    def _settle(self, key: str, later: Later) -> Entry | None:
        """Make the entry ``later`` stands for, in its place in the cache (None, and
        nothing kept, should that fail: the next check parses instead)."""
        k = (later.lang, key)
        try:
            made = later.make()
        except Exception:  # bookkeeping that fails must never fail a change
            log.exception("syntax check: keeping the tree of a changed %s text failed", later.lang)
            if self._entries.get(k) is later:
                del self._entries[k]
                self._bytes -= later.size
            return None
        if self._entries.get(k) is later:
            self._entries[k] = made  # (the same size: the same text)
        return made

    def put_later(self, key: str, later: Later) -> None:
        """Keep ``later`` for the text of key ``key``, and make it once the answer in
        progress went out (when a loop runs; else when a check asks for it). The trees
        it displaces are let go of then too (freeing a tree of a large text takes a
        while)."""
        dropped: list[Entry | Later] = []
        self.put(key, later, dropped)
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return

        def settle() -> None:
            dropped.clear()
            if self._entries.get((later.lang, key)) is later:
                self._settle(key, later)

        # Two hops: a call that had to wait is answered from a callback already queued.
        loop.call_soon(loop.call_soon, settle)

    def put(
        self, key: str, entry: Entry | Later, dropped: list[Entry | Later] | None = None
    ) -> None:
        """Keep ``entry`` for the text of key ``key``, dropping the oldest entries past
        the bounds (into ``dropped``, when given, to be let go of later)."""
        k = (entry.lang, key)
        old = self._entries.pop(k, None)
        if old is not None:
            self._bytes -= old.size
            if dropped is not None:
                dropped.append(old)
        self._entries[k] = entry
        self._bytes += entry.size
        while self._entries and (
            len(self._entries) > self.max_entries or self._bytes > self.budget
        ):
            _, gone = self._entries.popitem(last=False)
            self._bytes -= gone.size
            if dropped is not None:
                dropped.append(gone)

    def cached(self, lang: str, key: str) -> bool:
        return (lang, key) in self._entries

    # -- background parsing ---------------------------------------------------------

    def prime(self, lang: str, key: str, view: str) -> None:
        """Parse ``view`` (content key ``key``) in the background, unless known."""
        self._touch()
        if (lang, key) in self._entries or len(view) > MAX_BYTES or self._has_job(lang, key):
            return
        self._queue(Job(lang, key, view=view))

    def prime_with(self, lang: str, load: Callable[[], tuple[str, str] | None]) -> None:
        """Parse, in the background, the text ``load()`` answers then as ``(key, view)``
        (None: nothing to parse), unless known by then."""
        self._touch()
        self._queue(Job(lang, None, load=load))

    def _has_job(self, lang: str, key: str) -> bool:
        return any(j.lang == lang and j.key == key for j in self._jobs.values())

    def _queue(self, job: Job) -> None:
        self._job_ids += 1
        self._jobs[(job.lang, job.key, self._job_ids)] = job
        while len(self._jobs) > MAX_JOBS:
            self._jobs.popitem(last=False)
        self._schedule()

    def _touch(self) -> None:
        self._last_activity = time.perf_counter()

    def _schedule(self, delay: float = IDLE_S) -> None:
        if self._timer is not None or not self._jobs:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return  # no loop here: :meth:`drain` runs the jobs
        self._timer = loop.call_later(delay, self._tick)

    def _tick(self) -> None:
        self._timer = None
        quiet = time.perf_counter() - self._last_activity
        if quiet < IDLE_S:
            self._schedule(IDLE_S - quiet)
            return
        self.work(time.perf_counter() + SLICE_S)
        self._schedule(0)

    def work(self, until: float) -> bool:
        """Run background jobs until ``until``; whether any is left."""
        while self._jobs and time.perf_counter() < until:
            k = next(iter(self._jobs))
            job = self._jobs[k]
            language = grammars.language(job.lang)
            try:
                if language is None:
                    raise _Dropped
                if (
                    job.key is not None
                    and (job.lang, job.key) in self._entries
                    and job.reader is None
                ):
                    raise _Dropped
                entry = job.step(language, until)
            except _Dropped:
                self._jobs.pop(k, None)
                continue
            except Exception:  # never let a grammar's failure reach the loop
                log.exception("syntax check: background parse of a %s text failed", job.lang)
                self._jobs.pop(k, None)
                continue
            if entry is None:
                return True
            self._jobs.pop(k, None)
            if job.key is not None:
                self.put(job.key, entry)
        return bool(self._jobs)

    def drain(self) -> None:
        """Run every background job to its end (tests, and loops that are not running)."""
        while self.work(time.perf_counter() + 60):
            pass

    def _take_job(self, lang: str, key: str, until: float) -> Entry | None:
        """The tree of a text being parsed in the background, finished now if it can be
        before ``until``."""
        for k, job in list(self._jobs.items()):
            if job.lang == lang and job.key == key:
                language = grammars.language(lang)
                if language is None:
                    return None
                try:
                    entry = job.step(language, until)
                except _Dropped:
                    self._jobs.pop(k, None)
                    return None
                if job.data is not None:
                    self.tally.count(job.data)  # (finished here, for this check)
                if entry is None:
                    return None
                self._jobs.pop(k, None)
                self.put(key, entry)
                return entry
        return None

    def _too_slow(self) -> str:
        return f"it could not finish within {self.deadline * 1000:.0f} ms"

    def _parser(self, lang: str, language: Language) -> Parser:
        p = self._parsers.get(lang)
        if p is None:
            p = self._parsers[lang] = Parser(language)
        return p

    # -- the check -------------------------------------------------------------------

    def check(
        self,
        lang: str,
        before: Text | None,
        after: str,
        splices: Sequence[Splicelike] | None = None,
    ) -> Outcome:
        """The errors the change from ``before`` (None: a new file) to ``after``
        introduced. ``splices``: the change as replacements of ``before.view`` (ordered),
        when known; else the texts are compared."""
        start = self.tally.parses
        outcome = self._check(lang, before, after, splices)
        outcome.parses = self.tally.parses - start
        return outcome

    def _check(
        self,
        lang: str,
        before: Text | None,
        after: str,
        splices: Sequence[Splicelike] | None,
    ) -> Outcome:
        self._touch()
        until = time.perf_counter() + self.deadline
        language = grammars.language(lang)
        if language is None:
            return Outcome()
        if len(after) > MAX_BYTES or (before is not None and len(before.view) > MAX_BYTES):
            return Outcome(skipped="the file is too large to check")
        if before is not None:
            entry = self.get(lang, before.key) or self._take_job(lang, before.key, until)
            if entry is not None:
                return self._from_tree(lang, language, entry, before, after, splices, until)
        return self._without_tree(lang, language, before, after, splices, until)

    def _data(self, entry: Entry, text: Text) -> bytearray:
        if entry.data is None:
            entry.data = bytearray(encode(text.view))
            entry.marks = build_marks(text.view)
        return entry.data

    def _edits(
        self,
        entry: Entry,
        before: Text,
        after: str,
        splices: Sequence[Splicelike] | None,
    ) -> tuple[list[CharEdit] | None, list[Edit], list[bytes]]:
        """The change as byte edits of the old text, with the bytes each puts in (and as
        character edits, when made of splices)."""
        data = self._data(entry, before)
        if splices is None:
            e, mid = whole_edit(data, encode(after))
            return None, [e], [mid]
        view, marks = before.view, entry.marks
        char_edits: list[CharEdit] = []
        edits: list[Edit] = []
        mids: list[bytes] = []
        for sp in splices:
            mid = encode(sp.text)
            bs = byte_offset(view, marks, sp.start)
            be = byte_offset(view, marks, sp.end) if sp.end != sp.start else bs
            char_edits.append(CharEdit(sp.start, sp.end, len(sp.text), bs, be, len(mid)))
            edits.append(Edit(bs, be, len(mid)))
            mids.append(mid)
        return char_edits, edits, mids

    def _from_tree(
        self,
        lang: str,
        language: Language,
        entry: Entry,
        before: Text,
        after: str,
        splices: Sequence[Splicelike] | None,
        until: float,
    ) -> Outcome:
        char_edits, edits, mids = self._edits(entry, before, after, splices)

        def store(key: str, known: tuple[tuple[int, int], ...] = ()) -> None:
            # The old tree, told about the change (not reparsed), serves the next check;
            # telling it is bookkeeping no answer waits for.
            def make() -> Entry:
                made = _edited(entry, lang, edits, mids, char_edits, before, after)
                made.known = known
                return made

            size = entry.size + sum(
                len(m) - (e.end - e.start) for e, m in zip(edits, mids, strict=True)
            )
            self.put_later(key, Later(lang, size, make))

        if not edits:
            return Outcome(_store=lambda key: self.put(key, entry))
        data = self._data(entry, before)
        parser = self._parser(lang, language)
        exact = functools.partial(
            self._exact, lang, parser, entry, before, after, edits, mids, char_edits, until
        )
        if entry.tree.root_node.has_error:
            # A text with errors: how the parser recovers from them shapes the tree all
            # around, so only the whole text tells what the change did.
            return exact()
        margin = WIDER_MARGIN.get(lang, MARGIN)
        # What an edit leaves as it was at either end is no part of the change: the text
        # around the change is cut around what it really changes. (The lines a write
        # changes are checked as they are: each is about one sibling already.)
        core_edits, core_mids = cores(data, edits, mids) if len(edits) <= TRIM else (edits, mids)
        if not core_edits:  # (the same text)
            return Outcome(_store=lambda key: self.put(key, entry))
        cut = removals(entry.tree.root_node, [(e.start, e.end) for e in core_edits], margin)
        if any(_meets(span, c) for span in entry.known for c in cut):
            return exact()  # errors a change left lie where this check would not look
        short = Shortened(data, cut, core_edits, core_mids)
        # A few hundred bytes: parsed at once, from the bytes (no deadline to watch).
        parser.reset()
        self.tally.count(short.new)
        tree = parser.parse(short.new)
        if not tree.root_node.has_error:
            return Outcome(_store=store)  # (and the errors a change left are gone)
        if entry.known:
            return exact()  # which of these errors were there before? the whole text says
        if not entry.fresh:
            # A tree only told about earlier changes may group the text otherwise than a
            # parse would (a YAML line dropped joins two items): what was left out around
            # this change may be what breaks it. The whole text says.
            return exact()
        # The old text had no error: every error of the new one is the change's.
        new_found, _ = issues(tree.root_node, short.new)
        new_found = self._judge(lang, parser, tree, short.new, new_found, until)
        new_data = apply_edits(data, edits, mids)
        placed = tuple(short.place(i, new_data) for i in new_found)
        return Outcome(placed, _store=lambda key: store(key, tuple(_cause(i) for i in placed)))

    def _exact(
        self,
        lang: str,
        parser: Parser,
        entry: Entry,
        before: Text,
        after: str,
        edits: list[Edit],
        mids: list[bytes],
        char_edits: list[CharEdit] | None,
        until: float,
    ) -> Outcome:
        """The errors of the whole new text that the whole old text did not have, each
        text parsed incrementally from the tree kept for the old one."""
        data = self._data(entry, before)
        if not entry.fresh:  # a tree only told about earlier changes: reparse it first
            tree = _parse(parser, data, until, entry.tree, tally=self.tally)
            if tree is None:
                return Outcome(skipped=self._too_slow())
            entry.tree, entry.fresh, entry.known = tree, True, ()
        old_found, complete = issues(entry.tree.root_node, data)
        new_data = bytearray(apply_edits(data, edits, mids))
        edited = entry.tree.copy()
        _edit_tree(edited, data, edits, mids)
        new_tree = _parse(parser, new_data, until, edited, tally=self.tally)
        if new_tree is None:
            return Outcome(skipped=self._too_slow())
        regions = _regions(edited.changed_ranges(new_tree), edits, new_data)
        new_found, _ = issues(new_tree.root_node, new_data, regions)
        # Errors outside those ranges are the same before and after; only the others
        # can account for the errors inside them.
        near = [o for o in old_found if _touches(o, edits, regions)]
        blamed = introduced(near, new_found, edits) if complete else []
        if blamed:
            blamed = self._attribute(
                lang, parser, entry.tree, data, old_found, edits, mids, new_tree, until, blamed
            )
            blamed = self._judge(lang, parser, new_tree, new_data, blamed, until)
        marks = (
            shift_marks(entry.marks, char_edits, len(before.view))
            if char_edits is not None
            else build_marks(after)
        )
        fresh = Entry(lang, new_tree, new_data, marks, len(new_data))
        return Outcome(tuple(blamed), _store=lambda key: self.put(key, fresh))

    def _without_tree(
        self,
        lang: str,
        language: Language,
        before: Text | None,
        after: str,
        splices: Sequence[Splicelike] | None,
        until: float,
    ) -> Outcome:
        """No tree of the old text: parse the new one; the old one only if needed."""
        parser = self._parser(lang, language)
        new_data = bytearray(encode(after))
        tree, reader = _stopped(parser, new_data, until, tally=self.tally)
        if tree is None:
            # Finish it in the background, for the next change, once it has a key.
            job = Job(lang, None, data=new_data, parser=parser, marks=build_marks(after))
            job.reader = reader
            self._parsers.pop(lang, None)  # that parser now belongs to the job

            def later(key: str) -> None:
                job.key = key
                self._queue(job)

            return Outcome(skipped=self._too_slow(), _store=later)
        fresh = Entry(lang, tree, new_data, build_marks(after), len(new_data))

        def store(key: str) -> None:
            self.put(key, fresh)

        if not tree.root_node.has_error:
            return Outcome(_store=store)
        found, _ = issues(tree.root_node, new_data)
        if before is None:
            return Outcome(
                tuple(self._judge(lang, parser, tree, new_data, found, until)), _store=store
            )
        old_data = bytearray(encode(before.view))
        old_tree = _parse(parser, old_data, until, tally=self.tally)
        if old_tree is None:
            return Outcome(skipped=self._too_slow(), _store=store)
        self.put(
            before.key, Entry(lang, old_tree, old_data, build_marks(before.view), len(old_data))
        )
        old_found, complete = issues(old_tree.root_node, old_data)
        if not complete:
            return Outcome(_store=store)
        if splices is not None:
            view = before.view
            edits = [
                Edit(
                    len(encode(view[: sp.start])), len(encode(view[: sp.end])), len(encode(sp.text))
                )
                for sp in splices
            ]
            mids = [encode(sp.text) for sp in splices]
        else:
            edit, mid = whole_edit(old_data, new_data)
            edits, mids = [edit], [mid]
        blamed = introduced(old_found, found, edits)
        if blamed:
            blamed = self._attribute(
                lang, parser, old_tree, old_data, old_found, edits, mids, tree, until, blamed
            )
            blamed = self._judge(lang, parser, tree, new_data, blamed, until)
        return Outcome(tuple(blamed), _store=store)

    def _attribute(
        self,
        lang: str,
        parser: Parser,
        old_tree: Tree,
        data: bytearray,
        old_found: Sequence[Issue],
        edits: list[Edit],
        mids: list[bytes],
        new_tree: Tree,
        until: float,
        blamed: Sequence[Issue],
    ) -> list[Issue]:
        """``blamed`` (errors of the new text that no error of the old text accounts for),
        as the change's own errors where it can tell, else each with the doubt it leaves.

        How a parser recovers from an error depends on everything around it, so an error
        the text had may show up elsewhere, with another message, after a change that
        adds none. So the change is judged on its own where it can be: on the text around
        it with the rest left out (:func:`~steadyhand.syntax.elide.removals`, else, in a
        text too small for that, what lies far from it at the top of the text). When that
        text parses before the change (the old errors lie in what was left out) and not
        after, the errors it then has are the change's own, placed in the whole text.
        When that text does not parse before the change either (the old errors lie
        next to it, or the tree of the old text groups it wrongly around them), an error
        is still the change's own when it lies inside a construct the change touched that
        parsed without error before, with the same bounds (:func:`_confined`). Every
        other error of ``blamed`` is reported as one the check cannot pin on the change.
        """
        if not old_found:
            return list(blamed)  # the old text had none: they are all the change's
        new_data = apply_edits(data, edits, mids)
        if _comments_only(old_tree, data, new_tree, new_data, edits, mids):
            return []  # the same code, with comments or blank lines added or taken out
        margin = WIDER_MARGIN.get(lang, MARGIN)
        spans = [(e.start, e.end) for e in edits]
        clean_around = False
        for leave_out in (removals, top_removals):
            cut = leave_out(old_tree.root_node, spans, margin)
            if not cut:
                continue
            short = Shortened(data, cut, edits, mids)
            old_short = _parse(parser, short.old, until, tally=self.tally)
            if old_short is None or old_short.root_node.has_error:
                continue
            new_short = _parse(parser, short.new, until, tally=self.tally)
            if new_short is None:
                break
            own, _ = issues(new_short.root_node, short.new)
            if own:
                return [short.place(i, new_data) for i in own]
            clean_around = True
            break
        out: list[Issue] = []
        for issue in blamed:
            if not clean_around and _confined(issue, new_tree, old_tree, edits, mids):
                out.append(issue)
                continue
            line = _nearest_line(issue, old_found, edits, mids, data)
            doubt = (
                f"the file already had a syntax error at line {line}, which may account for "
                "this one"
            )
            out.append(dataclasses.replace(issue, doubt=doubt))
        return out

    def _judge(
        self,
        lang: str,
        parser: Parser,
        tree: Tree,
        data: bytes | bytearray,
        found: Sequence[Issue],
        until: float,
    ) -> list[Issue]:
        """``found`` (errors of ``tree``, of ``data``), without those the language's own
        parser accepts, and each with the doubt it leaves where the grammar cannot judge
        the text (see :mod:`steadyhand.syntax.gaps`)."""
        if not found:
            return []

        def parse(text: bytes) -> list[Issue] | None:
            other = _parse(parser, text, until, tally=self.tally)
            return None if other is None else issues(other.root_node, text)[0]

        return gaps.judge(lang, data, tree.root_node, found, parse)


def _confined(
    issue: Issue, new_tree: Tree, old_tree: Tree, edits: list[Edit], mids: list[bytes]
) -> bool:
    """Whether ``issue`` (of ``new_tree``) lies inside a construct that an edit changed
    and that the old text had, of the same kind and bounds, without any error and in a
    context no error reached (:func:`_clean_context`): the innermost node around the
    error that is not itself an error."""
    lo, hi = issue.span
    node: Node | None = new_tree.root_node.descendant_for_byte_range(lo, hi)
    while node is not None and (
        node.is_error
        or node.is_missing
        or not node.has_error  # (a token where an empty error is reported)
        or node.start_byte > lo
        or node.end_byte < hi
    ):
        node = node.parent
    if node is None or node.parent is None:
        return False  # (the whole text: it had errors)
    start, end = node.start_byte, node.end_byte
    old_start, old_end = _unmap(start, edits, mids), _unmap(end, edits, mids)
    if old_start is None or old_end is None or old_start >= old_end:
        return False
    if not any(old_start <= e.start and e.end <= old_end for e in edits):
        return False  # no edit inside it: an error the change did not reach
    old: Node | None = old_tree.root_node.descendant_for_byte_range(old_start, old_end)
    while old is not None and old.start_byte == old_start and old.end_byte == old_end:
        if old.type == node.type:
            return not old.has_error and _clean_context(old)
        old = old.parent
    return False


def _comments_only(
    old_tree: Tree,
    data: bytes | bytearray,
    new_tree: Tree,
    new_data: bytes | bytearray,
    edits: list[Edit],
    mids: list[bytes],
) -> bool:
    """Whether the change only adds, changes or takes out comments and blank lines: the
    lines each edit touches read the same before and after once their comments (as each
    tree has them), the spaces left at their ends and the lines left blank are gone."""
    shift = 0
    for e, mid in zip(edits, mids, strict=True):
        new_start = e.start + shift
        old_code = _code(old_tree, data, e.start, e.end)
        new_code = _code(new_tree, new_data, new_start, new_start + len(mid))
        if old_code is None or new_code is None or old_code != new_code:
            return False
        shift += len(mid) - (e.end - e.start)
    return True


def _code(tree: Tree, data: bytes | bytearray, start: int, end: int) -> list[bytes] | None:
    """The lines of ``data`` that ``[start, end)`` touches, without their comments, the
    spaces then left at their ends, and the lines then blank (None: a line there goes on
    onto the next with a backslash, and has a comment or spaces after it)."""
    lo = data.rfind(b"\n", 0, start) + 1
    hi = data.find(b"\n", end)
    hi = len(data) if hi < 0 else hi
    if hi - lo > 1 << 16:
        return None  # (a change this large is not only comments worth looking for)
    text = bytearray(data[lo:hi])
    stack = [tree.root_node.descendant_for_byte_range(lo, hi) or tree.root_node]
    seen = 0
    while stack:
        node = stack.pop()
        seen += 1
        if seen > 20_000:
            return None
        if node.end_byte <= lo or node.start_byte >= hi:
            continue
        if "comment" in node.type:
            a, b = max(lo, node.start_byte), min(hi, node.end_byte)
            text[a - lo : b - lo] = b"\0" * (b - a)  # (same length: offsets hold)
            continue
        stack.extend(node.children)
    out: list[bytes] = []
    for line in bytes(text).split(b"\n"):
        raw = line.replace(b"\0", b"")
        code = raw.rstrip()
        if code.endswith(b"\\") and (code != raw or len(raw) != len(line)):
            return None  # after a backslash that goes on onto the next line, nothing may
        if code.strip():
            out.append(code)
    return out


def _clean_context(node: Node) -> bool:
    """Whether what leads up to ``node`` parsed without an error leaking into it: no
    node around it is an error, and none of theirs before it is an error or a missing
    token (an error wrapped whole in a construct that came before is no matter: that
    construct ended, and what follows reads as it would without the error)."""
    child = node
    parent = node.parent
    while parent is not None:
        if parent.is_error:
            return False
        for sibling in parent.children:
            if sibling.start_byte >= child.start_byte and sibling.end_byte >= child.end_byte:
                break
            if sibling.is_error or sibling.is_missing:
                return False
        child, parent = parent, parent.parent
    return True


def _unmap(pos: int, edits: list[Edit], mids: list[bytes]) -> int | None:
    """Offset ``pos`` of the new text in the old text: offsets outside every edit's new
    text, or at its ends, map back; None for one strictly inside it."""
    shift = 0
    for e, mid in zip(edits, mids, strict=True):
        new_start = e.start + shift
        new_end = new_start + len(mid)
        if pos < new_start:
            break
        if pos == new_start:
            return e.start
        if pos < new_end:
            return None
        if pos == new_end:
            return e.end
        shift += len(mid) - (e.end - e.start)
    return pos - shift


def _nearest_line(
    issue: Issue,
    old: Sequence[Issue],
    edits: list[Edit],
    mids: list[bytes],
    data: bytes | bytearray,
) -> int:
    """The line, in the new text, of the error of the old text nearest to ``issue``."""
    best: tuple[int, int] | None = None
    for o in old:
        at, _ = map_offset(o.start, edits)
        rows = 0
        for e, mid in zip(edits, mids, strict=True):
            if e.start >= o.start:
                break
            rows += mid.count(b"\n") - data.count(b"\n", e.start, min(e.end, o.start))
        far = abs(at - issue.start)
        if best is None or far < best[0]:
            best = (far, o.line + rows)
    return best[1] if best is not None else issue.line


class Shortened:
    """The old and the new text without the ranges ``cut`` (old-text offsets that never
    overlap an edit), with the edits in offsets of the shortened old text, and how to
    place an error of the shortened new text in the whole new text."""

    def __init__(
        self, data: bytearray, cut: list[tuple[int, int]], edits: list[Edit], mids: list[bytes]
    ) -> None:
        self.data = data
        self.cut = cut
        events = sorted(
            [(s, e, -1) for s, e in cut] + [(e.start, e.end, i) for i, e in enumerate(edits)]
        )
        old: list[bytes | bytearray] = []
        new: list[bytes | bytearray] = []
        self.edits: list[Edit] = []
        #: pieces of the shortened new text: (start there, start in the new text, how
        #: many ranges were cut before it)
        self.pieces: list[tuple[int, int, int]] = []
        pos = removed = shift = short_new = cuts = 0
        for s, e, i in events:
            kept = data[pos:s]
            old.append(kept)
            new.append(kept)
            self.pieces.append((short_new, pos + shift, cuts))
            short_new += len(kept)
            if i < 0:
                removed += e - s
                cuts += 1
            else:
                edit = edits[i]
                old.append(data[s:e])
                new.append(mids[i])
                self.edits.append(Edit(s - removed, e - removed, edit.length))
                self.pieces.append((short_new, s + shift, cuts))
                short_new += edit.length
                shift += edit.length - (e - s)
            pos = e
        kept = data[pos:]
        old.append(kept)
        new.append(kept)
        self.pieces.append((short_new, pos + shift, cuts))
        self.old = b"".join(old)
        self.new = b"".join(new)

    def to_new(self, pos: int) -> tuple[int, int]:
        """Offset ``pos`` of the shortened new text in the whole new text, and how many
        lines were left out before it."""
        k = bisect.bisect_right(self.pieces, (pos, sys.maxsize, 0)) - 1
        start, whole, cuts = self.pieces[max(0, k)]
        lines = sum(self.data.count(b"\n", s, e) for s, e in self.cut[:cuts])
        return whole + (pos - start), lines

    def place(self, issue: Issue, new_data: bytes) -> Issue:
        """``issue`` (of the shortened new text) where it is in the whole new text."""
        start, lines = self.to_new(issue.start)
        end, _ = self.to_new(issue.end)
        span_start, _ = self.to_new(issue.span[0])
        col = start - (new_data.rfind(b"\n", 0, start) + 1)
        placed = issue_at(
            start,
            max(start, end),
            issue.line - 1 + lines,
            col,
            issue.message,
            new_data,
            span_start=span_start,
        )
        if issue.doubt:
            placed = dataclasses.replace(placed, doubt=issue.doubt)
        if issue.opener_at < 0:
            return placed
        at, opener_lines = self.to_new(issue.opener_at)
        return dataclasses.replace(
            placed,
            opener=issue.opener,
            opener_at=at,
            opener_line=issue.opener_line + opener_lines,
        )


def _point_after(start: tuple[int, int], text: bytes | bytearray) -> tuple[int, int]:
    rows = text.count(b"\n")
    if rows:
        return start[0] + rows, len(text) - text.rfind(b"\n") - 1
    return start[0], start[1] + len(text)


def _edit_tree(tree: Tree, data: bytearray, edits: list[Edit], mids: list[bytes]) -> None:
    """Tell ``tree`` (of ``data``) about ``edits``, from the last to the first, so that
    every edit's offsets are still those of the old text when it is told."""
    points = points_at(tree.root_node, data, [e.start for e in edits])
    for e, mid, p in reversed(list(zip(edits, mids, points, strict=True))):
        old_end = _point_after(p, data[e.start : e.end])
        tree.edit(
            start_byte=e.start,
            old_end_byte=e.end,
            new_end_byte=e.start + len(mid),
            start_point=p,
            old_end_point=old_end,
            new_end_point=_point_after(p, mid),
        )


def _touches(issue: Issue, edits: list[Edit], regions: list[tuple[int, int]]) -> bool:
    """Whether ``issue`` (of the old text) lay in what an edit replaced, or where the
    new tree differs (``regions``, new-text offsets)."""
    lo, hi = issue.span
    start, inside = map_offset(lo, edits)
    end, end_inside = map_offset(hi, edits)
    if inside is not None or end_inside is not None:
        return True
    return any(a <= end and start <= b for a, b in regions)


def _cause(issue: Issue) -> tuple[int, int]:
    """The byte range that accounts for ``issue``: the text that does not parse, from the
    bracket it leaves open when it names one."""
    lo, hi = issue.span
    return (min(lo, issue.opener_at) if issue.opener_at >= 0 else lo), hi


def _meets(span: tuple[int, int], cut: tuple[int, int]) -> bool:
    """Whether ``span`` (possibly empty) has any part in ``cut``."""
    (s, e), (a, b) = span, cut
    return s < b and a < e if e > s else a <= s < b


def _regions(
    changed: Sequence[Range], edits: list[Edit], new_data: bytes | bytearray
) -> list[tuple[int, int]]:
    """Where the new tree differs from the old one (its changed ranges, and the lines
    that hold the new text of every edit), as merged byte ranges of the new text."""
    out = [(r.start_byte, r.end_byte) for r in changed]
    shift = 0
    for ed in edits:
        lo, hi = ed.start + shift, ed.start + shift + ed.length
        line_end = new_data.find(b"\n", hi)
        out.append((new_data.rfind(b"\n", 0, lo) + 1, len(new_data) if line_end < 0 else line_end))
        shift += ed.length - (ed.end - ed.start)
    out.sort()
    merged: list[tuple[int, int]] = []
    for lo, hi in out:
        if merged and lo <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], hi))
        else:
            merged.append((lo, hi))
    return merged


def _edited(
    entry: Entry,
    lang: str,
    edits: list[Edit],
    mids: list[bytes],
    char_edits: list[CharEdit] | None,
    before: Text,
    after: str,
) -> Entry:
    """The entry of the new text made from the old one's: its tree edited (not
    reparsed) and its bytes spliced in place (the old entry gives them up)."""
    data = entry.data
    if data is None:
        data = bytearray(encode(before.view))
    tree = entry.tree.copy()
    _edit_tree(tree, data, edits, mids)
    try:
        for e, mid in reversed(list(zip(edits, mids, strict=True))):
            data[e.start : e.end] = mid
        entry.data = None
    except BufferError:  # still read by a parse somewhere: copy instead
        data = bytearray(apply_edits(data, edits, mids))
    marks = (
        shift_marks(entry.marks, char_edits, len(before.view))
        if char_edits is not None
        else build_marks(after)
    )
    return Entry(lang, tree, data, marks, len(data), fresh=False)

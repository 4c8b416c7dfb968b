"""The BM25 postings of one SQLite memory table as arrays in the process, kept in step.

The rows of ``<name>_items`` are the truth (their ``terms`` and ``length``,
as FTS5 indexes them); this is a cache of what lexical search scores, so a
search adds up numpy arrays, as the in-memory store does, instead of
walking FTS5's postings item by item. Items fall in segments by who may
see them, as in memory (:mod:`prefrontal.stores.memory.segment`): per
agent, its shared items and each user's private ones, so a tenant's search
reads two segments and nothing another user holds privately. A segment
numbers its items by slot and keeps per slot whether it holds an item, its
row id, whether it was superseded, when it expires (µs), its kind and its
length; per term, the slots holding it and how often
(:class:`~prefrontal.stores.memory.segment.TermPostings`).

**The same scores, to the bit.** The collection's statistics are read in
the search's own transaction (``<name>_owner_stats`` and ``<name>_terms``,
as :mod:`.topk` reads them), each term's score for every holder is
:func:`~prefrontal.retrieval.scored_arrays.term_scores` and they are added
in sorted term order from 0.0, as :class:`~prefrontal.retrieval.ranking.Scorer`
adds them: the scores :mod:`.topk` and the in-memory store give.

**Kept in step by the change log** (:mod:`prefrontal.stores.sqlite.vectors`):
inside each search's read transaction the table's change count is read;
when it moved, the rows stamped since and the deletions logged since are
applied (the whole table is read again when the log no longer covers the
count held). A search whose snapshot is older than what is held (another
thread moved it on meanwhile) is told so (``None``) and ranks with
:mod:`.topk` instead, so a search never sees a write its transaction does
not.

**Built behind the first searches.** Reading a whole table is the costly
part (about 0.7 s of CPU at 100,000 items, most of it in C: SQLite hands
the table over as a few long strings, NumPy counts the postings): it runs
in a thread of its own (:meth:`LexicalArrays.start`, which the store's
``open`` calls), in a read transaction of its own, and the arrays are
installed at that transaction's count when it is done. Until then, and
while a table is read again because the change log no longer covers the
count held, every search walks FTS5's postings (:mod:`.topk`: the same
hits and scores). The store waits for the thread before it closes.

**Deletions.** A removed item's slot is cleared at once; the postings
naming it stay, stale, and the slot is not reused while they do: a
segment's postings are compacted when stale entries outnumber live ones,
and a segment left empty is dropped. The arrays are registered with
:mod:`prefrontal.forgetting`: an erase or a forget empties them, words and
all, and the next search reads the table again.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections import Counter
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from typing import Any

import numpy as np
import structlog

from prefrontal.forgetting import register
from prefrontal.retrieval.ranking import BoundedTerm, Corpus
from prefrontal.retrieval.scored_arrays import best_positions, term_scores
from prefrontal.retrieval.vector_index import grown_to
from prefrontal.stores.memory.segment import COMPACT_AT, TermPostings, keep_present
from prefrontal.stores.sqlite.lexical_parts import Part, Place

FOREVER = np.iinfo(np.int64).max
"""The expiry of an item that does not expire (µs)."""

Row = tuple[int, str, str, str, str, int | None, int, str, int]
"""``rowid, agent_id, user_id, scope, kind, valid_until, superseded, terms, length``."""
Reader = Callable[[Callable[[sqlite3.Connection], None]], None]
"""Runs a function in a read transaction of its own, in the calling thread."""
Known = dict[tuple[str, str], tuple[Corpus, dict[str, BoundedTerm | None]]]
"""Per tenant (agent, user): the statistics of the collection it searches and of each term
asked about (``None``: the collection does not hold it), as read at one change count."""

KNOWN_TENANTS = 1_024
"""The tenants whose statistics :meth:`LexicalArrays.known` holds at most (emptied past it)."""

_log = structlog.get_logger("prefrontal.stores.sqlite")


class Segment:
    """The items of one agent that one class of tenants sees, by slot, with their postings."""

    __slots__ = (
        "dead",
        "distinct",
        "entries",
        "free",
        "freed",
        "kind",
        "kinds",
        "length",
        "place",
        "postings",
        "present",
        "rowids",
        "size",
        "slots",
        "stale",
        "until",
    )

    def __init__(self) -> None:
        self.size = 0
        self.place: tuple[str, str] = ("", "")
        """The agent and owner whose items these are."""
        self.slots: dict[int, int] = {}
        """Each held row id and its slot."""
        self.rowids = np.zeros(0, dtype=np.int64)
        self.present = np.zeros(0, dtype=bool)
        self.dead = np.zeros(0, dtype=bool)
        self.until = np.zeros(0, dtype=np.int64)
        self.kind = np.zeros(0, dtype=np.int32)
        self.kinds: dict[str, int] = {}
        """Each kind's code in :attr:`kind`."""
        self.length = np.zeros(0, dtype=np.int64)
        self.distinct = np.zeros(0, dtype=np.int32)
        """How many distinct terms each slot holds (its entries in the postings)."""
        self.postings: dict[str, TermPostings] = {}
        self.free: list[int] = []
        self.freed: list[int] = []
        self.entries = 0
        self.stale = 0

    def __len__(self) -> int:
        return len(self.slots)

    def put(self, row: Row, counts: Counter[str]) -> None:
        """Hold ``row`` with its term ``counts`` (the row id not held)."""
        rowid, _, _, _, kind, until, superseded, _, length = row
        slot = self._slot()
        self.slots[rowid] = slot
        self.rowids[slot] = rowid
        self.distinct[slot] = len(counts)
        self.present[slot] = True
        self.dead[slot] = bool(superseded)
        self.until[slot] = FOREVER if until is None else until
        self.kind[slot] = self.kinds.setdefault(kind, len(self.kinds))
        self.length[slot] = length
        postings = self.postings
        for term, count in counts.items():
            posting = postings.get(term)
            if posting is None:
                posting = postings[term] = TermPostings()
            posting.append(slot, count)
        self.entries += len(counts)

    def remove(self, rowid: int) -> None:
        """Forget ``rowid`` (held)."""
        slot = self.slots.pop(rowid)
        self.present[slot] = False
        self.stale += int(self.distinct[slot])
        self.freed.append(slot)
        if self.stale > COMPACT_AT and 2 * self.stale > self.entries:
            keep_present(self.postings, self.present)
            self.entries -= self.stale
            self.stale = 0
            self.free.extend(self.freed)
            self.freed.clear()

    def allowed(self, slots: np.ndarray, now: int, kinds: Collection[str] | None) -> np.ndarray:
        """Which of ``slots`` hold an item live at ``now`` (µs) of ``kinds`` (any when ``None``)."""
        mask: np.ndarray = self.present[slots] & ~self.dead[slots] & (self.until[slots] > now)
        if kinds is not None:
            codes = [self.kinds[kind] for kind in kinds if kind in self.kinds]
            mask &= np.isin(self.kind[slots], codes)
        return mask

    def bm25(self, terms: Sequence[BoundedTerm], average: float) -> np.ndarray:
        """Each slot's BM25 score for ``terms`` (sorted by text): 0.0 where it holds none."""
        scores = np.zeros(self.size)
        length = self.length
        for term in terms:
            posting = self.postings.get(term.text)
            if posting is None:
                continue
            slots = posting.slots[: posting.n]
            scores[slots] += term_scores(
                term.weight, posting.counts[: posting.n], length[slots], average
            )
        return scores

    def _slot(self) -> int:
        if self.free:
            return self.free.pop()
        if self.size == len(self.present):
            capacity = max(64, 2 * self.size)
            self.rowids = grown_to(self.rowids, capacity)
            self.length = grown_to(self.length, capacity)
            self.present = grown_to(self.present, capacity)
            self.dead = grown_to(self.dead, capacity)
            self.until = grown_to(self.until, capacity)
            self.kind = grown_to(self.kind, capacity)
            self.distinct = grown_to(self.distinct, capacity)
        self.size += 1
        return self.size - 1


class ScoredRows:
    """The BM25 score of every allowed row holding a query term, in arrays sorted by row id."""

    __slots__ = ("rowids", "values")

    def __init__(self, rowids: np.ndarray, values: np.ndarray) -> None:
        order = np.argsort(rowids)
        self.rowids, self.values = rowids[order], values[order]

    def best(self, limit: int | None) -> tuple[dict[int, float], float, ScoredRows]:
        """The rows that may be in the top ``limit`` (every one when ``None``), by row id, a
        bound on every other's score (0 when every one is returned), and these scores:
        with a ``limit``, the rows scoring at least the ``limit``-th best (ties included)."""
        found, scored = self.rowids, self.values
        bound = 0.0
        if limit is not None:
            picked = best_positions(scored, limit)
            if len(picked) < len(scored):
                bound = float(scored[picked].min())
            found, scored = found[picked], scored[picked]
        return dict(zip(found.tolist(), scored.tolist(), strict=True)), bound, self

    def of(self, rowids: Sequence[int]) -> dict[int, float]:
        """The score of each of ``rowids`` that holds a query term, by row id."""
        if not len(self.rowids) or not rowids:
            return {}
        asked = np.asarray(rowids, dtype=np.int64)
        at = np.minimum(np.searchsorted(self.rowids, asked), len(self.rowids) - 1)
        held = self.rowids[at] == asked
        return dict(zip(asked[held].tolist(), self.values[at[held]].tolist(), strict=True))


NOTHING = ScoredRows(np.zeros(0, dtype=np.int64), np.zeros(0))
"""No row scored."""


class LexicalArrays:
    """One memory table's postings in arrays, at the change count :attr:`changes`.

    ``reader``: how :meth:`start` reads the table in a thread of its own;
    without one, :meth:`usable` reads it in the search's own transaction.
    The arrays live in the process only: nothing of them is written to disk.
    """

    def __init__(self, name: str, reader: Reader | None = None) -> None:
        self.name = name
        self.reader = reader
        self.changes = -1
        """The change count held (-1: nothing read yet)."""
        self.segments: dict[Place, Segment] = {}
        """By agent and owner (``""`` for the agent's shared items)."""
        self.where: dict[int, Place] = {}
        self.lock = threading.Lock()
        """Held while the arrays are brought to a count and searched."""
        self._builder: threading.Thread | None = None
        self._starting = threading.Lock()
        self._cleared = 0
        """How many times the arrays were emptied: a build begun before an erase is dropped."""
        self.failed: BaseException | None = None
        """Why the last build failed (searches walk FTS5 until :meth:`clear`)."""
        self._known: Known = {}
        self._known_at = -1
        columns = (
            "rowid, agent_id, user_id, scope, kind, valid_until,"
            " superseded_by IS NOT NULL, terms, length"
        )
        items = f"{name}_items"
        self._count = f"SELECT changes, pruned FROM {name}_stats"
        self._all = f"SELECT {columns} FROM {items}"
        self._table = f"""SELECT count(*), json_group_array(rowid), json_group_array(agent_id),
            json_group_array(CASE WHEN scope = 'shared' THEN '' ELSE user_id END),
            json_group_array(kind), json_group_array(valid_until),
            json_group_array(superseded_by IS NOT NULL), json_group_array(length),
            group_concat(terms, ' ')
            FROM {items}"""
        self._since = f"SELECT {columns} FROM {items} WHERE changed > ?"
        self._gone = f"SELECT row FROM {name}_gone WHERE changed > ?"
        register(self)

    def clear(self) -> None:
        """Drop everything held (the next search reads the table again)."""
        with self.lock:
            self.segments, self.where, self.changes = {}, {}, -1
            self._known, self._known_at = {}, -1
            self._cleared += 1
            self.failed = None

    def start(self) -> None:
        """Read the table into arrays in a thread of its own, unless held,
        being read, or there is no :attr:`reader`; searches walk FTS5 meanwhile when
        nothing is held."""
        reader = self.reader
        if reader is None or self.changes >= 0 or self.failed is not None:
            return
        with self._starting:
            builder = self._builder
            if builder is not None and builder.is_alive():
                return
            self._builder = threading.Thread(
                target=self._build,
                args=(reader, self._cleared),
                name=f"prefrontal-{self.name}-arrays",
            )
            self._builder.start()

    def join(self) -> None:
        """Wait for the thread reading the table, if one is."""
        builder = self._builder
        if builder is not None:
            builder.join()

    def usable(self, connection: sqlite3.Connection) -> bool:
        """Whether a search in ``connection``'s transaction may rank over the arrays (the lock
        held): brought to its snapshot. ``False`` while the table is being read in
        :meth:`start`'s thread (started here when nothing is held: the search walks FTS5),
        or when the arrays hold a later snapshot than it."""
        if self.reader is None:
            return self.current(connection)
        changes, pruned = connection.execute(self._count).fetchone()
        if self.changes < 0 or self.changes < pruned:
            if self.changes >= 0:  # the log no longer covers the count held: read it again
                self.segments, self.where, self.changes = {}, {}, -1
            self.start()
            return False
        return self._forward(connection, changes)

    def current(self, connection: sqlite3.Connection) -> bool:
        """Bring the arrays to the transaction's snapshot (the lock held), reading the table
        here when needed; ``False`` when they hold a later one than it."""
        changes, pruned = connection.execute(self._count).fetchone()
        if self.changes < pruned or self.changes < 0:
            self.segments, self.where = segments_of(self._read(connection))
            self.changes = changes
            return True
        return self._forward(connection, changes)

    def known(self) -> Known:
        """The BM25 statistics searches read at the change count held
        (:func:`.topk.query_terms` reads only what it lacks), the lock held and the arrays
        brought to the search's snapshot (:meth:`usable`).

        A table's statistics (``<name>_owner_stats``, ``<name>_terms``) move only with a
        write that moves its change count, as its postings do, so what was read at the
        count held is what any transaction at that count reads. Emptied when the count
        moves, by :meth:`clear` (an erase or a forget: it holds query terms) and past
        :data:`KNOWN_TENANTS` tenants.
        """
        if self._known_at != self.changes or len(self._known) > KNOWN_TENANTS:
            self._known, self._known_at = {}, self.changes
        return self._known

    def _forward(self, connection: sqlite3.Connection, changes: int) -> bool:
        """Apply what changed since the count held, up to ``changes`` (covered by the log)."""
        if self.changes == changes:
            return True
        if self.changes > changes:
            return False
        for (rowid,) in connection.execute(self._gone, (self.changes,)):
            self._remove(rowid)
        self._put(connection.execute(self._since, (self.changes,)))
        self.changes = changes
        return True

    def _build(self, reader: Reader, cleared: int) -> None:
        """Read the table in ``reader``'s transaction; install it unless cleared meanwhile
        (or newer arrays are held)."""
        built: list[tuple[int, list[Part]]] = []

        def read(connection: sqlite3.Connection) -> None:
            changes, _ = connection.execute(self._count).fetchone()
            built.append((changes, self._read(connection)))

        try:
            reader(read)
            changes, parts = built[0]
            segments, where = segments_of(parts)
            with self.lock:
                if self._cleared == cleared and self.changes < changes:
                    self.segments, self.where, self.changes = segments, where, changes
        except Exception as error:  # searches walk FTS5, as they did while it ran
            _log.warning("lexical_arrays_not_built", table=self.name, error=str(error))
            with self.lock:
                if self._cleared == cleared:
                    self.failed = error

    def _read(self, connection: sqlite3.Connection) -> list[Part]:
        """Every row of the table as the parts of its segments, in ``connection``'s
        transaction."""
        parts = whole_table(connection.execute(self._table).fetchone())
        if parts is not None:
            return parts
        held = LexicalArrays(self.name)  # terms and lengths disagree: counted row by row
        held._put(connection.execute(self._all))
        return [part_of(segment) for segment in held.segments.values()]

    def top(
        self,
        corpus: Corpus,
        terms: Sequence[BoundedTerm],
        params: Mapping[str, Any],
        kinds: Collection[str] | None,
        limit: int | None,
    ) -> tuple[dict[int, float], float, ScoredRows]:
        """The rows that may be in the BM25 top ``limit`` (every match when ``None``), by row id,
        a bound on every other allowed row's score (0 when every match is returned) and
        every allowed match's score.

        ``terms``: the query's terms the collection holds with their weights; ``params``
        holds the tenant (``agent``, ``user``) and ``now`` (µs). Every score returned is
        exact; with a ``limit``, the rows scoring at least the ``limit``-th best (ties
        with it included).
        """
        ordered = sorted(terms, key=lambda term: term.text)
        agent, user = params["agent"], params["user"]
        rowids, values = [], []
        for owner in dict.fromkeys((user, "")):
            segment = self.segments.get((agent, owner))
            if segment is None or not len(segment):
                continue
            scores = segment.bm25(ordered, corpus.average)
            held = np.flatnonzero(scores > 0)
            held = held[segment.allowed(held, params["now"], kinds)]
            rowids.append(segment.rowids[held])
            values.append(scores[held])
        if not rowids:
            return {}, 0.0, NOTHING
        return ScoredRows(np.concatenate(rowids), np.concatenate(values)).best(limit)

    def _put(self, rows: Iterable[Row]) -> None:
        for row in rows:
            rowid, agent, user, scope = row[0], row[1], row[2], row[3]
            if rowid in self.where:
                self._remove(rowid)
            place = (agent, "" if scope == "shared" else user)
            segment = self.segments.get(place)
            if segment is None:
                segment = self.segments[place] = Segment()
                segment.place = place
            segment.put(row, Counter(row[7].split()))
            self.where[rowid] = segment.place  # one tuple per segment, not one per row

    def _remove(self, rowid: int) -> None:
        place = self.where.pop(rowid, None)
        if place is not None:
            segment = self.segments[place]
            segment.remove(rowid)
            if not len(segment):
                del self.segments[place]


def whole_table(table: tuple[Any, ...]) -> list[Part] | None:
    """The segments of a whole table as :class:`LexicalArrays` reads it (one row: the count,
    JSON arrays of row ids, agents, owners, kinds, expiries, superseded flags and lengths,
    and every row's terms joined by spaces), counted set-wise; ``None`` when the terms do
    not add up to the lengths (then they are counted row by row).

    Rows go to their segment in row order; the postings are a sorted array of
    ``(segment, term, slot)`` keys and their counts (:func:`numpy.unique`), cut into
    each segment's part.
    """
    count, rowids_json, agents, owners, kinds_json, until_json, dead_json, lengths_json, text = (
        table
    )
    if not count:
        return []
    rowids = np.asarray(json.loads(rowids_json), dtype=np.int64)
    lengths = np.asarray(json.loads(lengths_json), dtype=np.int64)
    words = (text or "").split()
    if len(words) != int(lengths.sum()):
        return None
    places: dict[Place, int] = {}
    held_by = zip(json.loads(agents), json.loads(owners), strict=True)
    place_of = np.fromiter(
        (places.setdefault(place, len(places)) for place in held_by),
        dtype=np.int64,
        count=count,
    )
    vocabulary: dict[str, int] = {}
    term_of = np.fromiter(
        [vocabulary.setdefault(word, len(vocabulary)) for word in words],
        dtype=np.int64,
        count=len(words),
    )
    known = max(len(vocabulary), 1)
    if len(places) * known * count >= 1 << 62:  # the keys below would overflow
        return None
    order = np.argsort(place_of, kind="stable")
    sizes = np.bincount(place_of, minlength=len(places))
    firsts = np.concatenate([[0], np.cumsum(sizes)])
    slot_of = np.empty(count, dtype=np.int64)
    slot_of[order] = np.arange(count) - firsts[place_of[order]]
    row_of = np.repeat(np.arange(count), lengths)
    keys = (place_of[row_of] * known + term_of) * count + slot_of[row_of]
    keys, tf = np.unique(keys, return_counts=True)
    slots, pairs = keys % count, keys // count
    segment_of, term_id = pairs // known, pairs % known
    distinct = np.bincount(firsts[segment_of] + slots, minlength=count).astype(np.int32)
    kinds: dict[str, int] = {}
    kind_of = np.fromiter(
        (kinds.setdefault(kind, len(kinds)) for kind in json.loads(kinds_json)),
        dtype=np.int32,
        count=count,
    )
    until = np.fromiter(
        (FOREVER if value is None else value for value in json.loads(until_json)),
        dtype=np.int64,
        count=count,
    )
    dead = np.asarray(json.loads(dead_json), dtype=bool)
    terms = list(vocabulary)
    counts = tf.astype(np.int32)
    bounds = np.searchsorted(segment_of, np.arange(len(places) + 1))
    parts = []
    for number, place in enumerate(places):
        rows = order[firsts[number] : firsts[number + 1]]
        low, high = int(bounds[number]), int(bounds[number + 1])
        held = term_id[low:high]
        edges = np.flatnonzero(np.diff(held)) + 1
        starts = np.concatenate([[0], edges, [high - low]]) if high > low else np.zeros(1, int)
        parts.append(
            Part(
                place=place,
                kinds=dict(kinds),
                rowids=rowids[rows],
                dead=dead[rows],
                until=until[rows],
                kind=kind_of[rows],
                length=lengths[rows],
                distinct=distinct[firsts[number] : firsts[number + 1]],
                terms=[terms[t] for t in held[starts[:-1]].tolist()],
                starts=starts.astype(np.int64),
                slots=slots[low:high],
                counts=counts[low:high],
            )
        )
    return parts


def segments_of(parts: Sequence[Part]) -> tuple[dict[Place, Segment], dict[int, Place]]:
    """The segments holding ``parts``, and each row id's place (its postings are views of
    the parts' arrays: an append copies them first)."""
    segments: dict[Place, Segment] = {}
    where: dict[int, Place] = {}
    for part in parts:
        segment = segments[part.place] = Segment()
        size = len(part.rowids)
        segment.place, segment.size = part.place, size
        segment.rowids = part.rowids
        segment.slots = dict(zip(part.rowids.tolist(), range(size), strict=True))
        segment.present = np.ones(size, dtype=bool)
        segment.dead, segment.until, segment.kind = part.dead, part.until, part.kind
        segment.kinds, segment.length, segment.distinct = (
            dict(part.kinds),
            part.length,
            part.distinct,
        )
        segment.entries = len(part.slots)
        starts = part.starts.tolist()
        postings = segment.postings
        for term, first, last in zip(part.terms, starts, starts[1:], strict=False):
            postings[term] = _held(part.slots[first:last], part.counts[first:last])
        where.update(dict.fromkeys(part.rowids.tolist(), segment.place))
    return segments, where


def _held(slots: np.ndarray, counts: np.ndarray) -> TermPostings:
    """Postings holding ``slots`` and ``counts`` (views: an append copies them first)."""
    postings = TermPostings.__new__(TermPostings)
    postings.slots, postings.counts, postings.n = slots, counts, len(slots)
    return postings


def part_of(segment: Segment) -> Part:
    """``segment`` (every slot held) as a part: its postings in sorted term order."""
    size = segment.size
    terms = sorted(segment.postings)
    held = [segment.postings[term] for term in terms]
    starts = np.cumsum([0, *(posting.n for posting in held)]).astype(np.int64)
    return Part(
        place=segment.place,
        kinds=dict(segment.kinds),
        rowids=segment.rowids[:size],
        dead=segment.dead[:size],
        until=segment.until[:size],
        kind=segment.kind[:size],
        length=segment.length[:size],
        distinct=segment.distinct[:size],
        terms=terms,
        starts=starts,
        slots=np.concatenate([p.slots[: p.n] for p in held]) if held else np.zeros(0, np.int64),
        counts=np.concatenate([p.counts[: p.n] for p in held]) if held else np.zeros(0, np.int32),
    )

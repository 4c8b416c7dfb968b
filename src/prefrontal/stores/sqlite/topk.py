"""Exact BM25 top-k over FTS5 without scoring every match (MaxScore, with filters).

FTS5 finds the candidates; the core scores them: every item looked at is
scored on all query terms from its analysed terms text by
:meth:`~prefrontal.retrieval.ranking.Scorer.padded`, the arithmetic every
backend's candidates are scored with, and kept in a top-k heap; only
live items the tenant may see are ever fetched, by rowid (item ids are read
for the few that may be in the top k). The search:

1. scores the items that hold the three rarest terms (one chunk at most:
   items holding more of the rarest terms score higher, and such a
   conjunction is cheap); when fewer than k hold them, the items holding
   the two rarest, so that the k-th score starts high. A set whose every
   holder has been scored is *covered*: no item not seen yet holds all of it;
2. visits the terms rarest first (highest bound first). An item not seen
   yet holds no earlier term, so its score is at most the bounds of this
   term and the later ones it holds: FTS5 is asked only for this term's
   items that also hold enough later terms to reach the k-th score, leaving
   out the sets that would complete a covered one (``t AND (u AND (v OR
   w))``, each term named once per branch), and only for items short enough
   to reach it (a term adds less to a longer document: an item holding the
   term once, or holding none of the later terms, has a tighter limit than
   one holding it twice or with later terms, and SQLite checks the text of
   only the items too long for the tightest); both are tightened again
   between chunks of 512 as the k-th score rises. Items are scored on this
   term and the later ones only: one holding an earlier term could not
   reach the k-th score when that term was visited, and scores less here.
   Once the top k is full, the holders the term alone may lift to the k-th
   score are read from the impact index (:mod:`prefrontal.retrieval.impacts`:
   each item under its frequency of each term and its length bucket), only
   the classes whose bound reaches it, instead of walking every holder to
   look at its length; the term's bound is then what it adds to any holder
   left, below the k-th score, so the rest are asked for with later terms;
3. stops when the bounds of the terms left cannot reach the k-th score.

No item that could enter the top k is skipped, so the result is the same as
scoring every match, and the same as the in-memory store's, to the bit.

A term's bound is the core's :class:`~prefrontal.retrieval.ranking.BoundedTerm`,
from statistics triggers keep per agent, owner and term (only widening): the shortest
document holding it once, the shortest holding it twice, and the largest
frequency in the shortest holding it three times or more.
"""

from __future__ import annotations

import heapq
import json
import sqlite3
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any, NamedTuple

from prefrontal.retrieval.impacts import class_tokens, reaching
from prefrontal.retrieval.ranking import BoundedTerm, Corpus, Scorer
from prefrontal.stores.sqlite.lexical_arrays import Known, LexicalArrays, ScoredRows
from prefrontal.stores.sqlite.visibility import restricted

_CHUNK = 512
"""Postings are read in chunks of this many items; the filter is tightened between them."""

_MARGIN = 1 + 1e-9
"""Room for rounding: a bound summed in another order may differ in its last bits."""


def quoted(term: str) -> str:
    """``term`` as one FTS5 string: never syntax, whatever it holds."""
    return '"' + term.replace('"', '""') + '"'


KNOWN_TERMS = 4_096
"""The terms held per tenant in a :data:`.lexical_arrays.Known` at most (emptied past it)."""


def query_terms(
    connection: sqlite3.Connection,
    statements: Any,
    texts: list[str],
    agent: str,
    user: str,
    known: Known | None = None,
) -> tuple[Corpus, list[BoundedTerm]]:
    """The statistics of what ``user`` of ``agent`` may read and its known terms among ``texts``,
    highest bound first.

    ``known``: what earlier searches read at the transaction's change count of the table
    (:meth:`.lexical_arrays.LexicalArrays.known`); only what it lacks is read, and added.
    """
    tenant = {"agent": agent, "user": user}
    held = None if known is None else known.get((agent, user))
    if held is None:
        row = connection.execute(statements.stats, tenant).fetchone()
        docs, tokens = row or (0, 0)
        held = (Corpus(docs=docs or 0, tokens=tokens or 0), {})
        if known is not None:
            known[(agent, user)] = held
    corpus, bounded = held
    if not corpus.docs or not texts:
        return Corpus(docs=0, tokens=0), []
    missing = [text for text in dict.fromkeys(texts) if text not in bounded]
    if missing:
        rows = connection.execute(
            statements.term_stats, {**tenant, "terms": json.dumps(missing)}
        ).fetchall()
        found = {row[0]: _term(corpus, *row) for row in rows if row[1] > 0}
        if len(bounded) + len(missing) > KNOWN_TERMS:
            bounded.clear()
        for text in missing:
            bounded[text] = found.get(text)
    known_terms = [term for text in dict.fromkeys(texts) if (term := bounded[text]) is not None]
    order = {text: i for i, text in enumerate(texts)}
    known_terms.sort(key=lambda t: (-t.bound, order[t.text]))
    return corpus, known_terms


def _term(
    corpus: Corpus,
    text: str,
    df: int,
    max_tf: int,
    once: int | None,
    twice: int | None,
    more: int | None,
) -> BoundedTerm:
    buckets = tuple(
        (tf, length) for tf, length in ((1, once), (2, twice), (max_tf, more)) if length is not None
    )
    return BoundedTerm.of(text, corpus, df, buckets)


def scores(
    connection: sqlite3.Connection,
    statements: Any,
    params: Mapping[str, Any],
    texts: list[str],
    limit: int | None,
    arrays: LexicalArrays | None = None,
) -> dict[str, float]:
    """BM25 scores of matching items: a superset of the best ``limit`` (all when ``None``).

    Every score returned is exact, so ``top(result, limit)`` is the true top
    ``limit``, ties broken by key as every backend breaks them. With a
    ``limit``, only items scoring at least the k-th score are returned (ties
    with it included), so the caller sorts a handful, not every item seen.
    """
    found = by_rowid(connection, statements, params, texts, limit, arrays)[0]
    return keyed(connection, statements, found)


def by_rowid(
    connection: sqlite3.Connection,
    statements: Any,
    params: Mapping[str, Any],
    texts: list[str],
    limit: int | None,
    arrays: LexicalArrays | None = None,
) -> tuple[dict[int, float], float, Scorer | ScoredRows]:
    """:func:`scores` by rowid, with a bound on every other match's score and the scorer.

    No live visible item outside the result scores more than the bound (0
    when every match was scored); the scorer scores other items alike
    (:func:`rows_scores`). With ``arrays`` (the table's postings in the
    process, :mod:`.lexical_arrays`), the scores are added up over them when
    they are built and can be brought to the transaction's snapshot, and the
    scorer is every allowed match's score; else (while they are being built,
    too), and without them, FTS5's postings are walked as the module says.
    """
    agent, user = params["agent"], params["user"]
    if arrays is not None:
        kinds = None if params["kinds"] is None else frozenset(json.loads(params["kinds"]))
        with arrays.lock:
            if arrays.usable(connection):
                held = arrays.known()
                corpus, terms = query_terms(connection, statements, texts, agent, user, held)
                return arrays.top(corpus, terms, params, kinds, limit)
    corpus, terms = query_terms(connection, statements, texts, agent, user)
    search = _TopK(connection, statements, params, corpus, terms)
    found = search.run(limit)
    bound = 0.0
    if limit is not None and len(search.best) >= limit:
        bound = search.best[0]
    return found, bound, search.scorer


def rows_scores(
    connection: sqlite3.Connection,
    statements: Any,
    score: Scorer | ScoredRows,
    rowids: Sequence[int],
) -> dict[int, float]:
    """The BM25 score of each item of ``rowids`` holding a query term, by rowid (each live
    visible one's, when ``score`` holds every allowed match's)."""
    if isinstance(score, ScoredRows):
        return score.of(rowids)
    if not rowids:
        return {}
    rows = connection.execute(statements.terms_of, {"rowids": json.dumps(list(rowids))})
    out = {}
    for rowid, padded, length in rows:
        value = score.padded(padded, length)
        if value > 0:
            out[rowid] = value
    return out


def _scorer(corpus: Corpus, terms: Sequence[BoundedTerm]) -> Scorer:
    """The scorer of items on ``terms`` (in sorted order, the order scores are added in).

    While term ``i`` is visited, an item not seen yet that holds an earlier
    term cannot reach the k-th score (every one that could was scored when
    that term was visited), so its items are scored on ``terms[i:]`` only:
    an item holding none of the earlier terms gets the same bits as on all
    of them (a term it lacks adds nothing), and one holding an earlier term
    scores less than its full score, still short of the k-th score.
    """
    ordered = sorted(terms, key=lambda t: t.text)
    return Scorer([t.weight for t in ordered], corpus, [t.text for t in ordered])


class _TopK:
    """One top-k search: the items seen, the best scores so far and the covered sets."""

    def __init__(
        self,
        connection: sqlite3.Connection,
        statements: Any,
        params: Mapping[str, Any],
        corpus: Corpus,
        terms: list[BoundedTerm],
    ) -> None:
        self.connection, self.statements, self.params = connection, statements, params
        self.terms = terms
        self.corpus = corpus
        self.scorer = self.score = _scorer(corpus, terms)
        """``scorer`` scores on every query term; ``score`` on those from the visited one on."""
        self.limit: int | None = None
        self.found: dict[int, float] = {}
        """Every item (by rowid) that may be in the top k: scored at least the k-th score then."""
        self.seen: set[int] = set()
        self.best: list[float] = []
        self.after = -1
        self.covered: list[frozenset[str]] = []
        """Sets of terms whose every visible live holder has been scored."""

    def run(self, limit: int | None) -> dict[int, float]:
        """The items that may be in the top ``limit`` (every match when ``None``), by rowid."""
        self.limit = limit
        if limit is not None:
            for held in _warm_ups(self.terms):
                self.warm_up(held)
                if len(self.best) >= limit:
                    break
        self.visit_terms()
        return _contenders(self.found, self.best, limit)

    def warm_up(self, held: list[BoundedTerm]) -> None:
        """Score the items holding every term of ``held`` (``_WARM_UP_CHUNKS`` chunks at most).

        When that was all of them, ``held`` is covered.
        """
        self.after, match = -1, " AND ".join(quoted(term.text) for term in held)
        for _ in range(_WARM_UP_CHUNKS):
            if not self.visit(match, None):
                self.covered.append(frozenset(term.text for term in held))
                return

    def visit_terms(self) -> None:
        """Visit each term's postings that may hold a top-k item, rarest first, until settled."""
        terms, best, limit = self.terms, self.best, self.limit
        remaining = sum(term.bound for term in terms)
        for i, term in enumerate(terms):
            if _settled(best, limit, remaining):
                break
            ceiling, remaining, self.after = remaining, remaining - term.bound, -1
            self.score = _scorer(self.corpus, terms[i:])
            later = terms[i + 1 :]
            while (
                match := _postings_worth_visiting(term, later, best, limit, self.covered)
            ) is not None:
                alone = match == quoted(term.text)
                if alone and term.buckets and limit is not None and len(best) >= limit:
                    term = self.visit_impacts(term)
                    self.after = -1
                    continue
                lengths = _length_limit(term, later, best, limit, alone=alone)
                if not self.visit(match, ceiling, lengths):
                    break

    def visit_impacts(self, term: BoundedTerm) -> BoundedTerm:
        """Score every holder of ``term`` whose impact class alone reaches the k-th score.

        The top k is full. The classes are read in one query, in chunks,
        narrowed between chunks as the k-th score rises (an item past the
        last chunk in a class left out cannot reach it). Returns ``term``
        with its bound lowered to the most it adds to a holder not scored,
        which is less than the k-th score: the rest of its holders can
        reach it only with later terms.
        """
        self.after = -1
        while True:
            reach = reaching(term, self.best[0], _MARGIN)
            if reach is None:
                return term
            if not reach.codes:
                break
            match = " OR ".join(map(quoted, class_tokens(term.text, reach.codes)))
            impacts = self.statements.impact_postings
            if not self.visit(match, None, sql=impacts, column="impacts"):
                break
        return replace(term, bound=reach.rest)

    def visit(
        self,
        match: str,
        ceiling: float | None,
        longest: LengthLimit | None = None,
        *,
        sql: str | None = None,
        column: str = "terms",
    ) -> bool:
        """Score the unseen items of one chunk of postings; False when there is no more.

        Only items short enough for ``longest`` are fetched (all when ``None``).
        False too when an item not seen yet, scoring at most ``ceiling``,
        cannot enter the top k any more. ``sql``: the statement reading the
        chunk (the FTS5 index of terms when ``None``; the impact index takes
        a match of impact tokens, over its ``column``). FTS5 is asked only
        for the postings of the items the tenant may see
        (:func:`~prefrontal.stores.sqlite.visibility.restricted`).
        """
        agent, user = self.params["agent"], self.params["user"]
        rows = _postings(
            self.connection,
            sql or self.statements.postings,
            self.params,
            restricted(match, column, agent, user),
            self.after,
            longest,
        )
        if rows:
            self.after = max(rowid for rowid, _, _ in rows)
        for rowid, padded, length in rows:
            if rowid in self.seen:
                continue
            self.seen.add(rowid)
            kept = self.keep(rowid, self.score.padded(padded, length))
            if kept and ceiling is not None and _settled(self.best, self.limit, ceiling):
                return False
        return len(rows) == _CHUNK

    def keep(self, rowid: int, value: float) -> bool:
        """Note ``value`` when it may be in the top k (every one without a limit).

        True when it was noted under a limit: the k-th score may have risen,
        so the caller checks whether the scan may stop.
        """
        best, limit = self.best, self.limit
        if limit is not None:
            if len(best) < limit:
                heapq.heappush(best, value)
            elif value > best[0]:
                heapq.heapreplace(best, value)
            elif value < best[0]:
                return False
        self.found[rowid] = value
        return limit is not None


def _contenders(found: dict[int, float], best: list[float], limit: int | None) -> dict[int, float]:
    """The items of ``found`` that may be in the top ``limit``: all that reach the k-th score."""
    if limit is None or len(best) < limit:
        return found
    return {key: value for key, value in found.items() if value >= best[0]}


def keyed(
    connection: sqlite3.Connection, statements: Any, scored: dict[int, float]
) -> dict[str, float]:
    """``scored`` keyed by :func:`~prefrontal.stores.memory_search.hit_key` instead of rowid."""
    if not scored:
        return {}
    rows = connection.execute(statements.item_ids, {"rowids": json.dumps(list(scored))})
    return {item_id: scored[rowid] for rowid, item_id in rows}


_WARM_UP_CHUNKS = 1
"""How many chunks of postings each warm-up scores at most."""
_WARM_UP_TERMS = 3
"""How many of the rarest terms the first warm-up asks items to hold."""


def _warm_ups(terms: list[BoundedTerm]) -> list[list[BoundedTerm]]:
    """The rarest three terms, then the rarest two: the sets the warm-up scores the holders of.

    Items holding more of the rarest terms score higher, and a set whose
    every holder is scored lets later queries leave them out; the second
    set is only asked for when fewer than k items hold the first.
    """
    return [terms[:n] for n in range(min(len(terms), _WARM_UP_TERMS), 1, -1)]


def _postings_worth_visiting(
    term: BoundedTerm,
    later: list[BoundedTerm],
    best: list[float],
    limit: int | None,
    covered: Sequence[frozenset[str]] = (),
) -> str | None:
    """The FTS5 query for ``term``'s postings that may still hold a top-k item (``None``: none).

    An item not seen yet holds no earlier term, so its score is at most
    ``term``'s bound plus the bounds of the later terms it holds. Once the
    top k is full, only items holding enough later terms to reach the k-th
    score need a look: ``term`` AND one of the smallest such sets. An item
    not seen yet holds no set of ``covered`` entirely either (every holder
    of one has been scored), so sets that would complete one are left out.
    """
    alone = quoted(term.text)
    if limit is None or len(best) < limit or not _settled(best, limit, term.bound):
        return alone
    sets = _smallest_sets(term, later, best[0], _excluded(term, covered))
    if sets is None:
        return f"{alone} AND ({' OR '.join(quoted(t.text) for t in later)})" if later else None
    if not sets:
        return None
    return f"{alone} AND ({expression(sets)})"


def _excluded(term: BoundedTerm, covered: Sequence[frozenset[str]]) -> list[frozenset[str]]:
    """What an unseen holder of ``term`` cannot also hold: the rest of each covered set."""
    return [held - {term.text} for held in covered]


def expression(sets: list[list[BoundedTerm]]) -> str:
    """An FTS5 query matching the items that hold every term of one of ``sets``.

    Sets sharing a first term share it in the query, ``a AND (b OR c)``
    rather than ``(a AND b) OR (a AND c)``: FTS5 reads a term's postings
    once for each time the query names it. No set may be empty.
    """
    groups: dict[str, list[list[BoundedTerm]]] = {}
    for group in sets:
        groups.setdefault(group[0].text, []).append(group[1:])
    parts = []
    for first, rests in groups.items():
        if any(not rest for rest in rests):
            parts.append(quoted(first))
        else:
            parts.append(f"{quoted(first)} AND ({expression(rests)})")
    return parts[0] if len(parts) == 1 else " OR ".join(f"({part})" for part in parts)


_MAX_SETS = 24
"""Beyond this many sets the query would cost more than it saves."""
_MAX_STEPS = 2_000
"""How far to look for them before settling for "any later term"."""


def _smallest_sets(
    term: BoundedTerm,
    terms: list[BoundedTerm],
    theta: float,
    excluded: Sequence[frozenset[str]] = (),
) -> list[list[BoundedTerm]] | None:
    """Sets of ``terms`` that lift ``term``'s bound to ``theta``, none with a member to spare.

    Every set of ``terms`` whose bounds lift ``term``'s to ``theta`` and that
    contains no set of ``excluded`` contains one of these, so an unseen
    holder of ``term`` holding none of them (and no excluded set) cannot
    reach ``theta``. ``None`` when there would be too many to be worth it.
    """
    search = _SetSearch(terms, theta, excluded)
    return search.found if search.extend([], term.bound, 0) else None


class _SetSearch:
    """The depth-first search of :func:`_smallest_sets`.

    A class rather than a closure that calls itself, so a search leaves no
    reference cycle behind for the garbage collector.
    """

    __slots__ = ("excluded", "found", "rest", "steps", "terms", "theta")

    def __init__(
        self, terms: list[BoundedTerm], theta: float, excluded: Sequence[frozenset[str]]
    ) -> None:
        self.terms, self.theta, self.excluded = terms, theta, excluded
        self.found: list[list[BoundedTerm]] = []
        self.rest = [sum(t.bound for t in terms[i:]) for i in range(len(terms) + 1)]
        self.steps = 0

    def extend(self, chosen: list[BoundedTerm], total: float, start: int) -> bool:
        """Grow ``chosen`` with terms from ``start`` on; ``False`` once the search gives up."""
        terms, found = self.terms, self.found
        for i in range(start, len(terms)):
            self.steps += 1
            if (total + self.rest[i]) * _MARGIN < self.theta:
                return True
            grown, held = total + terms[i].bound, [*chosen, terms[i]]
            if any(out <= {t.text for t in held} for out in self.excluded):
                pass
            elif grown * _MARGIN >= self.theta:
                found.append(held)
            elif not self.extend(held, grown, i + 1):
                return False
            if len(found) > _MAX_SETS or self.steps > _MAX_STEPS:
                return False
        return True


_LONGEST = 1 << 20
"""Documents are never this long: past it, no length limit is worth asking for."""


class LengthLimit(NamedTuple):
    """How long an unseen item holding ``needle`` (a term, padded) may be and reach the k-th score.

    ``longest`` terms at most, ``once`` when it holds the term once only;
    ``alone`` and ``alone_once`` the same for an item holding none of the
    later terms (``later``, padded, as a JSON list; ``None`` when every item
    asked for holds one).
    """

    longest: int
    once: int
    alone: int
    alone_once: int
    needle: str
    later: str | None


def _length_limit(
    term: BoundedTerm,
    later: list[BoundedTerm],
    best: list[float],
    limit: int | None,
    *,
    alone: bool = True,
) -> LengthLimit | None:
    """The lengths an unseen holder of ``term`` may have and still reach the k-th score.

    ``None``: no limit (the top k is not full, or even very long items might
    reach it). An item holding ``term`` once gains at most what the
    shortest item holding it once does, often much less than the bound,
    which counts the items holding it more often; and an item holding none
    of the later terms gains nothing from their bounds. Each case has a
    limit of its own; SQLite looks for a second occurrence or a later term
    only in the items too long for the tightest. ``alone``: the items asked
    for need not hold a later term.
    """
    if limit is None or len(best) < limit:
        return None
    theta = best[0]
    longest = _longest([term, *later], theta)
    if longest is None:
        return None
    once = tuple((tf, length) for tf, length in term.buckets if tf == 1)
    single = replace(term, buckets=once)

    def within(held: list[BoundedTerm]) -> int:
        """The limit for items holding ``held`` (0 when no item holds the term once)."""
        if held[0] is single and not once:
            return 0
        found = _longest(held, theta)
        return longest if found is None else min(found, longest)

    return LengthLimit(
        longest=longest,
        once=within([single, *later]),
        alone=within([term]),
        alone_once=within([single]),
        needle=f" {term.text} ",
        later=json.dumps([f" {t.text} " for t in later]) if alone else None,
    )


def _longest(held: list[BoundedTerm], theta: float) -> int | None:
    """The most terms an unseen holder of ``held[0]`` may have and still reach ``theta``.

    Such an item holds no earlier term, and each term it holds adds at most
    its :meth:`~prefrontal.retrieval.ranking.BoundedTerm.bound_at` the item's
    length, which only falls as the length grows: a longer item cannot
    reach ``theta``. ``None``: even very long items might reach it.
    """

    def reaches(length: int) -> bool:
        return sum(t.bound_at(length) for t in held) * _MARGIN >= theta

    high = 1
    while reaches(high):
        if high >= _LONGEST:
            return None
        high *= 2
    low = high // 2
    """``reaches`` is true at ``low`` (or ``low`` is 0) and false at ``high``."""
    while high - low > 1:
        middle = (low + high) // 2
        low, high = (middle, high) if reaches(middle) else (low, middle)
    return low


def _settled(best: list[float], limit: int | None, ceiling: float) -> bool:
    """True when an item not seen yet, scoring at most ``ceiling``, cannot enter the top k.

    Within a term's postings the ceiling of a new item is the sum of the bounds
    of that term and those after it, so the scan may stop there too.
    """
    return limit is not None and len(best) >= limit and ceiling * _MARGIN < best[0]


def _postings(
    connection: sqlite3.Connection,
    sql: str,
    params: Mapping[str, Any],
    match: str,
    after: int,
    longest: LengthLimit | None = None,
) -> list[tuple[int, str, int]]:
    """One chunk of the live, visible items matching ``match`` past rowid ``after``.

    Each as its rowid, its terms with a space either side, and its length.
    SQLite hands the chunk over as one row (three lists), not a row per
    item: its worker thread takes the GIL once per chunk, not once per item,
    so concurrent searches and the event loop do not queue behind each other
    for it item after item.

    Only items short enough for ``longest`` when it is not ``None``.
    """
    chunk = {"match": match, "after": after, "chunk": _CHUNK}
    chunk |= dict.fromkeys(LengthLimit._fields) if longest is None else longest._asdict()
    count, rowids, lengths, texts = connection.execute(sql, {**params, **chunk}).fetchone()
    if not count:
        return []
    return list(
        zip(
            map(int, rowids.split(",")),
            texts.split("\n"),
            map(int, lengths.split(",")),
            strict=True,
        )
    )

"""A lexical search in one statement: statistics, candidates and the rows to score together.

One round trip answers a lexical search whose query terms are held by few
enough items (:data:`MOST_HOLDERS`, counted from the tenant's term
statistics, so the cost is bounded before any row is read): the statement
reads the statistics of what the tenant may read and every live visible
item holding a query term (through the GIN index of visible keys, with the
same tenancy and liveness filters as every other read of the store), and
returns rows with their bodies, terms, counts and the statistics. The
caller scores them with the core's
:class:`~prefrontal.retrieval.ranking.Scorer`, so hits, scores and order
are those of every backend.

Which rows are sent: while the terms are held by :data:`ALL_SENT` items at
most, every candidate, unscored (sending a row costs the server far less
than scoring it on every query term in SQL); beyond, the statement scores
each in SQL and sends the rows scoring within :data:`ROUNDING` of the k-th
best (SQL's arithmetic only chooses which rows cross the socket, with room
for its rounding; ties with the k-th are all sent).

A single statement sees one snapshot, so no transaction is needed. When
the terms are held by more items, the statement reads no item and says so
(:attr:`LexicalAnswer.too_common`); the caller then runs the pruned top-k
(:mod:`.topk`), which reads only the holders that can still reach the top.
Only the hits' bodies are decoded (:class:`LexicalAnswer`): each crosses the socket as its
UTF-8 bytes, and only a hit's is made text (the most rows sent are candidates that score
below the hits, often several times as many).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from prefrontal.retrieval.ranking import K1, B, Candidate, Corpus, LexicalMatches, scores
from prefrontal.stores.postgres import memory_sql as sql
from prefrontal.stores.postgres import recall_counts
from prefrontal.stores.postgres.visibility import holding

MOST_HOLDERS = 2000
"""The most term holders (summed over the query's terms, by the tenant's statistics) a search
scores in one statement; beyond, the pruned top-k reads fewer rows."""
MOST_TERMS = 32
"""The most query terms the statement answers; a longer query runs the pruned top-k."""
ROUNDING = 1 - 1e-9
"""Room for SQL's rounding: rows scoring this fraction of the k-th SQL score are sent too."""
ALL_SENT = 600
"""The most term holders (summed as for :data:`MOST_HOLDERS`) whose items are all sent,
unscored; beyond, SQL scores them and sends the best."""

ITEM_AT = 8
"""Where the item's columns (``item_id`` first, as :func:`.memory._item` reads them) start in
each row of :func:`statement`."""


def statement(name: str) -> str:
    """The one-statement lexical search over ``<name>_items``, for a query of any number of terms.

    Parameters: agent ``$1``, user ``$2``, query time ``$3``, kinds ``$4``
    (as every search of :mod:`.memory_sql`), the query's term keys ``$5``,
    the limit ``$6``, :data:`MOST_HOLDERS` ``$7``, :data:`ROUNDING` ``$8``
    and :data:`ALL_SENT` ``$9``. No row when the tenant may read no item;
    else at least one, each with the statistics (documents, tokens, each
    term's holders, their sum; the holders of each term in the first row only) and, unless
    the terms are held by more than ``$7`` items or no candidate is left, one of the rows
    sent (key, length, terms and counts each as one text, a space between, and the item,
    its body as UTF-8 bytes: :data:`.memory_sql.READ_BYTES`).
    A term never holds a space (:func:`~prefrontal.retrieval.analysis.terms` splits at
    whitespace; a long term's key is ``~`` and hex digits), so the text splits back into the
    terms; one text per row is decoded faster than an array of a string or a number a term.
    Past ``$9`` holders, the candidates are scored from their own columns and only the best
    are read again, by their place in the table, for their bodies.

    The scores come from one join of the candidates' own terms with the query's (a hash of
    the query's terms probed once per term a candidate holds), never a search of each
    candidate's terms for each query term: every candidate holds a query term (the index
    of visible keys found it), so each gets a score; a key twice in the query counts twice.
    Only the candidate's terms are unnested (with their places): a count is read from its
    place for the few terms the query holds.

    Each query term's holders are the shared ones' and the user's, each read by the whole key
    of the term statistics (two lookups, never one of the agent's terms with the owners as a
    filter, which a plan made while the table was small reads for every owner of the agent).

    The query's terms are read from a subquery (``(SELECT $5::text[])``), whose value
    the planner does not see: a plan made for the values (a custom plan, which counts the
    terms) then costs what the plan made once for any values (the generic plan) costs, so
    after its first few executions a connection runs the generic plan instead of planning
    the statement again at each (most of the statement's time for a short query).
    """
    items = f"{name}_items"
    owners = "owner IN ('', $2)"
    k1, b = f"{K1!r}::float8", f"{B!r}::float8"
    ratio = "greatest((s.docs - q.df + 0.5) / (q.df + 0.5), 1e-300)"
    weight = f"(CASE WHEN ln({ratio}) > 0 THEN ln({ratio}) ELSE 1e-6 END) * ({k1} + 1)"
    norm = f"({k1} * (1::float8 - {b} + {b} * c.length / h.average))"
    return f"""
        WITH s AS MATERIALIZED (
            SELECT sum(docs)::float8 AS docs, sum(tokens)::float8 AS tokens
            FROM {name}_owner_stats WHERE agent_id = $1 AND {owners} HAVING count(*) > 0
        ), q AS MATERIALIZED (
            SELECT k.n, k.term, (coalesce((SELECT v.df FROM {name}_terms AS v
                WHERE v.agent_id = $1 AND v.owner = '' AND v.term = k.term), 0)
                + coalesce((SELECT v.df FROM {name}_terms AS v
                WHERE v.agent_id = $1 AND v.owner = $2 AND v.term = k.term AND $2 <> ''), 0)
            )::float8 AS df
            FROM unnest((SELECT $5::text[])) WITH ORDINALITY AS k(term, n)
        ), h AS MATERIALIZED (
            SELECT s.docs, s.tokens,
                CASE WHEN s.tokens > 0 THEN s.tokens / s.docs ELSE 1 END AS average,
                ARRAY(SELECT q.df::bigint FROM q ORDER BY q.n) AS dfs,
                ARRAY(SELECT {weight} FROM q ORDER BY q.n) AS weights,
                (SELECT coalesce(sum(q.df), 0) FROM q) AS holders
            FROM s
        ), c AS MATERIALIZED (
            SELECT m.ctid AS at, m.length, m.terms, m.counts
            FROM {items} AS m, h
            WHERE h.holders <= $7 AND h.docs > 0
              AND {holding("(SELECT $5::text[])")} AND {sql.VISIBLE_CHECKED} AND {sql.LIVE}
              AND {sql.KINDS}
        ), scored AS MATERIALIZED (
            SELECT c.at,
                sum(h.weights[q.n] - h.weights[q.n] * {norm} / (c.counts[t.i] + {norm})) AS score
            FROM c CROSS JOIN h CROSS JOIN LATERAL unnest(c.terms) WITH ORDINALITY AS t(term, i)
            JOIN q ON q.term = t.term
            WHERE h.holders > $9 GROUP BY c.at
        ), best AS MATERIALIZED (
            SELECT c.at FROM c, h WHERE h.holders <= $9
            UNION ALL
            SELECT o.at FROM scored AS o
            WHERE o.score >= $8::float8 * coalesce(
                (SELECT p.score FROM scored AS p ORDER BY p.score DESC OFFSET $6 - 1 LIMIT 1), 0)
        )
        SELECT h.docs::bigint, h.tokens::bigint,
            CASE WHEN row_number() OVER () = 1 THEN h.dfs END, h.holders::bigint,
            {sql.KEY}, m.length, array_to_string(m.terms, ' '), array_to_string(m.counts, ' '),
            {sql.READ_BYTES}
        FROM h LEFT JOIN (
            best JOIN {items} AS m ON m.ctid = best.at {recall_counts.looked_up(name)}
        ) ON true"""


@dataclass(frozen=True, slots=True)
class LexicalAnswer:
    """What the statement returned: the matches of the rows sent and the rows themselves.

    ``too_common``: the query's terms are held by too many items for one statement
    (nothing else is set then). ``rows`` are the statement's rows by key, each holding from
    :data:`ITEM_AT` on the columns :func:`.memory._item` reads (decoded by the caller for its
    hits only); ``scores`` the BM25 score of each row sent, by key (the core's
    :func:`~prefrontal.retrieval.ranking.scores` of ``matches``). ``whole``: the answer
    holds every candidate (or says that there is none, or that the terms are too common), so
    the same search with any limit has this answer.
    """

    too_common: bool
    matches: LexicalMatches | None
    rows: dict[str, Sequence[Any]]
    whole: bool = True
    scores: dict[str, float] = field(default_factory=dict)


def answer(rows: Sequence[Any], keys: Sequence[str]) -> LexicalAnswer:
    """Read the statement's rows (:func:`statement`) for the query's term keys ``keys``: each
    row's count of each key, from its terms and counts.

    Either every row was sent with an item or the one row there is has none (the statement's
    outer join of the statistics with no row sent), so the first row says which.
    """
    empty = LexicalAnswer(False, None, {})
    if not rows:
        return empty
    head = rows[0]
    holders = int(head[3])
    if holders > MOST_HOLDERS:
        return LexicalAnswer(True, None, {})
    corpus = Corpus(docs=int(head[0]), tokens=int(head[1]))
    if corpus.docs == 0 or head[4] is None:
        return empty
    candidates = [
        Candidate(row[4], row[5], counts)
        for row, counts in zip(rows, _counts(rows, keys), strict=True)
    ]
    matches = LexicalMatches(corpus, [int(n) for n in head[2]], candidates)
    sent = {row[4]: row for row in rows}
    return LexicalAnswer(False, matches, sent, holders <= ALL_SENT, scores(matches))


def _counts(rows: Sequence[Any], keys: Sequence[str]) -> list[list[int]]:
    """Each row's count of each of ``keys``, from its terms (``row[6]``) and counts
    (``row[7]``), each a text of its values a space between, in the order of ``rows``.

    A row's terms are found among the keys by a set intersection (in C), and each of the few
    it holds is placed by its index in the row's terms; a key twice in ``keys`` gets its count
    at each place.
    """
    at = {k: n for n, k in enumerate(keys)}
    if len(at) < len(keys):  # a key twice: each place gets the count
        held = [
            dict(zip(row[6].split(" "), map(int, row[7].split(" ")), strict=True)) for row in rows
        ]
        return [[h.get(k, 0) for k in keys] for h in held]
    wanted = at.keys()
    zeros = [0] * len(keys)
    found = []
    for row in rows:
        terms = row[6].split(" ")
        counts = zeros.copy()
        common = wanted & terms
        if common:
            numbers = row[7].split(" ")
            for term in common:
                counts[at[term]] = int(numbers[terms.index(term)])
        found.append(counts)
    return found

"""Impact classes: a term's holders grouped by how much the term can add to their score.

An item's class for a term it holds is its frequency of the term (once,
twice, three times or more) and the bucket of its length (lengths 0 to 3
each a bucket of their own, then four buckets per doubling, up to 2**25;
longer items share the last). Both are known when the item is written,
whatever the rest of the corpus holds. The SQLite and PostgreSQL stores
index each item under ``<class><term>`` for every distinct term it holds,
beside the term itself, so that a top-k search reads only the holders of a
term whose class can still reach the k-th score, instead of walking all of
them to look at their lengths: the few short items holding a common term
twice, rather than the tens of thousands holding it once.

A class's bound comes from the term's statistics (a
:class:`~prefrontal.retrieval.ranking.BoundedTerm`): the largest frequency
of the class, at the shorter of the bucket's shortest length and the
shortest item holding the term that often. BM25 gives more to a term held
more often and less to a longer item, so no holder in the class scores more.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Sequence
from typing import NamedTuple

from prefrontal.retrieval.ranking import BoundedTerm, term_score

LAST_BUCKET = 96
"""Items of ``2**25`` terms or more are in this bucket."""
_LAST_OCTAVE = 25


def length_bucket(length: int) -> int:
    """The bucket of an item of ``length`` terms: buckets grow by about a quarter."""
    if length < 4:
        return max(length, 0)
    octave = length.bit_length() - 1
    if octave >= _LAST_OCTAVE:
        return LAST_BUCKET
    return 4 * (octave - 1) + ((length - (1 << octave)) * 4 >> octave)


def bucket_shortest(bucket: int) -> int:
    """The shortest length in ``bucket``: ``length_bucket(bucket_shortest(b)) == b``."""
    if bucket < 4:
        return bucket
    octave, step = bucket // 4 + 1, bucket % 4
    return (1 << octave) + (step << (octave - 2))


def frequency_class(tf: int) -> int:
    """1, 2, or 3 for a term held three times or more."""
    return min(tf, 3)


def code(tf: int, length: int) -> str:
    """The three characters naming the class of a holder: frequency class, then bucket."""
    return _code(frequency_class(tf), length_bucket(length))


def _code(klass: int, bucket: int) -> str:
    return f"{klass}{bucket:02d}"


def token(term: str, tf: int, length: int) -> str:
    """What an item of ``length`` terms holding ``term`` ``tf`` times is indexed under."""
    return code(tf, length) + term


def tokens(counts: Sequence[tuple[str, int]], length: int) -> list[str]:
    """The impact tokens of an item of ``length`` terms holding each term of ``counts`` so often."""
    return [token(term, tf, length) for term, tf in counts]


def class_tokens(term: str, codes: Sequence[str]) -> list[str]:
    """The impact tokens of ``term`` in the classes ``codes``."""
    return [klass + term for klass in codes]


def sql_bucket(length: str) -> str:
    """SQL computing :func:`length_bucket` of the integer expression ``length``.

    Integer arithmetic only (a ``/`` of two integers truncates in SQLite and
    PostgreSQL alike, and every operand is non-negative), so SQL and Python
    put every length in the same bucket.
    """
    arms = [f"WHEN {length} < 4 THEN {length}"]
    for octave in range(2, _LAST_OCTAVE):
        start = 1 << octave
        first = 4 * (octave - 1)
        arms.append(
            f"WHEN {length} < {start * 2} THEN {first} + (({length} - {start}) * 4) / {start}"
        )
    return f"(CASE {' '.join(arms)} ELSE {LAST_BUCKET} END)"


def sql_code(count: str, length: str) -> str:
    """SQL computing :func:`code` of the integer expressions ``count`` and ``length``.

    The same text in SQLite and PostgreSQL (no ``printf`` nor ``lpad``: the
    bucket is written as the last two digits of 100 plus it).
    """
    klass = f"CAST(CASE WHEN {count} >= 3 THEN 3 ELSE {count} END AS TEXT)"
    return f"{klass} || substr(CAST(100 + {sql_bucket(length)} AS TEXT), 2)"


class Reach(NamedTuple):
    """The classes of a term whose bound reaches a score, and the most any other adds.

    ``codes``: the :func:`code` of every class whose bound reaches it, the
    highest bound first; ``rest``: the largest bound of the classes left
    out (every holder of the term outside ``codes`` adds at most this to
    its score).
    """

    codes: list[str]
    rest: float


def reaching(
    term: BoundedTerm, theta: float, margin: float, later: Sequence[BoundedTerm] = ()
) -> Reach | None:
    """The classes of ``term`` whose bound, times ``margin``, is at least ``theta``.

    With ``later``, a class's bound counts, beside what the term adds, what
    each of those terms adds at most to an item as long as the class's
    shortest (:meth:`~prefrontal.retrieval.ranking.BoundedTerm.bound_at`):
    the classes whose holders may reach ``theta`` holding them all.
    ``None`` when the term has no frequency buckets (no class bound known).
    """
    if not term.buckets:
        return None
    at_length: dict[int, float] = {}
    """What the later terms add at most at each length met (the frequency classes share them)."""
    ranked: list[tuple[float, str]] = []
    rest = 0.0
    for tf, shortest in term.buckets:
        klass = frequency_class(tf)
        for own, length, bucket in _class_bounds(term, tf, shortest):
            if later and length not in at_length:
                at_length[length] = sum(other.bound_at(length) for other in later)
            bound = own + at_length.get(length, 0.0)
            if bound * margin < theta:
                rest = max(rest, own)
                break
            ranked.append((-bound, _code(klass, bucket)))
    ranked.sort()
    return Reach([code for _, code in ranked], rest)


def best_classes(term: BoundedTerm, count: int) -> list[str]:
    """The :func:`code` of the ``count`` classes of ``term`` with the highest bounds, highest first.

    Empty when the term has no frequency buckets.
    """
    ranked = [
        (-own, order, _code(frequency_class(tf), bucket))
        for order, (tf, shortest) in enumerate(term.buckets)
        for own, _, bucket in itertools.islice(_class_bounds(term, tf, shortest), count)
    ]
    ranked.sort()
    return [code for _, _, code in ranked[:count]]


def _class_bounds(term: BoundedTerm, tf: int, shortest: int) -> Iterator[tuple[float, int, int]]:
    """The classes of ``term``'s holders ``tf`` times (none shorter than ``shortest``), by length.

    Each as what the term adds at most to a holder in it, the length that
    bound is taken at, and the length bucket; the bounds only fall.
    """
    for bucket in range(length_bucket(shortest), LAST_BUCKET + 1):
        length = max(bucket_shortest(bucket), shortest)
        yield term.weight * term_score(1.0, tf, length, term.average), length, bucket

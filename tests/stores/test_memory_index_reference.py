"""The in-memory store's array search against a straightforward reference, over random stores.

The reference scores as the store did before it scored in arrays: one
:class:`~prefrontal.retrieval.postings.Postings` per agent over every item
of the agent, the candidates checked one by one against the full pass
(:meth:`InMemoryMemoryStore._live`), BM25 by
:func:`~prefrontal.retrieval.ranking.scores`, the cosine of each item's
unit vector with the query's in float64, and
:func:`~prefrontal.stores.memory_search.best_hits` over the dictionaries.
Random stores are built and changed (puts, replacements, supersession,
forget, erase) and every tenant's search must give the same hits in the
same order with the same scores and signals (within 1e-9, hits tied within
that in either order; lexical alone, to the bit), through every path of the
hybrid search: exact, screened (from float16 vectors where the SIMD kernels
run, from float32 ones), the median placed from its whole band, and
screened falling back; over random vectors and over dense ones close to
each other.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from datetime import timedelta

import numpy as np
import pytest

from prefrontal.retrieval.postings import Postings
from prefrontal.retrieval.ranking import query_terms, scores
from prefrontal.stores import MemoryItem, MemoryQuery, ScoredMemory, Tenant
from prefrontal.stores.long_term import MemoryKind
from prefrontal.stores.memory import half, hybrid, segment, view
from prefrontal.stores.memory.agent_index import segment_of
from prefrontal.stores.memory.memory import InMemoryMemoryStore, _doc_id, _key
from prefrontal.stores.memory_search import best_hits, searchable_text
from prefrontal.stores.tenancy import Scope
from tests.conftest import FIXED_NOW

pytestmark = pytest.mark.anyio
WORDS = ["payment", "review", "launch", "lena", "berlin", "budget", "garden", "piano"]
WORDS += ["coffee", "train", "river", "lamp"]
USERS = ("alice", "bob", "carol")
AGENTS = ("agent", "other")
SIZE = 12


def random_vector(rng: random.Random) -> tuple[float, ...] | None:
    """Dense, sparse, a repeat of a few fixed ones, all zeros, another size, or none."""
    shape = rng.random()
    if shape < 0.35:
        return tuple(rng.gauss(0.0, 1.0) for _ in range(SIZE))
    if shape < 0.6:
        vector = [0.0] * SIZE
        for at in rng.sample(range(SIZE), rng.randint(1, 3)):
            vector[at] = rng.choice((-1.0, 1.0, 0.5))
        return tuple(vector)
    if shape < 0.8:
        return tuple(float((n * rng.randint(0, 2)) % 3 - 1) for n in range(SIZE))
    if shape < 0.85:
        return (0.0,) * SIZE
    if shape < 0.9:
        return (1.0, 2.0, 3.0)
    return None


def random_item(rng: random.Random, number: int) -> MemoryItem:
    state = rng.random()
    return MemoryItem(
        item_id=f"m{rng.randint(0, number)}",
        agent_id=rng.choice(AGENTS) if rng.random() < 0.2 else "agent",
        user_id=rng.choice(USERS),
        scope=Scope.SHARED if rng.random() < 0.3 else Scope.PRIVATE,
        kind=rng.choice((MemoryKind.EVENT, MemoryKind.FACT)),
        content=" ".join(rng.choices(WORDS, k=rng.randint(1, 8))),
        created_at=FIXED_NOW,
        valid_until=FIXED_NOW - timedelta(days=1) if state < 0.1 else None,
        supersedes=f"m{rng.randint(0, number)}" if 0.1 <= state < 0.15 else None,
        embedding=random_vector(rng),
    )


def _rounded_to_zero(cosine: float) -> float:
    """``cosine``, or 0 when it is rounding error of orthogonal vectors (numpy's SIMD sums leave
    about 1e-18 where the exact dot product is 0; the store's cosine of such vectors is 0)."""
    return 0.0 if abs(cosine) < 1e-12 else cosine


def reference(
    store: InMemoryMemoryStore, tenant: Tenant, query: MemoryQuery
) -> list[tuple[str, float, dict[str, float]]]:
    """What the store's search gave before it scored in arrays (see the module)."""
    index = Postings()
    items = store._items.values()
    for item in items:
        readable = item.scope is Scope.SHARED or item.user_id == tenant.user_id
        if item.agent_id == tenant.agent_id and readable:
            index.add(_doc_id(_key(item)), searchable_text(item))
    live = store._live(tenant, query)
    signals: dict[str, Mapping[str, float]] = {}
    words = query_terms(query.text)
    signals["bm25"] = scores(index.matches(words, allowed=set(live))) if words else {}
    if query.embedding is not None:
        vector: dict[str, float] = {}
        signals["vector"] = vector
        q = np.asarray(query.embedding, dtype=np.float64)
        if q.any():
            q = q / np.linalg.norm(q)
            for doc, item in live.items():
                if item.embedding is not None and len(item.embedding) == len(q):
                    v = np.asarray(item.embedding, dtype=np.float64)
                    norm = float(np.linalg.norm(v))
                    v = v / norm if norm else v
                    vector[doc] = max(_rounded_to_zero(float(v @ q)), 0.0)
    return best_hits(signals, query.limit)


def found(hits: list[ScoredMemory]) -> list[tuple[str, float, dict[str, float]]]:
    return [(_doc_id(_key(hit.item)), hit.score, hit.signals) for hit in hits]


def assert_same(
    got: list[tuple[str, float, dict[str, float]]],
    expected: list[tuple[str, float, dict[str, float]]],
    every: list[tuple[str, float, dict[str, float]]],
    exact: bool,
) -> None:
    """``got`` has ``expected``'s scores rank by rank, each hit scored as the reference scores it.

    ``every`` is the reference's ranking of every item. With ``exact``, the
    same hits, scores and signals to the bit. Otherwise cosines computed in
    another order may differ in the last bit, so hits whose scores are
    within 1e-9 of each other may come in either order (rarely: vectors
    equal up to scale).
    """
    if exact:
        assert got == expected
        return
    assert len(got) == len(expected)
    assert len({key for key, _, _ in got}) == len(got)
    scored = {key: (score, own) for key, score, own in every}
    for (key, score, own), (_, want, _) in zip(got, expected, strict=True):
        assert score == pytest.approx(want, abs=1e-9, rel=0)
        assert score == pytest.approx(scored[key][0], abs=1e-9, rel=0)
        assert own.keys() == scored[key][1].keys()
        for name, value in own.items():
            assert value == pytest.approx(scored[key][1][name], abs=1e-9, rel=0)


async def change(store: InMemoryMemoryStore, rng: random.Random, rounds: int) -> None:
    """Random writes and deletions: puts (new and replacing), forget and erase."""
    for _ in range(rounds):
        action = rng.random()
        if action < 0.7:
            await store.put_many([random_item(rng, 400) for _ in range(rng.randint(1, 40))])
        elif action < 0.9:
            tenant = Tenant(agent_id="agent", user_id=rng.choice(USERS))
            await store.delete(tenant, [f"m{rng.randint(0, 400)}" for _ in range(30)])
        else:
            await store.erase(Tenant(agent_id="agent", user_id=rng.choice(USERS)))


def queries(rng: random.Random) -> list[MemoryQuery]:
    out = []
    for _ in range(6):
        text = " ".join(rng.choices([*WORDS, "unknown"], k=rng.randint(0, 4)))
        vector = random_vector(rng)
        kinds = (MemoryKind.FACT,) if rng.random() < 0.2 else None
        limit = rng.choice((1, 3, 10, 50))
        out.append(
            MemoryQuery(text=text, embedding=vector, kinds=kinds, limit=limit, now=FIXED_NOW)
        )
    return out


def screening(path: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Send every search down ``path``: ``exact`` (every cosine exact), ``screened`` (float16
    where the kernels run), ``single`` (float32), ``band`` (the median from its whole band),
    ``fallback`` (screening gives up)."""
    if path != "exact":
        monkeypatch.setattr(hybrid, "SCREEN_FROM", 1)
        monkeypatch.setattr(view, "ALIKE_FROM", 1)  # rows alike computed once
    if path == "single":
        monkeypatch.setattr(half, "KERNELS", None)
    if path == "band":
        monkeypatch.setattr(hybrid, "_median_near", lambda *_: None)
    if path == "fallback":
        monkeypatch.setattr(hybrid, "CAP", 3)


PATHS = ["exact", "screened", "single", "band", "fallback"]


@pytest.mark.parametrize(
    ("seed", "path"),
    [(seed, path) for seed in range(8) for path in ("exact", "screened", "fallback")]
    + [(seed, path) for seed in range(3) for path in ("single", "band")],
)
async def test_search_gives_what_the_reference_gives(
    seed: int, path: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(segment, "COMPACT_AT", 8)  # compaction runs often
    screening(path, monkeypatch)
    rng = random.Random(seed)
    store = InMemoryMemoryStore()
    for _ in range(4):
        await change(store, rng, 12)
        for user in USERS:
            tenant = Tenant(agent_id="agent", user_id=user)
            for query in queries(rng):
                expected = reference(store, tenant, query)
                every = reference(store, tenant, query.model_copy(update={"limit": 1_000}))
                got = found(await store.search(tenant, query))
                assert_same(got, expected, every, exact=False)
                lexical = query.model_copy(update={"embedding": None})
                expected = reference(store, tenant, lexical)
                got = found(await store.search(tenant, lexical))
                assert_same(got, expected, expected, exact=True)


def dense_item(rng: random.Random, number: int, near: list[np.ndarray]) -> MemoryItem:
    """An item whose vector is one of ``near`` moved by a little, as a sentence model's are:
    many cosines within float16 rounding of each other and of the median."""
    base = near[rng.randrange(len(near))]
    vector = base + rng.choice((0.0, 1e-4, 1e-2)) * np.asarray([rng.gauss(0, 1) for _ in base])
    return MemoryItem(
        item_id=f"d{number}",
        agent_id="agent",
        user_id=rng.choice(USERS),
        scope=Scope.SHARED if rng.random() < 0.3 else Scope.PRIVATE,
        kind=MemoryKind.EVENT,
        content=" ".join(rng.choices(WORDS, k=rng.randint(1, 4))),
        created_at=FIXED_NOW,
        embedding=tuple(vector.tolist()),
    )


@pytest.mark.parametrize("path", PATHS)
async def test_dense_vectors_near_each_other_give_what_the_reference_gives(
    path: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    screening(path, monkeypatch)
    rng = random.Random(7)
    near = [np.asarray([rng.gauss(0, 1) for _ in range(48)]) for _ in range(6)]
    store = InMemoryMemoryStore()
    await store.put_many([dense_item(rng, number, near) for number in range(900)])
    for user in USERS:
        tenant = Tenant(agent_id="agent", user_id=user)
        for round_ in range(6):
            base = near[round_] if round_ < len(near) else near[0] + near[1]
            text = " ".join(rng.choices(WORDS, k=round_ % 3))
            query = MemoryQuery(text=text, embedding=tuple(base.tolist()), limit=10, now=FIXED_NOW)
            expected = reference(store, tenant, query)
            every = reference(store, tenant, query.model_copy(update={"limit": 1_000}))
            assert_same(found(await store.search(tenant, query)), expected, every, exact=False)


async def test_statistics_and_postings_follow_every_change(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(segment, "COMPACT_AT", 8)
    rng = random.Random(99)
    store = InMemoryMemoryStore()
    await change(store, rng, 60)
    index = store._indexes["agent"]
    recounts: dict[tuple[bool, str], Postings] = {}
    for item in store._items.values():
        if item.agent_id == "agent":
            place = segment_of(item)
            recount = recounts.setdefault(place, Postings())
            recount.add(_doc_id(_key(item)), searchable_text(item))
    assert set(index.statistics) == set(recounts)  # no segment outlives its last item
    for place, recount in recounts.items():
        counted, matches = index.statistics[place], recount.matches(WORDS)
        assert (counted.docs, counted.tokens) == (matches.corpus.docs, matches.corpus.tokens)
        assert [counted.df.get(w, 0) for w in WORDS] == list(matches.frequencies)
        assert set(counted.df) == set(recount._postings)  # no term outlives its last holder
    for part in index.segments.values():
        named: set[int] = set()
        for posting in part.postings.values():
            slots = posting.slots[: posting.n].tolist()
            assert len(slots) == len(set(slots))
            named |= set(slots)
        assert {slot for slot in part.slots.values() if part.terms[slot]} <= named
        assert not (set(part.free) & named)  # a reusable slot is named by no posting
        assert part.stale <= part.entries

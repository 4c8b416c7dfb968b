"""``PrefrontalStore`` search and batches as LangGraph defines them.

A query orders what the prefix and filter admit, it never narrows; what a
query is matched against is the item's index fields (the whole value by
default, a put's own field paths, nothing for ``index=False``), never JSON
keys or namespace labels; scores are similarities in ``[0, 1]``; a batch
with an operation the store refuses runs none of its operations.
"""

from __future__ import annotations

import pytest

pytest.importorskip("langgraph")

from langgraph.store.base import GetOp, PutOp, SearchOp

from prefrontal.integrations.langgraph import PrefrontalStore, indexing
from prefrontal.stores import Stores

pytestmark = pytest.mark.anyio


def fresh(**options: object) -> PrefrontalStore:
    return PrefrontalStore(Stores.in_memory(), agent_id="a", user_id="u", **options)  # type: ignore[arg-type]


async def test_a_query_ranks_everything_the_filter_admits() -> None:
    """A paraphrase still returns every admitted item, the closest first, none filtered out."""
    store = fresh()
    await store.aput(
        ("food",), "1", {"text": "Maya is vegetarian and cooks lentils", "kind": "diet"}
    )
    await store.aput(("food",), "2", {"text": "Ana likes spicy ramen", "kind": "diet"})
    await store.aput(("food",), "3", {"text": "vegetarian lasagna recipe", "kind": "recipe"})
    found = await store.asearch(("food",), query="what does a vegetarian eat")
    assert [i.key for i in found][:2] in (["1", "3"], ["3", "1"])
    assert sorted(i.key for i in found) == ["1", "2", "3"]
    unrelated = await store.asearch(("food",), query="quantum chromodynamics")
    assert sorted(i.key for i in unrelated) == ["1", "2", "3"]
    assert all(i.score == 0.0 for i in unrelated)
    diet = await store.asearch(("food",), query="vegetarian", filter={"kind": "diet"})
    assert [i.key for i in diet] == ["1", "2"]


async def test_scores_are_similarities_between_zero_and_one() -> None:
    """The same text scores 1, more shared words score higher, no shared word scores 0."""
    store = fresh()
    await store.aput(("n",), "same", {"text": "parking on level three"})
    await store.aput(("n",), "some", {"text": "parking near the station entrance"})
    await store.aput(("n",), "none", {"text": "birthday cake order"})
    found = {i.key: i.score for i in await store.asearch(("n",), query="parking on level three")}
    assert found["same"] == pytest.approx(1.0)
    assert 0.0 < (found["some"] or 0.0) < (found["same"] or 0.0)
    assert found["none"] == 0.0
    assert all(0.0 <= (s or 0.0) <= 1.0 for s in found.values())


async def test_json_keys_and_namespace_labels_are_not_words_to_match() -> None:
    """A query naming only a key or a namespace label matches nothing (score 0)."""
    store = fresh()
    await store.aput(("travel", "bookings"), "k", {"destination": "Porto", "airline": "TAP"})
    for query in ("destination airline", "travel bookings"):
        found = await store.asearch(("travel",), query=query)
        assert [(i.key, i.score) for i in found] == [("k", 0.0)]
    found = await store.asearch(("travel",), query="Porto")
    assert found[0].score is not None and found[0].score > 0


async def test_index_false_and_field_paths_are_honoured() -> None:
    """index=False items follow unscored; field paths limit what is matched; the store's fields apply."""
    store = fresh(index={"fields": ["title"]})
    await store.aput(("docs",), "plain", {"title": "launch plan", "body": "budget review"})
    await store.aput(("docs",), "hidden", {"title": "launch plan"}, index=False)
    await store.aput(("docs",), "body", {"title": "notes", "body": "launch plan"}, index=["body"])
    found = [(i.key, i.score) for i in await store.asearch(("docs",), query="launch plan")]
    assert found[-1] == ("hidden", None)
    assert {k for k, s in found[:2]} == {"plain", "body"}
    assert all(s is not None and s > 0 for _, s in found[:2])
    budget = {i.key: i.score for i in await store.asearch(("docs",), query="budget review")}
    assert budget["plain"] == 0.0  # the body is not among the store's index fields
    nested = fresh()
    await nested.aput(("n",), "k", {"a": {"b": ["alpha", "beta"]}, "c": "gamma"}, index=["a.b[*]"])
    hits = {q: (await nested.asearch(("n",), query=q))[0].score for q in ("beta", "gamma")}
    assert (hits["beta"] or 0.0) > 0 and hits["gamma"] == 0.0


async def test_a_batch_with_a_refused_operation_runs_none() -> None:
    """A put the store refuses (a namespace too deep) fails the batch before the first put runs."""
    store = fresh()
    ops = [
        PutOp(("ok",), "first", {"v": 1}),
        PutOp(tuple(f"l{i}" for i in range(40)), "deep", {"v": 2}),
    ]
    with pytest.raises(ValueError, match="at most 31 labels"):
        await store.abatch(ops)
    assert await store.abatch([GetOp(("ok",), "first")]) == [None]
    labelled = PrefrontalStore(Stores.in_memory(), agent_id="a", user_label=1)
    with pytest.raises(ValueError, match="names no user"):
        await labelled.abatch([PutOp(("m", "maya"), "k", {"v": 1}), SearchOp(("m",))])
    assert await labelled.aget(("m", "maya"), "k") is None


def letters(texts: list[str]) -> list[list[float]]:
    """A toy embedding: how often each of the letters a to e occurs."""
    return [[float(text.count(c)) for c in "abcde"] for text in texts]


async def test_an_embedding_function_scores_by_its_cosine() -> None:
    """With index={"embed": f}, a score is the best cosine of the query's and a value's vectors."""
    store = fresh(index={"dims": 5, "embed": letters, "fields": ["a", "b"]})
    await store.aput(("v",), "k", {"a": "aaa", "b": "bcd"})
    await store.aput(("v",), "off", {"a": "eee"}, index=False)
    found = await store.asearch(("v",), query="abc")
    assert [i.key for i in found] == ["k", "off"]
    best = max(indexing.cosine(letters(["abc"])[0], v) for v in letters(["aaa", "bcd"]))
    assert found[0].score == pytest.approx(best)
    assert found[1].score is None
    assert store.embeddings is not None and store.index_config is not None

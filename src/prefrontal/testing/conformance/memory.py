"""Conformance of episodic and semantic memory stores (:class:`MemoryStore`)."""

from __future__ import annotations

from typing import Any

import pytest

from prefrontal.errors import ItemRejectedError
from prefrontal.stores.long_term import (
    MAX_MEMORY_CHARS,
    MemoryItem,
    MemoryKind,
    MemoryQuery,
    MemoryStore,
)
from prefrontal.stores.tenancy import Scope, Tenant
from prefrontal.testing.conformance.base import ALICE, BOB, FTS_SYNTAX, STRANGER, StoreSuite, at
from prefrontal.testing.conformance.ownership import MemoryOwnership


def memory(item_id: str, content: str, tenant: Tenant = ALICE, **fields: Any) -> MemoryItem:
    """A memory item owned by ``tenant``, created at ``T0`` unless said otherwise."""
    fields.setdefault("created_at", at(0))
    return MemoryItem(
        item_id=item_id,
        agent_id=tenant.agent_id,
        user_id=tenant.user_id,
        content=content,
        **fields,
    )


def query(text: str, **fields: Any) -> MemoryQuery:
    """A search at ``T0`` plus one hour."""
    fields.setdefault("now", at(60))
    return MemoryQuery(text=text, **fields)


async def hit_ids(store: MemoryStore, tenant: Tenant, text: str, **fields: Any) -> list[str]:
    """The ids ``search`` returns, best first."""
    return [hit.item.item_id for hit in await store.search(tenant, query(text, **fields))]


CORPUS = (
    memory("coffee", "Alice drinks her coffee black every morning before work."),
    memory("tea", "Bob prefers green tea in the afternoon, never coffee."),
    memory("dog", "Alice walked the dog in the park on Sunday."),
    memory("budget", "The quarterly budget review moved to Thursday at ten."),
    memory("flight", "Alice booked a flight to Lisbon for the conference in May."),
)


class MemoryStoreSuite(MemoryOwnership, StoreSuite):
    """Every contract of :class:`~prefrontal.stores.MemoryStore`."""

    async def test_put_then_get_round_trips_every_field(self, store: MemoryStore) -> None:
        """An item put is returned by ``get`` equal, field for field."""
        item = memory(
            "full",
            "Met Carol at the bakery; she recommended the rye.",
            kind=MemoryKind.OBSERVATION,
            scope=Scope.SHARED,
            importance=0.9,
            occurred_at=at(-30),
            valid_until=at(600),
            thread_id="session-7",
            position=3,
            tags=("food", "carol"),
            entities=("Carol", "bakery"),
            metadata={"speaker": "alice", "turn": 4, "score": 0.25, "pinned": True},
            recall_count=2,
            last_recalled_at=at(-5),
        )
        await store.put(item)
        assert await store.get(ALICE, ["full"]) == [item]

    async def test_get_keeps_the_order_asked_and_skips_unknown_ids(
        self, store: MemoryStore
    ) -> None:
        """``get`` returns the items that exist, in the order of the ids given."""
        await store.put_many(list(CORPUS))
        found = await store.get(ALICE, ["dog", "missing", "coffee", ""])
        assert [item.item_id for item in found] == ["dog", "coffee"]
        assert await store.get(ALICE, []) == []

    async def test_put_replaces_the_item_with_the_same_id(self, store: MemoryStore) -> None:
        """A second put with the same id replaces the first, in ``get`` and in ``search``."""
        await store.put(memory("x", "The meeting is on Monday."))
        await store.put(memory("x", "The meeting is on Friday."))
        (item,) = await store.get(ALICE, ["x"])
        assert item.content == "The meeting is on Friday."
        assert await hit_ids(store, ALICE, "Monday") == []
        assert await hit_ids(store, ALICE, "Friday") == ["x"]

    async def test_search_finds_stemmed_words_best_match_first(self, store: MemoryStore) -> None:
        """Search matches word stems and ranks the item sharing more query terms first."""
        await store.put_many(list(CORPUS))
        assert await hit_ids(store, ALICE, "walking dogs in parks") == ["dog"]
        assert (await hit_ids(store, ALICE, "Alice coffee morning"))[0] == "coffee"

    async def test_search_hits_carry_positive_scores_best_first(self, store: MemoryStore) -> None:
        """Every hit has a positive score and a ``bm25`` signal, in descending score order."""
        await store.put_many(list(CORPUS))
        hits = await store.search(ALICE, query("Alice coffee flight"))
        assert hits
        assert all(hit.score > 0 and hit.signals["bm25"] > 0 for hit in hits)
        assert [hit.score for hit in hits] == sorted((hit.score for hit in hits), reverse=True)

    async def test_search_returns_at_most_limit_hits(self, store: MemoryStore) -> None:
        """``search`` returns no more than ``query.limit`` hits."""
        await store.put_many(list(CORPUS))
        assert len(await hit_ids(store, ALICE, "Alice", limit=2)) == 2

    async def test_search_filters_by_kind(self, store: MemoryStore) -> None:
        """With ``kinds`` set, only items of those kinds are returned."""
        await store.put(memory("fact", "Lisbon is the capital of Portugal.", kind=MemoryKind.FACT))
        await store.put(memory("event", "Alice flew to Lisbon.", kind=MemoryKind.EVENT))
        assert await hit_ids(store, ALICE, "Lisbon", kinds=(MemoryKind.FACT,)) == ["fact"]

    @pytest.mark.parametrize("text", ["", "   ", "?!...", "the and of to"])
    async def test_search_with_no_terms_matches_nothing(
        self, store: MemoryStore, text: str
    ) -> None:
        """Empty, blank, punctuation-only or stop-word-only text matches nothing."""
        await store.put_many(list(CORPUS))
        assert await hit_ids(store, ALICE, text) == []

    @pytest.mark.parametrize("text", FTS_SYNTAX)
    async def test_search_reads_query_syntax_as_plain_words(
        self, store: MemoryStore, text: str
    ) -> None:
        """Quotes, NEAR, stars, column filters and parentheses never raise or act as syntax."""
        await store.put_many(list(CORPUS))
        await store.put(memory("syntax", 'She typed NEAR("x" y) * col:foo (( into the box.'))
        hits = await hit_ids(store, ALICE, text)
        assert len(hits) == len(set(hits))
        if "coffee" in text.lower():
            assert "coffee" in hits

    async def test_search_with_huge_text_returns_a_result(self, store: MemoryStore) -> None:
        """A query as long as an item may be is answered, not refused by the backend."""
        await store.put_many(list(CORPUS))
        words = " ".join(f"word{i}" for i in range(MAX_MEMORY_CHARS // 12)) + " coffee"
        assert "coffee" in await hit_ids(store, ALICE, words[-MAX_MEMORY_CHARS:])

    async def test_largest_item_round_trips_and_is_found(self, store: MemoryStore) -> None:
        """An item of the maximum size is stored whole and searchable."""
        content = ("lorem ipsum " * (MAX_MEMORY_CHARS // 12))[: MAX_MEMORY_CHARS - 8] + " zebra"
        await store.put(memory("big", content))
        (item,) = await store.get(ALICE, ["big"])
        assert item.content == content
        assert await hit_ids(store, ALICE, "zebra") == ["big"]

    async def test_unicode_text_is_stored_and_searched(self, store: MemoryStore) -> None:
        """Accents, CJK and emoji round-trip; accented words are found by themselves."""
        content = "Café crème à Zürich with 東京 friends 🎉"
        await store.put(memory("u", content))
        assert (await store.get(ALICE, ["u"]))[0].content == content
        assert await hit_ids(store, ALICE, "zürich café") == ["u"]

    async def test_ids_that_cannot_be_encoded_find_nothing(self, store: MemoryStore) -> None:
        """Ids with lone surrogates are answered as unknown ids, not with a crash."""
        await store.put_many(list(CORPUS))
        bad = "coffee\ud800"
        assert await store.get(ALICE, [bad, "coffee"]) == await store.get(ALICE, ["coffee"])
        assert await store.around(ALICE, [bad], radius=2, now=at(60)) == []
        await store.record_recall(ALICE, [bad], at(1))

    async def test_another_agent_never_sees_the_items(self, store: MemoryStore) -> None:
        """A tenant of another agent gets nothing from get, search or around, even shared items."""
        await store.put(memory("mine", "secret launch codes", scope=Scope.SHARED, thread_id="t"))
        await store.put(memory("next", "more launch codes", thread_id="t", position=1))
        assert await store.get(STRANGER, ["mine"]) == []
        assert await hit_ids(store, STRANGER, "launch codes") == []
        assert await store.around(STRANGER, ["mine"], radius=5, now=at(60)) == []

    async def test_another_users_private_items_are_never_seen(self, store: MemoryStore) -> None:
        """Bob never gets Alice's private items, by id or by search."""
        await store.put(memory("private", "Alice's diary entry about the trip"))
        assert await store.get(BOB, ["private"]) == []
        assert await hit_ids(store, BOB, "diary trip") == []

    async def test_shared_items_are_seen_by_every_user_of_the_agent(
        self, store: MemoryStore
    ) -> None:
        """An item shared by Alice is found by Bob's search and get."""
        await store.put(memory("shared", "The office wifi password changed", scope=Scope.SHARED))
        assert [item.item_id for item in await store.get(BOB, ["shared"])] == ["shared"]
        assert await hit_ids(store, BOB, "wifi password") == ["shared"]

    async def test_expired_items_are_not_searched(self, store: MemoryStore) -> None:
        """An item whose ``valid_until`` has passed at ``query.now`` is not returned."""
        await store.put(memory("old", "parking pass for lot B", valid_until=at(30)))
        await store.put(memory("new", "parking pass for lot C", valid_until=at(120)))
        assert await hit_ids(store, ALICE, "parking pass") == ["new"]
        assert set(await hit_ids(store, ALICE, "parking pass", now=at(10))) == {"old", "new"}

    async def test_get_returns_expired_items(self, store: MemoryStore) -> None:
        """``get`` returns an item whether it is live or not."""
        await store.put(memory("old", "expired voucher", valid_until=at(-1)))
        assert [item.item_id for item in await store.get(ALICE, ["old"])] == ["old"]

    async def test_search_returns_only_the_live_version(self, store: MemoryStore) -> None:
        """After ``supersedes``, search returns the new version and never the old one."""
        await store.put(memory("v1", "Alice lives in Porto."))
        await store.put(memory("v2", "Alice lives in Lisbon now.", supersedes="v1"))
        assert await hit_ids(store, ALICE, "Alice lives Porto Lisbon") == ["v2"]
        (old,) = await store.get(ALICE, ["v1"])
        assert old.superseded_by == "v2"

    async def test_put_many_supersedes_in_order(self, store: MemoryStore) -> None:
        """A chain of versions written in one ``put_many`` leaves only the last one live."""
        await store.put_many(
            [
                memory("a1", "Project deadline is March"),
                memory("a2", "Project deadline is April", supersedes="a1"),
                memory("a3", "Project deadline is May", supersedes="a2"),
            ]
        )
        assert await hit_ids(store, ALICE, "project deadline") == ["a3"]

    async def test_replacing_a_superseded_item_keeps_it_superseded(
        self, store: MemoryStore
    ) -> None:
        """Re-putting an old version (without ``superseded_by``) does not bring it back."""
        await store.put(memory("v1", "Bob's phone is 555-0100"))
        await store.put(memory("v2", "Bob's phone is 555-0199", supersedes="v1"))
        await store.put(memory("v1", "Bob's phone is 555-0100"))
        assert await hit_ids(store, ALICE, "phone") == ["v2"]

    async def test_supersedes_never_touches_another_users_item(self, store: MemoryStore) -> None:
        """``supersedes`` naming another user's item leaves that item live."""
        await store.put(memory("bobs", "Bob's favourite colour is green", BOB))
        await store.put(memory("alices", "favourite colour is blue", supersedes="bobs"))
        assert await hit_ids(store, BOB, "favourite colour") == ["bobs"]

    async def test_around_returns_live_thread_neighbours_in_order(self, store: MemoryStore) -> None:
        """``around`` gives the live items within ``radius`` of each anchor, by position."""
        thread = [memory(f"m{i}", f"message {i}", thread_id="s1", position=i) for i in range(8)]
        others = [
            memory("other", "message elsewhere", thread_id="s2", position=3),
            memory("gone", "expired message", thread_id="s1", position=4, valid_until=at(-1)),
            memory("bobs", "bob's message", BOB, thread_id="s1", position=3),
        ]
        await store.put_many(thread + others)
        await store.put(memory("m2b", "message 2, corrected", thread_id="s1", position=2))
        await store.put(memory("m2c", "message 2, final", supersedes="m2b"))
        got = await store.around(ALICE, ["m3"], radius=2, now=at(60))
        assert [item.item_id for item in got] == ["m1", "m2", "m4", "m5"]

    async def test_around_judges_liveness_at_the_moment_given(self, store: MemoryStore) -> None:
        """With ``now``, an item live then is a neighbour even if it has expired since."""
        await store.put_many(
            [
                memory("a", "anchor", thread_id="s1", position=1),
                memory(
                    "b",
                    "reply, valid for ten minutes",
                    thread_id="s1",
                    position=2,
                    valid_until=at(10),
                ),
            ]
        )
        assert await store.around(ALICE, ["a"], radius=1, now=at(60)) == []
        got = await store.around(ALICE, ["a"], radius=1, now=at(5))
        assert [item.item_id for item in got] == ["b"]
        assert await store.around(ALICE, ["a"], radius=1, now=at(10)) == []

    async def test_around_merges_anchors_and_leaves_them_out(self, store: MemoryStore) -> None:
        """Neighbours of several anchors come once each, anchors excluded."""
        await store.put_many(
            [memory(f"m{i}", f"line {i}", thread_id="doc", position=i) for i in range(10)]
        )
        got = await store.around(ALICE, ["m2", "m3", "m8"], radius=1, now=at(60))
        assert [item.item_id for item in got] == ["m1", "m4", "m7", "m9"]

    async def test_around_follows_items_moved_or_deleted(self, store: MemoryStore) -> None:
        """An item put again at another place, or deleted, is a neighbour only where it now is."""
        await store.put_many(
            [memory(f"m{i}", f"line {i}", thread_id="doc", position=i) for i in range(6)]
        )
        await store.put(memory("m1", "line 1, moved", thread_id="notes", position=0))
        await store.put(memory("m4", "line 4, moved", thread_id="doc", position=9))
        await store.delete(ALICE, ["m3"])
        got = await store.around(ALICE, ["m2", "m5"], radius=1, now=at(60))
        assert [item.item_id for item in got] == []
        got = await store.around(ALICE, ["m0", "m4"], radius=2, now=at(60))
        assert [item.item_id for item in got] == ["m2"]

    async def test_around_without_thread_or_radius_is_empty(self, store: MemoryStore) -> None:
        """Items without a thread, unknown ids and radius 0 have no neighbours."""
        await store.put_many([*CORPUS, memory("t1", "x", thread_id="t", position=1)])
        assert await store.around(ALICE, ["coffee", "missing"], radius=3, now=at(60)) == []
        assert await store.around(ALICE, ["t1"], radius=0, now=at(60)) == []

    async def test_record_recall_counts_and_stamps(self, store: MemoryStore) -> None:
        """``record_recall`` adds one to ``recall_count`` and sets ``last_recalled_at``."""
        await store.put_many(list(CORPUS))
        await store.record_recall(ALICE, ["coffee", "dog"], at(5))
        await store.record_recall(ALICE, ["coffee"], at(9))
        coffee, dog, tea = await store.get(ALICE, ["coffee", "dog", "tea"])
        assert (coffee.recall_count, coffee.last_recalled_at) == (2, at(9))
        assert (dog.recall_count, dog.last_recalled_at) == (1, at(5))
        assert (tea.recall_count, tea.last_recalled_at) == (0, None)

    async def test_record_recall_ignores_items_the_tenant_cannot_see(
        self, store: MemoryStore
    ) -> None:
        """Recalls recorded by another user or agent leave a private item unchanged."""
        await store.put(memory("private", "Alice's notes"))
        await store.record_recall(BOB, ["private"], at(1))
        await store.record_recall(STRANGER, ["private"], at(1))
        (item,) = await store.get(ALICE, ["private"])
        assert item.recall_count == 0

    async def test_record_recall_keeps_the_item_searchable(self, store: MemoryStore) -> None:
        """Recording a recall changes no content: the item is found as before."""
        await store.put_many(list(CORPUS))
        before = await store.search(ALICE, query("budget review"))
        await store.record_recall(ALICE, ["budget"], at(1))
        after = await store.search(ALICE, query("budget review"))
        assert [(h.item.item_id, h.score) for h in after] == [
            (h.item.item_id, h.score) for h in before
        ]

    async def test_embeddings_round_trip_to_float32_precision(self, store: MemoryStore) -> None:
        """A stored embedding comes back with the same values to float32 precision."""
        vector = (0.1, -0.25, 0.3333333, 1e-3)
        await store.put(memory("e", "embedded text", embedding=vector))
        (item,) = await store.get(ALICE, ["e"])
        assert item.embedding == pytest.approx(vector, rel=1e-6)

    async def test_query_embedding_fuses_vector_similarity(self, store: MemoryStore) -> None:
        """With a query embedding, an item close in vector space is found without shared words."""
        await store.put_many(
            [
                memory("near", "automobile maintenance", embedding=(1.0, 0.0, 0.0)),
                memory("far", "car wash tokens", embedding=(0.0, 1.0, 0.0)),
                memory("none", "car insurance renewal"),
            ]
        )
        hits = await store.search(ALICE, query("car", embedding=(0.9, 0.1, 0.0)))
        by_id = {hit.item.item_id: hit for hit in hits}
        assert set(by_id) == {"near", "far", "none"}
        assert by_id["near"].signals["vector"] > by_id["far"].signals["vector"]
        assert "bm25" not in by_id["near"].signals

    async def test_vector_search_honours_tenancy_and_lifecycle(self, store: MemoryStore) -> None:
        """Vector hits obey the same tenancy, TTL and supersession filters as BM25 hits."""
        vector = (1.0, 0.0)
        await store.put_many(
            [
                memory("bobs", "b", BOB, embedding=vector),
                memory("expired", "e", valid_until=at(1), embedding=vector),
                memory("old", "o", embedding=vector),
                memory("new", "n", supersedes="old", embedding=vector),
            ]
        )
        assert await hit_ids(store, ALICE, "", embedding=vector) == ["new"]

    async def test_write_is_visible_to_the_next_read(self, store: MemoryStore) -> None:
        """Each put is seen by the very next search and get."""
        for i in range(20):
            await store.put(memory(f"n{i}", f"note number {i} about kiwis"))
            assert f"n{i}" in await hit_ids(store, ALICE, "kiwis", limit=100)

    async def test_failed_put_leaves_the_store_usable(self, store: MemoryStore) -> None:
        """A rejected item changes nothing, and the store keeps answering."""
        await store.put_many(list(CORPUS))
        broken = memory("bad", "fine text").model_copy(update={"metadata": {"k": "bad \ud800"}})
        try:
            await store.put_many([memory("ok", "another coffee note"), broken])
        except ItemRejectedError:
            assert await store.get(ALICE, ["ok", "bad"]) == []
        assert "coffee" in await hit_ids(store, ALICE, "coffee")

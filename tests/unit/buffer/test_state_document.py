"""The stored document of a buffer: the snapshot's JSON, remembered by its text for decoding."""

from __future__ import annotations

import json
import sys
import threading
from collections.abc import Callable

import pytest

from prefrontal.buffer import BufferConfig, BufferSnapshot, OverflowPolicy, SessionBuffer
from prefrontal.buffer.state_document import (
    ENCODED_LINEAGES,
    STATE_FIELD,
    _Documents,
    _item_json,
    decode,
    encode,
    forget,
)
from prefrontal.recent import Recent
from prefrontal.stores.memory import InMemoryWorkingMemoryStore
from prefrontal.stores.working_memory import SessionKey

from .conftest import Clock, at, item, make_buffer, words

pytestmark = pytest.mark.anyio


async def test_the_document_is_the_snapshots_json_before_and_after_a_change() -> None:
    """The document is ``model_dump_json()`` of the snapshot, and reads back to it."""
    buffer = make_buffer(OverflowPolicy.LRU, max_items=8)
    for n in range(5):
        await buffer.add(item(f"Entry {n}: the launch review.", tags=("t",)), now=at(n))
    first = buffer.snapshot()
    assert encode(first)[STATE_FIELD] == first.model_dump_json().encode()

    buffer.access(first.items[1].item_id, now=at(10))
    await buffer.add(item("Entry 5: Lena signs it off on Friday."), now=at(11))
    second = buffer.snapshot()
    text = encode(second)[STATE_FIELD]
    assert text == second.model_dump_json().encode() != encode(first)[STATE_FIELD]
    assert BufferSnapshot.model_validate_json(text) == second


async def test_a_document_decodes_to_an_equal_snapshot_parsed_or_remembered() -> None:
    """Decoding gives the snapshot whether the text was seen before or is parsed afresh."""
    buffer = make_buffer(OverflowPolicy.LRU, max_items=4)
    for n in range(6):
        await buffer.add(item(f"Note {n} about the payment review."), now=at(n))
    snapshot = buffer.snapshot()
    state = encode(snapshot)
    assert decode(state) is snapshot  # remembered from encoding
    spaced = {STATE_FIELD: json.dumps(json.loads(state[STATE_FIELD]), indent=1)}
    parsed = decode(spaced)  # a text never seen: parsed
    assert parsed == snapshot and parsed is not snapshot
    assert decode(snapshot.model_dump(mode="json")) == snapshot  # a plain tree still reads


def test_the_caches_keep_their_bound_and_their_order_under_threads() -> None:
    """Eight threads putting and getting at once: no error, never more than the bound kept.

    Threads switch every microsecond here, so that a get racing an eviction
    shows (without the lock, a ``KeyError`` in every run tried).
    """
    recent: Recent[int, int] = Recent(64)

    def work(offset: int) -> None:
        for n in range(20_000):
            recent.put(offset + n % 200, n)
            recent.get(offset + (n * 7) % 200)

    assert _raced(work) == []
    assert len(recent) == 64
    recent.put(-1, 0)
    recent.get(-1)
    assert recent.get(-1) == 0 and len(recent) == 64


async def test_a_session_keeps_only_its_latest_document_remembered() -> None:
    """Saving a session's new state forgets the document it replaces (parsed again if asked),
    while the new one is remembered: a session's turns do not pile up decoded snapshots."""
    store = InMemoryWorkingMemoryStore()
    key = SessionKey(agent_id="agent", user_id="alice", session_id="s1")
    session = await SessionBuffer.load(store, key, count_tokens=words, clock=Clock())
    await session.add(item("Entry 1: the launch review."), now=at(0))
    first = await session.save(now=at(0))
    first_snapshot = decode(first.state)
    await session.add(item("Entry 2: Lena signs it off."), now=at(1))
    second = await session.save(now=at(1))
    assert decode(second.state) is decode(second.state)  # remembered
    parsed = decode(first.state)
    assert parsed == first_snapshot and parsed is not first_snapshot  # forgotten: parsed again


async def test_a_spliced_document_is_the_snapshots_json_empty_or_with_items_seen_before() -> None:
    """An empty buffer's document, and one spliced from items encoded before, are
    ``model_dump_json()`` of their snapshots; a new item's JSON is its own, never a
    remembered one's."""
    buffer = make_buffer(OverflowPolicy.LRU, max_items=4)
    empty = buffer.snapshot()
    assert encode(empty)[STATE_FIELD] == empty.model_dump_json().encode()
    for n in range(6):  # past max_items: items leave, others take their places
        await buffer.add(item(f"Step {n} of the payment review."), now=at(n))
        snapshot = buffer.snapshot()
        assert encode(snapshot)[STATE_FIELD] == snapshot.model_dump_json().encode()
    again = buffer.snapshot()
    assert encode(again)[STATE_FIELD] == again.model_dump_json().encode()
    assert decode({STATE_FIELD: again.model_dump_json()}) == again


async def test_a_lineage_keeps_only_its_last_snapshots_items_and_documents_stay_exact() -> None:
    """Each save's document is ``model_dump_json()`` of its snapshot, whichever items its
    session's last save shared; a session remembers only the items of its last snapshot
    (an older snapshot's items are not kept alive), and only the last sessions saved are."""
    buffer = make_buffer(OverflowPolicy.LRU, max_items=4)
    key = SessionKey(agent_id="agent", user_id="alice", session_id="s1")
    for n in range(7):  # items leave, are touched, and new ones come: shared and new items
        await buffer.add(item(f"Step {n} of the payment review."), now=at(n))
        if n % 2:
            buffer.access(buffer.snapshot().items[0].item_id, now=at(n))
        snapshot = buffer.snapshot()
        for _ in range(2):  # a turn's two saves of nearly the same items
            assert encode(snapshot, key)[STATE_FIELD] == snapshot.model_dump_json().encode()
        kept = _item_json._last.get(key)
        assert kept is not None and kept[0] is snapshot.items
        assert set(kept[1]) == {id(i) for i in snapshot.items}
    for n in range(ENCODED_LINEAGES + 3):  # other sessions: the first one's items let go
        other = make_buffer(OverflowPolicy.LRU, max_items=4)
        await other.add(item(f"Note {n} of another session."), now=at(n))
        lineage = SessionKey(agent_id="agent", user_id="alice", session_id=f"other-{n}")
        encoded = other.snapshot()
        assert encode(encoded, lineage)[STATE_FIELD] == encoded.model_dump_json().encode()
    assert len(_item_json) == ENCODED_LINEAGES
    assert _item_json._last.get(key) is None


async def test_documents_are_found_by_their_text_least_recently_used_dropped_first() -> None:
    """A document is found by an equal text (not only the very object), an equal text put
    again takes the place of the first, and past the bound the least recently used goes."""
    documents = _Documents(3)
    buffer = make_buffer(OverflowPolicy.LRU, max_items=4)
    snapshots = []
    for n in range(4):
        await buffer.add(item(f"Step {n} of the payment review."), now=at(n))
        snapshots.append(buffer.snapshot())
    texts = [s.model_dump_json() for s in snapshots]
    for text, snapshot in zip(texts[:3], snapshots[:3], strict=True):
        documents.put(text, snapshot)
    assert documents.get("".join(list(texts[0]))) is snapshots[0]  # an equal copy: now recent
    documents.put(texts[3], snapshots[3])  # past the bound: texts[1], least recently used, goes
    assert documents.get(texts[1]) is None
    assert [documents.get(t) for t in (texts[0], texts[2], texts[3])] == [
        snapshots[0],
        snapshots[2],
        snapshots[3],
    ]
    documents.put(texts[2], snapshots[3])
    assert documents.get(texts[2]) is snapshots[3] and len(documents) == 3
    documents.drop("".join(list(texts[2])))
    assert documents.get(texts[2]) is None and len(documents) == 2
    documents.clear()
    assert len(documents) == 0


def test_the_documents_keep_their_bound_under_threads() -> None:
    """Eight threads putting, getting and dropping at once: no error, never past the bound."""
    documents = _Documents(8)
    snapshot = make_buffer().snapshot()

    def work(offset: int) -> None:
        for n in range(5_000):
            documents.put(str(offset + n % 50), snapshot)
            documents.get(str(offset + (n * 7) % 50))
            if n % 11 == 0:
                documents.drop(str(offset + (n * 3) % 50))

    assert _raced(work) == []
    assert len(documents) <= 8


def _raced(work: Callable[[int], None]) -> list[BaseException]:
    """Run ``work(offset)`` in eight threads at once (offsets 0, 100, ... 700), threads
    switching every microsecond so that a race shows; what any of them raised."""
    previous = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    errors: list[BaseException] = []

    def guarded(offset: int) -> None:
        try:
            work(offset)
        except BaseException as error:  # pragma: no cover - the failure these tests look for
            errors.append(error)

    threads = [threading.Thread(target=guarded, args=(k * 100,)) for k in range(8)]
    try:
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        sys.setswitchinterval(previous)
    return errors


async def test_a_document_head_is_its_settings_own_json_when_they_change_between_saves() -> None:
    """The head written for one settings object is written again only for that very
    object: a buffer reconfigured (or another session's settings) gets its own."""
    buffer = make_buffer(OverflowPolicy.LRU, max_items=4)
    await buffer.add(item("Lena signs the payment review off."), now=at(0))
    for config in (
        buffer.config,
        BufferConfig(max_items=3, policy=OverflowPolicy.FIFO),
        BufferConfig(max_items=3, policy=OverflowPolicy.FIFO),  # equal, another object
        BufferConfig(max_items=5, fade_seconds=60.0),
    ):
        await buffer.reconfigure(config, now=at(1))
        snapshot = buffer.snapshot()
        assert encode(snapshot)[STATE_FIELD] == snapshot.model_dump_json().encode()
        assert (
            encode(snapshot)[STATE_FIELD] == snapshot.model_dump_json().encode()
        )  # the head again


async def test_a_document_is_utf8_bytes_and_reads_back_as_bytes_or_as_a_string() -> None:
    """A document quoting words beyond Latin-1 is the UTF-8 of ``model_dump_json()``, its items'
    JSON spliced as bytes; it decodes to the snapshot from its bytes or from its string (as
    older states kept it), parsed afresh or remembered, and forgetting it by either works."""
    buffer = make_buffer(OverflowPolicy.LRU, max_items=4)
    for n, words_beyond in enumerate(("Łódź – café", "東京の会議", "naïve → done 🚀")):
        await buffer.add(item(f"Step {n}: {words_beyond}."), now=at(n))
    snapshot = buffer.snapshot()
    key = SessionKey(agent_id="agent", user_id="alice", session_id="utf8")
    for _ in range(2):  # encoded afresh, then spliced from the items remembered
        document = encode(snapshot, key)[STATE_FIELD]
        assert isinstance(document, bytes)
        assert document == snapshot.model_dump_json().encode()
    assert decode({STATE_FIELD: document}) is snapshot  # remembered
    text = snapshot.model_dump_json()
    parsed = decode({STATE_FIELD: text})  # the string: another key, parsed
    assert parsed == snapshot and parsed is not snapshot
    forget({STATE_FIELD: document})
    again = decode({STATE_FIELD: bytes(bytearray(document))})  # forgotten: parsed again
    assert again == snapshot and again is not snapshot

"""A buffer snapshot as the JSON document a working-memory store keeps, and back.

:func:`encode` writes a :class:`~prefrontal.buffer.snapshot.BufferSnapshot`
as one JSON string; :func:`decode` reads it (or a plain tree of dicts, as
older states were kept) back into an equal snapshot.

Both sides remember recent work, because a session's turns mostly re-save
what the last turn saved:

* a snapshot's items are frozen models, and the items a turn did not touch
  are the very objects the last turn saved; :func:`encode` keeps the JSON of
  the last :data:`ENCODED_ITEMS` items it wrote, by object, and serializes
  only the items it has not seen (a 64-item buffer with one new item costs
  one item's serialization, not 64);
* :func:`decode` maps the text of the last :data:`DECODED_DOCUMENTS`
  documents it parsed or encoded to their snapshots, so a session's next
  turn does not parse again what its last turn wrote.

The caches hold values only (frozen models and their JSON), never state a
caller could observe: the document for a snapshot is the same JSON value
whether or not its items were cached, and decodes to an equal snapshot.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any, Final, Generic, TypeVar

from prefrontal.buffer.models import BufferItem
from prefrontal.buffer.snapshot import BufferSnapshot

STATE_FIELD: Final = "buffer"
"""The key of the document in a session's ``SessionState.state``."""
DECODED_DOCUMENTS: Final = 256
"""Documents whose snapshots :func:`decode` remembers."""
ENCODED_ITEMS: Final = 4_096
"""Items whose JSON :func:`encode` remembers: a few megabytes at most, and
the buffers of dozens of sessions at the default 64 items each."""

K = TypeVar("K")
V = TypeVar("V")


class Recent(Generic[K, V]):
    """The last ``size`` entries put, least recently used dropped first.

    Safe to share between threads (event loops in several threads of one
    process share these caches): each call holds a lock.
    """

    def __init__(self, size: int) -> None:
        self._size = size
        self._entries: OrderedDict[K, V] = OrderedDict()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, key: K) -> V | None:
        with self._lock:
            value = self._entries.get(key)
            if value is not None:
                self._entries.move_to_end(key)
            return value

    def put(self, key: K, value: V) -> V:
        with self._lock:
            self._entries[key] = value
            self._entries.move_to_end(key)
            while len(self._entries) > self._size:
                self._entries.popitem(last=False)
            return value


_PARSED: Recent[str, BufferSnapshot] = Recent(DECODED_DOCUMENTS)
_ITEM_JSON: Recent[int, tuple[BufferItem, str]] = Recent(ENCODED_ITEMS)
"""By ``id(item)``: the item itself (kept alive, so its id is not reused) and its JSON."""
_ITEM_SERIALIZER = BufferItem.__pydantic_serializer__


def encode(snapshot: BufferSnapshot) -> dict[str, Any]:
    """The store's JSON state for ``snapshot``: the snapshot as one JSON document.

    One string rather than a tree of dicts: a store holding many sessions in
    process memory keeps one object per session, and loading goes through
    pydantic's JSON parser in one step. The document is the JSON of
    ``snapshot.model_dump_json()`` with the items last among its fields.
    """
    rest = snapshot.model_dump_json(exclude={"items"})
    items = ",".join(_item_json(item) for item in snapshot.items)
    document = f'{rest[:-1]},"items":[{items}]}}'
    _PARSED.put(document, snapshot)
    return {STATE_FIELD: document}


def decode(state: dict[str, Any]) -> BufferSnapshot:
    """The snapshot in a store's JSON state (as :func:`encode` wrote it, or as a plain tree)."""
    document = state.get(STATE_FIELD)
    if isinstance(document, str):
        return _PARSED.get(document) or _PARSED.put(
            document, BufferSnapshot.model_validate_json(document)
        )
    return BufferSnapshot.model_validate(state)


def _item_json(item: BufferItem) -> str:
    known = _ITEM_JSON.get(id(item))
    if known is not None and known[0] is item:
        return known[1]
    text = _ITEM_SERIALIZER.to_json(item).decode()
    _ITEM_JSON.put(id(item), (item, text))
    return text

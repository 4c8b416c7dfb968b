"""A buffer snapshot as the JSON document a working-memory store keeps, and back.

:func:`encode` writes a :class:`~prefrontal.buffer.snapshot.BufferSnapshot`
as one JSON document, the UTF-8 bytes of ``snapshot.model_dump_json()``;
:func:`decode` reads it (or the same document as a string, or a plain tree of
dicts, as older states were kept) back into an equal snapshot. The document stays
bytes from its items' JSON to the store, which binds it as they are: a document
quoting a character beyond Latin-1 is never widened to a string of two bytes a
character, nor encoded back at each save.

:func:`decode` remembers the last :data:`DECODED_DOCUMENTS` documents it
parsed or :func:`encode` wrote, by their bytes or text (compared, not hashed), so a
session's next turn does not parse again what its last turn wrote. Items are not remembered one by
one: a turn touches every fragment it shows again, so nearly every item of
a saved buffer is a new value, and serializing the whole snapshot at once
costs less than looking its items up (and keeps no thousands of old items
alive for the garbage collector to walk).

The cache holds values only (frozen snapshots, by their JSON), never state
a caller could observe: a document decodes to an equal snapshot whether it
was remembered or parsed. A session that saves a new document has the one
it replaces forgotten (:func:`forget`), so a session keeps at most its
latest document remembered, not one per turn. Both caches are in the
forgetting registry (:func:`prefrontal.forgetting.register`): erasing a
user or forgetting a memory empties them.
"""

from __future__ import annotations

import threading
from collections.abc import Hashable
from typing import Any, Final

from prefrontal.buffer.config import BufferConfig
from prefrontal.buffer.models import BufferItem
from prefrontal.buffer.snapshot import SNAPSHOT_FORMAT, BufferSnapshot
from prefrontal.forgetting import register
from prefrontal.recent import Recent

STATE_FIELD: Final = "buffer"
"""The key of the document in a session's ``SessionState.state``."""
Document = bytes | str
"""A buffer document: its UTF-8 bytes (as :func:`encode` writes it and the stores read it) or,
as older states were kept, a string."""
DECODED_DOCUMENTS: Final = 16
"""Documents whose snapshots :func:`decode` remembers: enough for the sessions a process
turns between in quick succession. A larger cache seldom hits under load (a busy process
turns hundreds of sessions a second) yet keeps every remembered snapshot's items alive
long enough for the garbage collector to move them to its oldest generation and walk them
there: with 256, a process starting a new session every turn spent about 0.45 ms a turn
in full collections, against 0.17 ms with 16."""


class _Documents:
    """The last ``size`` documents with their snapshots, found by their bytes (or text)
    compared, never hashed: a document is some fifty kilobytes late in a session, and
    hashing a new one (each save's, and each load's read back from a database) reads it all,
    where comparing it with the few remembered stops at the first length or byte that differs (the
    very object, as an in-memory store gives it back, at once). The most recently used
    last; each call holds a lock (event loops in several threads of one process share it).
    """

    def __init__(self, size: int) -> None:
        self._size = size
        self._entries: list[tuple[Document, BufferSnapshot]] = []
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, document: Document) -> BufferSnapshot | None:
        """The snapshot remembered for ``document`` (bytes equal to its bytes, or a string to
        its string), now the most recently used."""
        with self._lock:
            entries = self._entries
            for index in range(len(entries) - 1, -1, -1):
                if entries[index][0] == document:
                    found = entries.pop(index)
                    entries.append(found)
                    return found[1]
            return None

    def put(self, document: Document, snapshot: BufferSnapshot) -> BufferSnapshot:
        """Remember ``snapshot`` for ``document`` (in place of an equal text's), the least
        recently used dropped past the bound; ``snapshot``."""
        with self._lock:
            entries = [e for e in self._entries if e[0] != document]
            entries.append((document, snapshot))
            self._entries = entries[-self._size :]
            return snapshot

    def drop(self, document: Document) -> None:
        """Forget ``document`` (nothing happens when it is not remembered)."""
        with self._lock:
            self._entries = [e for e in self._entries if e[0] != document]

    def clear(self) -> None:
        """Drop every entry (an erased user's items among them)."""
        with self._lock:
            self._entries = []


_PARSED = _Documents(DECODED_DOCUMENTS)
_SERIALIZER = BufferSnapshot.__pydantic_serializer__
_ITEM_SERIALIZER = BufferItem.__pydantic_serializer__
ENCODED_LINEAGES: Final = DECODED_DOCUMENTS
"""Lineages (sessions) whose last snapshot's item JSON :func:`encode` remembers, at most: the
sessions whose documents :func:`decode` remembers."""


class _ItemJson:
    """Per lineage (a session), the JSON of each item of the snapshot it last encoded, as
    UTF-8 bytes, by the item's ``id()``, that snapshot's items tuple kept beside it.

    The tuple keeps each remembered item alive, so an ``id()`` found is that very
    object's (no other live object has it). A lineage keeps only its last snapshot's
    items: an item is remembered from one save to the next of its session (the two
    saves of a turn, a turn to the next), no longer than that snapshot lives (its
    session's latest document holds it anyway), so old items are not kept alive until
    the garbage collector moves them to its oldest generation and walks them there.
    The least recently encoded lineage is dropped past :data:`ENCODED_LINEAGES`.
    """

    def __init__(self, lineages: int) -> None:
        self._last: Recent[Hashable, tuple[tuple[BufferItem, ...], dict[int, bytes]]] = Recent(
            lineages
        )

    def __len__(self) -> int:
        """How many lineages are remembered."""
        return len(self._last)

    def all(self, items: tuple[BufferItem, ...], lineage: Hashable = None) -> list[bytes]:
        """The JSON of each of ``items``, in order (``to_json(item)`` of each), remembered
        as ``lineage``'s last: an item of the snapshot ``lineage`` encoded last is not
        serialized again."""
        last = self._last.get(lineage)
        before = last[1] if last is not None else {}
        serialize = _ITEM_SERIALIZER.to_json
        texts: dict[int, bytes] = {}
        found: list[bytes] = []
        for item in items:
            key = id(item)
            text = before.get(key)
            if text is None:
                text = serialize(item)
            texts[key] = text
            found.append(text)
        self._last.put(lineage, (items, texts))
        return found

    def clear(self) -> None:
        """Drop every entry (an erased user's items among them)."""
        self._last.clear()


_item_json = _ItemJson(ENCODED_LINEAGES)
register(_PARSED)
register(_item_json)
_HEAD: Final = {"format", "config"}
_TAIL_LEFT_OUT: Final = {"format", "config", "items"}


def encode(snapshot: BufferSnapshot, lineage: Hashable = None) -> dict[str, Any]:
    """The store's JSON state for ``snapshot``: ``snapshot.model_dump_json()``, as its UTF-8 bytes.

    One document rather than a tree of dicts: a store holding many sessions in
    process memory keeps one object per session, and loading goes through
    pydantic's JSON parser in one step. Bytes rather than a string: a database
    binds them as they are, and pydantic parses them as they are read back.

    A turn saves its session twice (when its context is ready, and at its end
    with the reply offered), and the second save holds nearly the same item
    objects as the first (read back from the document the first wrote): the
    JSON of the items of the snapshot ``lineage`` (the session's key) encoded
    last is remembered by the item, and the document is spliced from
    those and the snapshot's other fields, the very text
    ``snapshot.model_dump_json()`` gives, as UTF-8 (joined as bytes: neither an item's
    JSON nor the document is ever decoded into a string).
    """
    head = _head(snapshot)
    tail = _SERIALIZER.to_json(snapshot, exclude=_TAIL_LEFT_OUT)
    items = b",".join(_item_json.all(snapshot.items, lineage))
    document = b"".join((head[:-1], b',"items":[', items, b"],", tail[1:]))
    _PARSED.put(document, snapshot)
    return {STATE_FIELD: document}


class _Head:
    """The last document head written (``{"format":1,"config":{...}}``), with the settings
    it holds: a session's buffer keeps its settings object from save to save, and the
    settings are frozen and hold no one's words. One pair, replaced whole (threads see
    one or the other)."""

    def __init__(self) -> None:
        self._last: tuple[BufferConfig, bytes] | None = None

    def __call__(self, snapshot: BufferSnapshot) -> bytes:
        """The JSON of ``snapshot``'s format and settings: the text written last again
        while the settings are the very same object."""
        last = self._last
        config = snapshot.config
        current = snapshot.format == SNAPSHOT_FORMAT
        if last is not None and last[0] is config and current:
            return last[1]
        head: bytes = _SERIALIZER.to_json(snapshot, include=_HEAD)
        if current:
            self._last = (config, head)
        return head


_head = _Head()


def forget(state: dict[str, Any]) -> None:
    """Stop remembering the document of ``state``: a newer one of its session was saved.

    A superseded document would otherwise stay remembered, with its
    snapshot's items, until evicted: items the garbage collector walks for
    nothing, a session's turns each leaving one more.
    """
    document = state.get(STATE_FIELD)
    if isinstance(document, bytes | str):
        _PARSED.drop(document)


def decode(state: dict[str, Any]) -> BufferSnapshot:
    """The snapshot in a store's JSON state (as :func:`encode` wrote it, its document as bytes
    or a string, or as a plain tree)."""
    document = state.get(STATE_FIELD)
    if isinstance(document, bytes | str):
        return _PARSED.get(document) or _PARSED.put(
            document, BufferSnapshot.model_validate_json(document)
        )
    return BufferSnapshot.model_validate(state)

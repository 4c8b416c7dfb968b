"""A held item's JSON written from an earlier version's: only the values that changed written.

A turn refreshes most of the items its session's buffer holds: each refreshed
item is a new value that differs from the version the turn loaded in its last
access time, its access count, its provenance (the turn that showed it) and,
for a memory, its priority (the memory's rerank score moves with every recall).
:func:`respliced` writes such an item's JSON as the earlier version's with
those values put in place of the old ones, the rest of the text kept: the
very bytes ``BufferItem.__pydantic_serializer__.to_json(item)`` gives (the
tests compare them), for a fraction of its cost.

It only splices what it can prove: every other field must hold the very
value of the earlier version (the same object, or an equal plain value that
is written the same), and each value it writes is written by pydantic's own
serializer of that type. Anything else (another model, a float equal to a
different one, a field added to :class:`~.models.BufferItem`) gives ``None``:
the caller serializes the item whole.

Where each spliced value sits in the earlier text is found by the key that
opens it and the key that follows it: every string inside an item's JSON has
its quotes escaped, so ``,"priority":`` and the like occur only where the
field is, except in a provenance's ``extra`` (its keys are anyone's), which
is why the end of the provenance is the *last* ``,"seq":`` (only ``seq`` and
``consolidating_into``, a string, follow it).
"""

from __future__ import annotations

from datetime import datetime
from math import copysign
from typing import Any, Final

import pydantic_core

from prefrontal.buffer.models import BufferItem, ItemProvenance

ORDER: Final = (
    "item_id",
    "content",
    "source",
    "tokens",
    "priority",
    "salience",
    "factors",
    "confidence",
    "tags",
    "entities",
    "added_at",
    "last_accessed_at",
    "access_count",
    "pinned",
    "lifetime",
    "summary_of",
    "provenance",
    "seq",
    "consolidating_into",
)
"""The fields of :class:`~.models.BufferItem` in the order its JSON writes them (splicing
is off when the model's differ: a field added, moved or renamed)."""
SPLICED: Final = ("priority", "last_accessed_at", "access_count", "provenance")
"""The fields whose values :func:`respliced` writes in place, in the order of the JSON."""
_KEPT: Final = tuple(name for name in ORDER if name not in SPLICED)
_OPENS: Final = {name: f',"{name}":'.encode() for name in SPLICED}
_CLOSES: Final = {
    "priority": b',"salience":',
    "last_accessed_at": b',"access_count":',
    "access_count": b',"pinned":',
    "provenance": b',"seq":',
}
_ENABLED: Final = tuple(BufferItem.model_fields) == ORDER and all(
    field.alias is None and field.serialization_alias is None and not field.exclude
    for field in BufferItem.model_fields.values()
)
_ITEM: Final = BufferItem.__pydantic_serializer__
_PROVENANCE: Final = ItemProvenance.__pydantic_serializer__
_last_time: tuple[datetime, bytes] | None = None
"""The last access time written (a turn's refresh touches every item at one instant)."""


def respliced(item: BufferItem, previous: BufferItem, previous_json: bytes) -> bytes | None:
    """``item``'s JSON, from ``previous_json`` (that of ``previous``, an earlier version of
    it); ``None`` when ``item`` differs from ``previous`` in more than :data:`SPLICED`."""
    if not _ENABLED:
        return None
    new: dict[str, Any] = item.__dict__
    old: dict[str, Any] = previous.__dict__
    for name in _KEPT:
        if not _written_alike(new[name], old[name]):
            return None
    pieces: list[bytes] = []
    cursor = 0
    for name in SPLICED:
        value = new[name]
        if name != "provenance" and _written_alike(value, old[name]):
            continue
        if value is old[name]:
            continue
        written = _written(item, name, value)
        opens = _OPENS[name]
        start = previous_json.find(opens, cursor)
        if written is None or start < 0:
            return None
        start += len(opens)
        closes = _CLOSES[name]
        end = (
            previous_json.rfind(closes, start)
            if name == "provenance"
            else previous_json.find(closes, start)
        )
        if end < 0:
            return None
        pieces += (previous_json[cursor:start], written)
        cursor = end
    pieces.append(previous_json[cursor:])
    return b"".join(pieces)


def _written_alike(new: object, old: object) -> bool:
    """True when ``new`` is written to JSON just as ``old`` is: the same object, or an equal
    string, integer, float of the same sign (``0.0`` equals ``-0.0``) or tuple of strings
    (not a time: equal instants in two zones are written apart; not a model)."""
    if new is old:
        return True
    kind = type(new)
    if kind is not type(old) or new != old:
        return False
    if kind is str or kind is int:
        return True
    if kind is float:
        return copysign(1.0, new) == copysign(1.0, old)  # type: ignore[arg-type]
    return kind is tuple and all(type(v) is str for v in new)  # type: ignore[attr-defined]


def _written(item: BufferItem, name: str, value: object) -> bytes | None:
    """``value``, ``item``'s field ``name``, as the item's JSON writes it (``None``: a value
    of a type not written here)."""
    kind = type(value)
    if name == "provenance":
        return _PROVENANCE.to_json(value) if kind is ItemProvenance else None
    if name == "access_count":
        return str(value).encode() if kind is int else None
    if name == "priority":
        return pydantic_core.to_json(value) if kind is float else None
    return _time(item, value) if kind is datetime else None  # type: ignore[arg-type]


def _time(item: BufferItem, value: datetime) -> bytes:
    """``item``'s last access time, ``value``, as its JSON writes it (the item's own
    serializer, once per instant)."""
    global _last_time  # one entry, replaced whole (atomic in CPython)
    last = _last_time
    if last is not None and last[0] is value:
        return last[1]
    text = _ITEM.to_json(item, include={"last_accessed_at"})  # {"last_accessed_at":...}
    written = text[len(b'{"last_accessed_at":') : -1]
    _last_time = (value, written)
    return written

"""How a LangGraph item is kept as a prefrontal memory item, and read back.

An item ``(namespace, key) -> value`` becomes one :class:`MemoryItem` of the
store's tenant:

- ``item_id``: a digest of the namespace and key, so a put replaces;
- ``content``: the value as JSON (what prefrontal's search indexes and a
  turn renders);
- ``tags``: one opaque term per leading part of the namespace and one for
  the whole catalogue, which is how a search and ``list_namespaces`` find
  the items (the namespace's labels are not searchable words);
- ``metadata``: the namespace and key (to read them back), ``updated_at``,
  the item's TTL in minutes where it has one, and its index fields where
  its put chose them (``index=False`` or a list of field paths);
- ``valid_until``: ``now + ttl`` (prefrontal's expiry: an expired item is
  never searched, and reads here treat it as absent).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from datetime import datetime, timedelta
from typing import Any

from langgraph.store.base import Item, SearchItem

from prefrontal.stores.long_term import MemoryItem, MemoryKind
from prefrontal.stores.tenancy import Tenant

CATALOGUE_TAG = "lgcatalogue"
"""A tag every stored item carries: one term that finds all of them."""
NAMESPACE_KEY = "langgraph_namespace"
ITEM_KEY = "langgraph_key"
UPDATED_KEY = "langgraph_updated_at"
TTL_KEY = "langgraph_ttl_minutes"
INDEX_KEY = "langgraph_index"
"""The put's own index fields, as JSON (``false`` or a list); absent: the store's fields."""
MAX_DEPTH = 31
"""A namespace's prefix terms (one per leading part, and the catalogue) fit in 64 tags."""
MAX_LABEL_CHARS = 256
_LETTERS = str.maketrans("0123456789abcdef", "ghijklmnopqrstuv")


def _digest(parts: tuple[str, ...]) -> str:
    return hashlib.sha256(json.dumps(parts, ensure_ascii=False).encode()).hexdigest()


def item_id(namespace: tuple[str, ...], key: str) -> str:
    """The memory item id of ``(namespace, key)``: stable, and the same for every backend."""
    return "lg-" + _digest((*namespace, "\x00", key))[:40]


def prefix_tag(prefix: tuple[str, ...]) -> str:
    """The one-word term every item under ``prefix`` carries (letters only: one analysed term)."""
    if not prefix:
        return CATALOGUE_TAG
    return "lgns" + _digest(prefix)[:24].translate(_LETTERS)


def check_namespace(namespace: tuple[str, ...]) -> None:
    """Refuse a namespace prefrontal's tags cannot hold (``ValueError``)."""
    if len(namespace) > MAX_DEPTH:
        raise ValueError(f"a namespace has at most {MAX_DEPTH} labels, got {len(namespace)}")
    for label in namespace:
        if len(label) > MAX_LABEL_CHARS:
            raise ValueError(f"a namespace label has at most {MAX_LABEL_CHARS} characters")


def to_memory(  # noqa: PLR0913
    tenant: Tenant,
    namespace: tuple[str, ...],
    key: str,
    value: Mapping[str, Any],
    *,
    kind: MemoryKind,
    created_at: datetime,
    now: datetime,
    ttl_minutes: float | None,
    index: bool | list[str] | None = None,
) -> MemoryItem:
    """The memory item that keeps ``value`` at ``(namespace, key)`` for ``tenant``.

    ``index`` is the put's choice (``None``: the store's fields, ``False``:
    not indexed, a list: those field paths).
    """
    check_namespace(namespace)
    metadata: dict[str, str | float] = {
        NAMESPACE_KEY: json.dumps(namespace, ensure_ascii=False),
        ITEM_KEY: key,
        UPDATED_KEY: now.isoformat(),
    }
    if ttl_minutes is not None:
        metadata[TTL_KEY] = float(ttl_minutes)
    if index is not None and index is not True:
        metadata[INDEX_KEY] = json.dumps(list(index) if index else False)
    prefixes = [prefix_tag(namespace[:depth]) for depth in range(len(namespace) + 1)]
    return MemoryItem(
        item_id=item_id(namespace, key),
        agent_id=tenant.agent_id,
        user_id=tenant.user_id,
        kind=kind,
        content=json.dumps(dict(value), ensure_ascii=False),
        tags=tuple(prefixes),
        metadata=metadata,
        created_at=created_at,
        valid_until=None if ttl_minutes is None else now + timedelta(minutes=ttl_minutes),
    )


def is_langgraph_item(memory: MemoryItem) -> bool:
    """Whether ``memory`` was stored by a :class:`PrefrontalStore`."""
    return NAMESPACE_KEY in memory.metadata and ITEM_KEY in memory.metadata


def namespace_of(memory: MemoryItem) -> tuple[str, ...]:
    """The namespace ``memory`` was stored under."""
    return tuple(json.loads(str(memory.metadata[NAMESPACE_KEY])))


def namespace_in(memory: MemoryItem, decoded: dict[str, tuple[str, ...]]) -> tuple[str, ...]:
    """:func:`namespace_of`, decoding each distinct stored namespace once into ``decoded``."""
    stored = str(memory.metadata[NAMESPACE_KEY])
    namespace = decoded.get(stored)
    if namespace is None:
        namespace = decoded[stored] = tuple(json.loads(stored))
    return namespace


def value_of(memory: MemoryItem) -> dict[str, Any]:
    """The value ``memory`` keeps (what :func:`to_item` reads, without the rest)."""
    value: dict[str, Any] = json.loads(memory.content)
    return value


def ttl_of(memory: MemoryItem) -> float | None:
    """The TTL in minutes ``memory`` was stored with, or ``None``."""
    ttl = memory.metadata.get(TTL_KEY)
    return None if ttl is None else float(ttl)


def index_of(memory: MemoryItem) -> bool | list[str] | None:
    """The index fields ``memory``'s put chose (``None``: the store's, ``False``: none)."""
    chosen = memory.metadata.get(INDEX_KEY)
    if chosen is None:
        return None
    fields = json.loads(str(chosen))
    return [str(f) for f in fields] if fields else False


def updated_at(memory: MemoryItem) -> datetime:
    """When the value ``memory`` keeps was last put."""
    return datetime.fromisoformat(str(memory.metadata[UPDATED_KEY]))


def to_item(memory: MemoryItem) -> Item:
    """The LangGraph item ``memory`` keeps."""
    return Item(
        value=value_of(memory),
        key=str(memory.metadata[ITEM_KEY]),
        namespace=namespace_of(memory),
        created_at=memory.created_at,
        updated_at=updated_at(memory),
    )


def to_search_item(memory: MemoryItem, score: float | None) -> SearchItem:
    """The LangGraph search hit ``memory`` keeps, with its relevance ``score`` (or ``None``)."""
    return SearchItem(
        namespace=namespace_of(memory),
        key=str(memory.metadata[ITEM_KEY]),
        value=value_of(memory),
        created_at=memory.created_at,
        updated_at=updated_at(memory),
        score=score,
    )

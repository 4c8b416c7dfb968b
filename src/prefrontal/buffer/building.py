"""Pure constructors of held items: a new item, a refreshed one, a summary of several."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from datetime import datetime
from typing import Final

from prefrontal.buffer.models import (
    SUMMARY_PHASE,
    BufferItem,
    ItemProvenance,
    ItemSource,
    Lifetime,
)
from prefrontal.buffer.offers import Offer
from prefrontal.buffer.salience import AdmissionDecision
from prefrontal.trusted import assemble, changed, evolve

SUMMARY_ENTITIES = 20
"""A summary keeps at most this many of its items' entities."""


def admitted(
    item_id: str,
    new: Offer,
    tokens: int,
    decision: AdmissionDecision,
    at: datetime,
    seq: int,
    turn_id: str | None = None,
) -> BufferItem:
    """The held item for an admitted offer, touched once at ``at`` (by turn ``turn_id``).

    Assembled from values already checked (:mod:`prefrontal.trusted`): the offer's
    fields, a count of its tokens, a score that is never negative, the
    buffer's time and insertion number.
    """
    return assemble(
        BufferItem,
        {
            "item_id": item_id,
            "content": new.content,
            "source": new.source,
            "tokens": tokens,
            "priority": new.priority,
            "salience": decision.score,
            "factors": decision.factors,
            "confidence": new.confidence,
            "tags": new.tags,
            "entities": new.entities,
            "added_at": at,
            "last_accessed_at": at,
            "access_count": 1,
            "pinned": new.pinned,
            "lifetime": new.lifetime,
            "summary_of": (),
            "provenance": stamped(new.provenance, turn_id),
            "seq": seq,
            "consolidating_into": None,
        },
    )


def refreshed(
    held: BufferItem, new: Offer, tokens: int, at: datetime, turn_id: str | None = None
) -> BufferItem:
    """``held`` offered again (by turn ``turn_id``): the new content and priority, touched;
    pins and sessions stick.

    An item is pinned if either version is, and a session item (the agent's)
    stays one even when a turn's context brings it again. Made as one copy of
    ``held``'s fields changed in place (:func:`~prefrontal.trusted.changed`): a turn
    refreshes every fragment it shows again.
    """
    fields = held.__dict__.copy()
    fields["last_accessed_at"] = at
    fields["access_count"] += 1
    fields["content"] = new.content
    fields["tokens"] = tokens
    fields["priority"] = new.priority
    fields["confidence"] = new.confidence
    tags, entities = new.tags, new.entities
    if tags:
        fields["tags"] = tags
    if entities:
        fields["entities"] = entities
    if new.pinned:
        fields["pinned"] = True
    if new.lifetime is _SESSION:  # (else ``held``'s: a session item stays one)
        fields["lifetime"] = _SESSION
    fields["provenance"] = stamped(new.provenance, turn_id)
    return changed(held, fields, REFRESHED_FIELDS)


REFRESHED_FIELDS: Final = frozenset(
    (
        "last_accessed_at",
        "access_count",
        "content",
        "tokens",
        "priority",
        "confidence",
        "tags",
        "entities",
        "pinned",
        "lifetime",
        "provenance",
    )
)
"""The fields :func:`refreshed` gives a held item (its others stay ``held``'s)."""
_SESSION = Lifetime.SESSION


def stamped(provenance: ItemProvenance, turn_id: str | None) -> ItemProvenance:
    """``provenance`` with ``turn_id`` as its turn, when one is given and it has another."""
    if turn_id is None or provenance.turn_id == turn_id:
        return provenance
    return evolve(provenance, {"turn_id": turn_id})


def summary(
    folded: Sequence[BufferItem],
    text: str,
    tokens: int,
    at: datetime,
    seq: int,
    *,
    item_id: str | None = None,
) -> BufferItem:
    """One session item standing for ``folded``: their ids, sources and entities kept.

    A summary among ``folded`` contributes the ids it stood for, not its own.
    ``item_id`` keeps the id of the summary this one grows; a first summary's
    id hashes its insertion number with the folded ids.
    """
    ids = tuple(
        dict.fromkeys(
            i
            for f in folded
            for i in (f.summary_of if f.is_summary else (*f.summary_of, f.item_id))
        )
    )
    sources = tuple(dict.fromkeys(i for f in folded for i in f.provenance.item_ids))
    entities = tuple(dict.fromkeys(e for f in folded for e in f.entities))
    digest = hashlib.blake2b(f"{seq}\x1e{'|'.join(ids)}".encode(), digest_size=10).hexdigest()
    return BufferItem(
        item_id=item_id or f"wm_summary_{digest}",
        content=text,
        source=ItemSource.SYSTEM,
        tokens=tokens,
        priority=max(f.priority for f in folded),
        salience=max(f.salience for f in folded),
        confidence=min(f.confidence for f in folded),
        tags=("summary",),
        entities=entities[:SUMMARY_ENTITIES],
        added_at=next((f.added_at for f in folded if f.item_id == item_id), at),
        last_accessed_at=at,
        access_count=1,
        pinned=any(f.pinned for f in folded if f.item_id == item_id),
        lifetime=Lifetime.SESSION,
        summary_of=ids,
        provenance=ItemProvenance(
            item_ids=sources, phase=SUMMARY_PHASE, extra={"summarized_items": len(ids)}
        ),
        seq=seq,
    )

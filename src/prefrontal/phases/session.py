"""The session's working-memory buffer as the phases see it.

Phase 1 loads it (so that phases 5 and 6 know what it holds), phases 5 and 6
ask its recall gate whether to search, phase 10 refreshes it with the turn's
fragments and saves it. Fragments are adapted to buffer items here: the
buffer knows nothing of the bundle layer.
"""

from __future__ import annotations

import hashlib
from datetime import datetime
from typing import assert_never

from prefrontal.buffer import (
    Focus,
    ItemSource,
    Lifetime,
    NewItem,
    RefreshReport,
    SessionBuffer,
    SessionLink,
)
from prefrontal.buffer.models import MAX_ITEM_ID, BufferItem, ItemProvenance
from prefrontal.buffer.offers import Offer
from prefrontal.bundle.fence import as_data
from prefrontal.bundle.models import Fragment, Section
from prefrontal.forgetting import remembered
from prefrontal.formation.keeping import episodic_keeper
from prefrontal.phases.fragments import fragment
from prefrontal.phases.state import TurnState
from prefrontal.phases.store_calls import call_store
from prefrontal.trusted import assemble, evolve
from prefrontal.turn import WorkingMemoryItemView, WorkingMemoryView


def section_priority(section: Section) -> float:
    """The base priority of a fragment by section (memories use their rerank score instead).

    Exhaustive over :class:`Section`: a new section without a priority is a type error.
    """
    match section:
        case Section.CONSCIOUSNESS:
            return 1.0
        case Section.FRONTAL_CORTEX:
            return 0.8
        case Section.CONVERSATION:
            return 0.7
        case Section.SCRATCH_PAGE | Section.WORKING_MEMORY:
            return 0.6
        case Section.EPISODIC | Section.SEMANTIC:
            return 0.5
        case _:  # pragma: no cover - unreachable while every section has a case
            assert_never(section)


def section_urgency(section: Section) -> float:
    """What the pipeline knows of a fragment's urgency, by section.

    Pending work and alerts are time-bound, the dialogue in progress
    somewhat; identity is pinned and memories are judged on relevance.
    """
    match section:
        case Section.FRONTAL_CORTEX | Section.SCRATCH_PAGE:
            return 0.6
        case Section.CONVERSATION:
            return 0.3
        case Section.CONSCIOUSNESS | Section.EPISODIC | Section.SEMANTIC:
            return 0.0
        case Section.WORKING_MEMORY:
            return 0.0
        case _:  # pragma: no cover - unreachable while every section has a case
            assert_never(section)


MEMORY_SECTIONS = (Section.EPISODIC, Section.SEMANTIC)


async def load_session(turn: TurnState, phase: str) -> SessionBuffer:
    """The session's buffer, loaded through the store (transient errors retried)."""
    store, key = turn.stores.working_memory, turn.session_key
    return await call_store(
        turn,
        phase,
        lambda: SessionBuffer.load(
            store,
            key,
            config=turn.config.buffer,
            count_tokens=turn.counter.count,
            clock=turn.clock,
            max_attempts=turn.config.writes.save_attempts,
            keeper=episodic_keeper(turn.stores.episodic, key),
        ),
    )


NOTE_LABELS = {ItemSource.EXTERNAL: "(tool) ", ItemSource.USER_INPUT: "(user) "}
"""The label a working note's line starts with, by its source (the agent's own have none)."""


def note_text(note: BufferItem) -> str:
    """A working note's line: its label, then its content as data."""
    label = NOTE_LABELS.get(note.source, "")
    return label + as_data(note.content, opens_line=not label)


def note_fragments(turn: TurnState) -> list[Fragment]:
    """The agent's own items in the buffer as the working-notes section, most important first.

    Rendered in that order: by priority, highest first, then the most recently added first.

    These are the session items (tool results, reflections, notes, summaries
    of what was evicted); this turn's context fragments are not repeated.
    """
    if turn.buffer is None:
        return []
    notes = [i for i in turn.buffer.items if i.lifetime is Lifetime.SESSION]
    ranked = sorted(notes, key=lambda i: (-i.priority, -i.seq))
    return [
        fragment(
            turn,
            Section.WORKING_MEMORY,
            note_text(note),
            store="working_memory",
            item_ids=(note.item_id,),
            phase="turn_context",
            rank=rank,
            position=float(rank),
            score=note.priority,
            created_at=note.added_at,
        )
        for rank, note in enumerate(ranked)
    ]


def source_of(section: Section, role: str | None = None) -> ItemSource:
    """What kind of source a fragment of ``section`` (said by ``role``) is, for the buffer."""
    if section in MEMORY_SECTIONS:
        return ItemSource.MEMORY_RETRIEVAL
    if section is Section.CONVERSATION and role == "user":
        return ItemSource.USER_INPUT
    if section in (Section.SCRATCH_PAGE, Section.WORKING_MEMORY):
        return ItemSource.REFLECTION
    return ItemSource.SYSTEM


def offer(fragment: Fragment, turn_id: str | None = None) -> NewItem:
    """The buffer item offered for one fragment of a turn's context (see :func:`_offer`).

    Remembered by what it is made of only (a fragment's rank or times do not
    change its offer). A memory's rerank score moves with every recall
    counted: its offer is the one remembered without a score, made anew with
    this score (its clamp as priority and relevance, the score in its
    provenance), so that what is remembered is one offer a memory, not one a
    score. Its provenance, made anew for the score, names
    ``turn_id`` (when given) as well: the buffer stamps that turn on what it
    admits or refreshes, and finds it there already.
    """
    p = fragment.provenance
    section, score = fragment.section, p.score
    memory = section is Section.EPISODIC or section is Section.SEMANTIC  # MEMORY_SECTIONS
    made = _offer(
        section,
        fragment.text,
        fragment.tokens,
        fragment.role,
        p.store,
        p.item_ids,
        p.phase,
        None if memory else score,
    )
    if not memory:
        return made
    if score is None:
        return evolve(made, {})
    clamped = unit(score)
    changes = {"score": score} if turn_id is None else {"score": score, "turn_id": turn_id}
    provenance = evolve(made.provenance, changes)
    return evolve(made, {"priority": clamped, "relevance": clamped, "provenance": provenance})


def turn_offer(fragment: Fragment, turn_id: str | None = None) -> Offer:
    """What phase 10 offers the buffer for ``fragment``: the fields of :func:`offer`'s item,
    that item made only when the buffer needs the model itself (:class:`MemoryOffer`, for
    a memory with a score; :func:`offer`'s item for the others, remembered already)."""
    p = fragment.provenance
    section, score = fragment.section, p.score
    if score is None or not (section is Section.EPISODIC or section is Section.SEMANTIC):
        return offer(fragment, turn_id)
    base = _offer(
        section, fragment.text, fragment.tokens, fragment.role, p.store, p.item_ids, p.phase, None
    )
    return MemoryOffer(base, score, turn_id)


class MemoryOffer:
    """A memory's offer for one turn: :func:`offer`'s item for it, as fields, the item (and
    its provenance) made only when read.

    Most of a turn's memories are refused (the buffer is full of the turn's
    best) or renew an item already held; neither needs the offer as a model.
    Its fields are those of the offer remembered without a score (copied
    once: the buffer reads each several times), but its priority and
    relevance (the rerank score clamped) and its provenance (naming the
    score and the turn).
    """

    __slots__ = (
        "_base",
        "_made",
        "_provenance",
        "_score",
        "_turn_id",
        "confidence",
        "content",
        "entities",
        "item_id",
        "lifetime",
        "occurred_at",
        "pinned",
        "priority",
        "relevance",
        "source",
        "tags",
        "tokens",
        "urgency",
    )

    def __init__(self, base: NewItem, score: float, turn_id: str | None) -> None:
        fields = base.__dict__  # read once, as the buffer reads them: plain values
        self.item_id: str | None = fields["item_id"]
        self.content: str = fields["content"]
        self.source: ItemSource = fields["source"]
        self.tokens: int | None = fields["tokens"]
        self.urgency: float = fields["urgency"]
        self.confidence: float = fields["confidence"]
        self.tags: tuple[str, ...] = fields["tags"]
        self.entities: tuple[str, ...] = fields["entities"]
        self.occurred_at: datetime | None = fields["occurred_at"]
        self.pinned: bool = fields["pinned"]
        self.lifetime: Lifetime = fields["lifetime"]
        self.priority = self.relevance = unit(score)
        self._base, self._score, self._turn_id = base, score, turn_id
        self._provenance: ItemProvenance | None = None
        self._made: NewItem | None = None

    @property
    def provenance(self) -> ItemProvenance:
        """The fragment's sources, with its score and the turn (made once, when first read)."""
        if self._provenance is None:
            changes: dict[str, object] = {"score": self._score}
            if self._turn_id is not None:
                changes["turn_id"] = self._turn_id
            self._provenance = evolve(self._base.provenance, changes)
        return self._provenance

    def resolved_id(self) -> str:
        """The buffer id of the memory's fragment."""
        return self._base.resolved_id()

    def made(self) -> NewItem:
        """What :func:`offer` gives for the fragment (made once, when first asked for)."""
        if self._made is None:
            clamped = self.priority
            self._made = evolve(
                self._base,
                {"priority": clamped, "relevance": clamped, "provenance": self.provenance},
            )
        return self._made


@remembered(maxsize=4_096)
def _offer(
    section: Section,
    text: str,
    tokens: int,
    role: str | None,
    store: str,
    item_ids: tuple[str, ...],
    phase: str,
    score: float | None,
) -> NewItem:
    """The buffer item offered for a fragment of ``section`` with these text and sources.

    Its id is its section and source ids, so the same fragment next turn is
    the same item (:func:`fragment_item_id`). Identity and rules are pinned
    for the turn; memories take their rerank score, clamped to ``[0, 1]``,
    as priority and relevance; goals, alerts and the dialogue get the urgency
    of their section. The offer names no turn (the buffer's refresh stamps
    the turn on what it admits or refreshes), so it is made once per
    fragment and remembered: a session's turns mostly show the same
    fragments. Assembled, not validated again (:mod:`prefrontal.trusted`):
    every value comes from the validated fragment, a section's constants, or
    a score clamped here.
    """
    clamped = None if score is None else unit(score)
    memory = section in MEMORY_SECTIONS and clamped is not None
    provenance = assemble(
        ItemProvenance,
        {
            "store": store,
            "item_ids": item_ids,
            "phase": phase,
            "section": section.value,
            "score": score,
            "turn_id": None,
            "extra": {},
        },
    )
    return assemble(
        NewItem,
        {
            "content": text,
            "source": source_of(section, role),
            "item_id": fragment_item_id(section, item_ids),
            "tokens": tokens,
            "priority": clamped if memory and clamped is not None else section_priority(section),
            "urgency": section_urgency(section),
            "relevance": clamped if memory else None,
            "confidence": 1.0,
            "tags": (),
            "entities": (),
            "occurred_at": None,
            "pinned": section is Section.CONSCIOUSNESS,
            "lifetime": Lifetime.TURN,
            "provenance": provenance,
        },
    )


def unit(score: float) -> float:
    """``score`` clamped to ``[0, 1]``; a score that is not a number counts as 0."""
    return min(score, 1.0) if score >= 0.0 else 0.0


def fragment_item_id(section: Section, item_ids: tuple[str, ...]) -> str:
    """The buffer id of a fragment of ``section`` from ``item_ids``: readable, at most 256 chars.

    The section and the ids joined; when that would be longer than an item id
    may be, the section and a hash of the ids (a fragment standing for many
    items, such as a long summary's, is then held like any other).
    """
    readable = f"{section.value}:{'|'.join(item_ids)}"
    if len(readable) <= MAX_ITEM_ID:
        return readable
    digest = hashlib.blake2b("\x1f".join(item_ids).encode(), digest_size=16).hexdigest()
    return f"{section.value}:#{digest}"


def focus_of(turn: TurnState) -> Focus:
    """The turn's focus: the input, the request's focus tags, the top goal as the task."""
    task = turn.frontal_items[0].title if turn.frontal_items else ""
    return Focus(input_text=turn.request.user_input, tags=turn.request.focus, task=task)


def view(
    session: SessionBuffer, report: RefreshReport, links: tuple[SessionLink, ...] = ()
) -> WorkingMemoryView:
    """What the turn's result shows of the buffer after phase 10.

    Validated in one call, its items models already made: a session's
    turns mostly show the same items, and each is made once
    (:func:`item_view`).
    """
    counters = session.buffer.recall_counters
    return WorkingMemoryView.model_validate(
        {
            "items": [
                item_view(i.item_id, i.provenance.section, i.tokens, i.source, i.pinned, i.lifetime)
                for i in report.items
            ],
            "total_tokens": report.total_tokens,
            "max_items": session.buffer.config.max_items,
            "max_tokens": session.buffer.config.max_tokens,
            "themes": report.themes,
            "coherence": report.coherence.score,
            "refused": len(report.refused),
            "evicted": len(report.evicted),
            "searches_saved": counters.saved,
            "searches_run": counters.searches,
            "links": links,
        }
    )


@remembered(maxsize=4_096)
def item_view(
    item_id: str,
    section: str | None,
    tokens: int,
    source: ItemSource,
    pinned: bool,
    lifetime: Lifetime,
) -> WorkingMemoryItemView:
    """The view of one held item, its section its source's when it has none (cached: a
    frozen value, the same turn after turn)."""
    return WorkingMemoryItemView(
        item_id=item_id,
        section=section or source.value,
        tokens=tokens,
        source=source.value,
        pinned=pinned,
        lifetime=lifetime.value,
    )

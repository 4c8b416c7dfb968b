"""Stored records a turn reads, each body validated once while it is read again.

Every turn reads the same goals and plans (``frontal_items``), the same
open observations (``scratch_entries``), the agent's profile, the rolling
summary and the session's last turns, and each row came back as its JSON
body validated anew: some thirty validations a turn of records that did
not change. Each decoder here is a :class:`~prefrontal.text_cache.TextCache`
of one model, by the body's text: a body read again is the model decoded
the first time (the models are frozen, so every read shares it), a body
never seen or changed is validated, and one that does not validate raises
as before (nothing is kept of it). It holds values only, so a read gives
an equal record whether the body was held or not; the caches are in the
forgetting registry (a :class:`~prefrontal.text_cache.TextCache` registers
itself), so erasing a user or forgetting a memory empties them.

A session's working-memory state is larger (tens of kilobytes of JSON for a
long session) and written at every turn, twice: :data:`session_states`
holds the last few states saved or read, each with what was stored of it (its
JSON and its buffer document), so that the read that follows a save (the next
turn's, the turn's end) takes the state saved instead of parsing it again. It
holds each session's last parts as the stored UTF-8 bytes, as the store writes
and reads them
(:mod:`.working_memory`), found by the session's key and compared, never
hashed: a state quotes the user's words, often with a character beyond
Latin-1, and as text such a body would be decoded to two bytes a character,
hashed at that width and encoded back at every write.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

from pydantic import BaseModel

from prefrontal.forgetting import register
from prefrontal.recent import Recent
from prefrontal.stores.consciousness import AgentProfile
from prefrontal.stores.conversation import ConversationSummary, ConversationTurn
from prefrontal.stores.frontal_cortex import FrontalItem
from prefrontal.stores.scratch_page import Observation
from prefrontal.stores.working_memory import joined
from prefrontal.text_cache import TextCache

M = TypeVar("M", bound=BaseModel)

MAX_BYTES = 2_000_000
"""Bytes of entries each decoder holds: thousands of records of a kind a few hundred bytes long."""


def _weight(model: BaseModel) -> int:
    """About the bytes a decoded record keeps alive: its fields' values twice over (the
    strings and what they hold) and the model's own."""
    return 1_000 + 2 * sum(sys.getsizeof(value) for value in model.__dict__.values())


class Decoder(Generic[M]):
    """A stored body (text; bytes are read as UTF-8) as its ``model``, validated once while held."""

    def __init__(self, model: type[M]) -> None:
        self.cache: TextCache[M] = TextCache(
            model.model_validate_json, max_bytes=MAX_BYTES, weigh=_weight
        )

    def __call__(self, body: str | bytes) -> M:
        return self.cache(body if isinstance(body, str) else body.decode())


conversation_turn = Decoder(ConversationTurn)
"""A stored conversation turn's body as its :class:`ConversationTurn`."""
conversation_summary = Decoder(ConversationSummary)
"""A stored rolling summary's body as its :class:`ConversationSummary`."""
frontal_item = Decoder(FrontalItem)
"""A stored goal, plan or question's body as its :class:`FrontalItem`."""
observation = Decoder(Observation)
"""A stored scratch-page entry's body as its :class:`Observation`."""
agent_profile = Decoder(AgentProfile)
"""A stored agent profile's body as its :class:`AgentProfile`."""


Stored = tuple[bytes, bytes | None]
"""A session's state as stored: its JSON and its buffer document apart, each UTF-8, the
document ``None`` when the JSON holds it
(:func:`~prefrontal.stores.working_memory.stored_parts`)."""


class Documents(Generic[M]):
    """The stored parts (:data:`Stored`) last saved or read in each of the last ``size`` slots
    used (a session's key), with their record, the least recently used slot dropped first (a
    :class:`~prefrontal.recent.Recent`, in the forgetting registry); safe to share between
    threads.

    Parts are found by their slot and taken when they equal the ones held there (a comparison
    of bytes, exact), not hashed: a session's state is tens of kilobytes, read and saved twice
    a turn. Two databases holding the same slot share it, each reading its own parts.
    """

    def __init__(self, read: Callable[[bytes, bytes | None], M], size: int) -> None:
        self._read = read
        self._entries: Recent[Hashable, tuple[Stored, M]] = Recent(size)
        register(self._entries)

    def __len__(self) -> int:
        return len(self._entries)

    def held_bytes(self, slot: Hashable) -> int | None:
        """The bytes of the parts held in ``slot`` (``None`` when none are), the order of use
        left as it is."""
        held = self._entries.peek(slot)
        if held is None:
            return None
        body, document = held[0]
        return len(body) + (0 if document is None else len(document))

    def __call__(self, slot: Hashable, stored: Stored) -> M:
        """The record of ``stored``, read in ``slot``: the one held when ``stored`` is what is
        held there, else ``stored`` read (then held)."""
        held = self._entries.get(slot)
        if held is not None and held[0] == stored:
            return held[1]
        return self.remember(slot, stored, self._read(*stored))

    def remember(self, slot: Hashable, stored: Stored, record: M) -> M:
        """Hold ``record`` in ``slot`` as what ``stored`` (as a store wrote it) reads as."""
        self._entries.put(slot, (stored, record))
        return record

    def clear(self) -> None:
        """Drop every body and record (an erased user's words among them)."""
        self._entries.clear()


SESSION_STATES = 4
"""Sessions :data:`session_states` holds a state of: a few sessions' turns running at once. Each
state is many objects the garbage collector walks, so the cache stays small."""

session_states = Documents(joined, SESSION_STATES)
"""A stored working-memory state's body as its ``SessionState``."""

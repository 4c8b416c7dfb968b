"""Stored records of the small kinds a turn reads, each body validated once while it is read again.

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
"""

from __future__ import annotations

import sys
from typing import Generic, TypeVar

from pydantic import BaseModel

from prefrontal.stores.consciousness import AgentProfile
from prefrontal.stores.conversation import ConversationSummary, ConversationTurn
from prefrontal.stores.frontal_cortex import FrontalItem
from prefrontal.stores.scratch_page import Observation
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

"""Promote, then let go: what keeps a note when the buffer's policy lets it leave.

A bounded buffer must let items go: to make room (by its overflow policy),
when they fade, when they are folded into the rolling summary, when its
bounds shrink. Most items are copies (of long-term memory, of this turn's
context) and lose nothing by leaving. A note the agent took, a tool result,
a reflection, the rolling summary itself live only in the buffer
(:func:`~prefrontal.buffer.decay.awaits_promotion`): before one of those
leaves, the buffer hands it to its :class:`Keeper`, which writes it
durably to long-term memory and gives the id it is kept under. The item
then leaves as the policy says, and the event that announces it names
that id (``details["promoted_to"]``).

A keeper that cannot write (the long-term store is down) raises
:class:`PromotionError`; the buffer then keeps the items it could not
promote, and does what it can without them (another victim makes room, or
the newcomer is refused with a reason that says so; fading leaves them for
the next try). Nothing the agent noted leaves unkept.

A buffer without a keeper (a bare :class:`~prefrontal.buffer.WorkingMemoryBuffer`)
is a plain bounded buffer: it keeps nothing anywhere, so every item leaves
as its policy says. A session's buffer always has one
(:class:`NoLongTermMemory` when it was loaded without a long-term store:
it keeps its notes rather than drop them).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Protocol

from prefrontal.buffer.models import BufferItem
from prefrontal.errors import WorkingMemoryError


class PromotionError(WorkingMemoryError):
    """The items could not be written to long-term memory; they stay in the buffer."""


class Keeper(Protocol):
    """Writes buffer items durably to long-term memory before they leave the buffer."""

    async def __call__(self, items: Sequence[BufferItem], at: datetime) -> Mapping[str, str]:
        """Write ``items`` (leaving the buffer at ``at``); each one's long-term id, by item id.

        Returns only once every item is durably written, with its
        provenance; writing the same item again replaces it (the ids are
        derived from the item). Raises :class:`PromotionError` when they
        cannot be written: then none may be taken as kept.
        """
        ...


class NoLongTermMemory:
    """The keeper of a session loaded without a long-term store: it can keep nothing.

    Every promotion raises :class:`PromotionError`, so the notes stay in the
    buffer (newcomers that would need them to leave are refused, with a reason
    that says why) until the session is loaded with a keeper.
    """

    async def __call__(self, items: Sequence[BufferItem], at: datetime) -> Mapping[str, str]:
        """Raise: there is no long-term store to write ``items`` to."""
        raise PromotionError("this session's buffer was loaded without a long-term store")


def promotion_note(reason: str) -> str:
    """The reason part of a refusal or a log line when promotion failed."""
    return f"notes awaiting promotion could not be promoted ({reason})"

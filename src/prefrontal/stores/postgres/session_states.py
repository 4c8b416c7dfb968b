"""The session states this process last saved or read, each with the bytes it is stored as.

A session's working-memory state is tens of kilobytes (its buffer document
above all), saved at every turn and read again at the next turn's start and
at the exchange's bookkeeping: each read decoded the document's UTF-8 into a
string and validated the rest of the state anew, though it was the state this
process had just saved. :data:`SESSION_STATES` holds, for each of the last few
sessions used, the stored parts (:func:`~prefrontal.stores.working_memory.
stored_parts`: the state's JSON and its document, as the UTF-8 bytes the store
sends and reads) with their state; a read whose parts equal the held ones
(compared byte for byte, never hashed) takes the held state, any other is
decoded (then held). The parts hold every field of a state (its version and
times among them), so whatever wrote them, in this process or another, equal
parts are an equal state: a state saved elsewhere, erased and written again,
or rolled back is simply not equal and is decoded.

The map is a :class:`~prefrontal.recent.Recent` in the forgetting registry
(:mod:`prefrontal.forgetting`): erasing a user or forgetting a memory empties it.
A held state is shared by every read that takes it, as a decoded record of the
other caches is; nothing changes a loaded state in place.
"""

from __future__ import annotations

from collections.abc import Callable

from prefrontal.forgetting import register
from prefrontal.recent import Recent
from prefrontal.stores.working_memory import SessionKey, SessionState

Stored = tuple[bytes, bytes | None]
"""A state as stored: its JSON and its buffer document apart, each UTF-8 (the document
``None`` when the JSON holds it)."""

SIZE = 8
"""Sessions a state is held of: the few sessions whose turns run at once in a process. Each
state is many objects the garbage collector walks, so the map stays small."""


class SessionStates:
    """The parts last saved or read of each of the last ``size`` sessions used, with their
    state (least recently used dropped first); safe to share between threads."""

    def __init__(self, size: int) -> None:
        self._entries: Recent[tuple[str, str, str], tuple[Stored, SessionState]] = Recent(size)
        register(self._entries)

    def __len__(self) -> int:
        return len(self._entries)

    def read(
        self, key: SessionKey, stored: Stored, decode: Callable[[Stored], SessionState]
    ) -> SessionState:
        """The state stored as ``stored`` for ``key``: the one held when ``stored`` equals the
        parts held for ``key``, else ``decode(stored)`` (then held)."""
        slot = (key.agent_id, key.user_id, key.session_id)
        held = self._entries.get(slot)
        if held is not None and held[0] == stored:
            return held[1]
        state = decode(stored)
        self._entries.put(slot, (stored, state))
        return state

    def remember(self, stored: Stored, state: SessionState) -> SessionState:
        """Hold ``state`` as what ``stored`` (its parts, as the store wrote them) reads as."""
        key = state.key
        self._entries.put((key.agent_id, key.user_id, key.session_id), (stored, state))
        return state

    def clear(self) -> None:
        """Drop every state (an erased user's words among them)."""
        self._entries.clear()


SESSION_STATES = SessionStates(SIZE)
"""The process's held states of the PostgreSQL working-memory store."""

"""The working-memory store: one buffer state per session, saved between turns.

The buffer layer serialises its state to JSON; this store keeps it with a
version for optimistic concurrency (two workers never lose an update) and the
session's themes and entities, so that related sessions can be found.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any, Final, Protocol, runtime_checkable

from pydantic import Field
from pydantic_core import PydanticSerializationError

from prefrontal.errors import ItemRejectedError
from prefrontal.stores.records import NonEmptyId, Record, Timestamp, utc_now
from prefrontal.stores.tenancy import Tenant


class SessionKey(Record):
    """Which session a buffer belongs to."""

    agent_id: NonEmptyId
    user_id: NonEmptyId
    session_id: NonEmptyId

    @property
    def tenant(self) -> Tenant:
        """The ``(agent, user)`` that owns the session."""
        return Tenant(agent_id=self.agent_id, user_id=self.user_id)


class SessionState(Record):
    """A saved working-memory buffer.

    ``version`` is 0 for a state never saved; the store assigns the next one.
    """

    key: SessionKey
    version: int = Field(default=0, ge=0)
    state: dict[str, Any] = Field(default_factory=dict)
    themes: tuple[str, ...] = ()
    entities: tuple[str, ...] = ()
    started_at: Timestamp = Field(default_factory=utc_now)
    updated_at: Timestamp = Field(default_factory=utc_now)


DOCUMENT: Final = "buffer"
"""The key of a state's buffer document in ``SessionState.state`` (the buffer's
:data:`~prefrontal.buffer.state_document.STATE_FIELD`): JSON of tens of kilobytes, as its
UTF-8 bytes (as the buffer writes it; a string is taken too), that a database keeps beside
the rest of the state (:func:`stored_parts`), not escaped inside it, and gives back as
bytes (:func:`joined`)."""
_WITHOUT_DOCUMENT: Final = {"state": {DOCUMENT}}
_SERIALIZER = SessionState.__pydantic_serializer__


def stored_parts(state: SessionState, *, store: str) -> tuple[bytes, bytes | None]:
    """``state`` as a database stores it: its JSON (UTF-8) without the buffer document, and the
    document's UTF-8 when ``state.state[DOCUMENT]`` is bytes (the very object, taken to be
    UTF-8, as the buffer writes it) or a string, without a NUL character (else the whole state
    is the JSON, and ``None``). :func:`joined` puts the parts back together into an equal
    state (its document as bytes).

    The document, itself JSON, is never written as a JSON string inside the state's JSON: it
    is neither escaped at a save nor unescaped at a load. Text that is not valid UTF-8 is an
    :class:`~prefrontal.errors.ItemRejectedError` (of ``store``).
    """
    document = state.state.get(DOCUMENT)
    try:
        if isinstance(document, bytes | str):
            data = document if isinstance(document, bytes) else document.encode()
            if b"\x00" not in data:  # a text column holds no NUL (JSON escapes it in the body)
                return _SERIALIZER.to_json(state, exclude=_WITHOUT_DOCUMENT), data
        return _SERIALIZER.to_json(state), None
    except (PydanticSerializationError, UnicodeEncodeError) as error:
        raise ItemRejectedError(f"cannot store SessionState: {error}", store=store) from error


def joined(body: str | bytes, document: str | bytes | None) -> SessionState:
    """The state stored as ``body`` (its JSON) and ``document`` (the buffer document of
    :func:`stored_parts`, kept as its UTF-8 bytes, never decoded; or ``None`` when the body
    holds the whole state: every state a database wrote before it kept the document apart,
    too)."""
    state = SessionState.model_validate_json(body)
    if document is not None:
        # the dict was made by this validation: nobody else holds it yet
        state.state[DOCUMENT] = document if isinstance(document, bytes) else document.encode()
    return state


@runtime_checkable
class WorkingMemoryStore(Protocol):
    """Keeps one :class:`SessionState` per session.

    Contract:

    - ``load`` returns the last saved state of exactly that key, or ``None``;
    - ``save`` succeeds only when ``state.version`` equals the stored version
      (0 when nothing is stored) and returns the state with ``version + 1``;
      otherwise it raises :class:`~prefrontal.errors.ConflictError` and
      changes nothing. ``updated_at`` is kept as the caller gives it: the
      moment of the change by the caller's clock (a turn's injected one
      included), which ``recent_sessions`` is asked about with the same clock;
    - ``recent_sessions`` returns the tenant's sessions updated at or after
      ``since``, newest first, never another user's or agent's;
    - ``sessions`` returns the keys of the agent's sessions (of one user when
      ``user_id`` is given) whose saved JSON contains one of the texts
      ``containing`` (every session when it is empty): a superset that the
      caller narrows by loading each;
    - ``erase`` removes every session of the tenant and returns how many.
    """

    async def load(self, key: SessionKey) -> SessionState | None:
        """The saved state of ``key``, if any."""
        ...

    async def save(self, state: SessionState) -> SessionState:
        """Save ``state`` if nobody saved since it was loaded; return it with its new version."""
        ...

    async def recent_sessions(
        self, tenant: Tenant, *, since: datetime, limit: int
    ) -> list[SessionState]:
        """The tenant's sessions updated since ``since``, newest first."""
        ...

    async def sessions(
        self, agent_id: str, *, user_id: str | None = None, containing: Sequence[str] = ()
    ) -> list[SessionKey]:
        """The agent's (or one user's) sessions whose saved JSON holds one of ``containing``."""
        ...

    async def erase(self, tenant: Tenant) -> int:
        """Remove every session of ``tenant``; how many were removed."""
        ...

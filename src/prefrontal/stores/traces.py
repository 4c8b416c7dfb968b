"""The trace store: every sealed :class:`~prefrontal.traces.models.TurnTrace`."""

from __future__ import annotations

import re
from datetime import datetime
from typing import Protocol, runtime_checkable

from pydantic import Field

from prefrontal.stores.records import Record
from prefrontal.stores.tenancy import Tenant
from prefrontal.traces.models import TurnStatus, TurnTrace

OPEN_SUFFIX = ',"ending":null}'
"""How a stored trace body of a turn not ended yet ends.

``ending`` is the last field of :class:`TurnTrace`, so its JSON ends with
this text exactly when the turn has no ending: a backend checks that a turn
ended from the body's last characters, without parsing the body (see
:func:`ended_body`).
"""


def ended_body(body: str) -> bool:
    """True when the stored trace body ``body`` has an ending.

    A body ending with :data:`OPEN_SUFFIX` has none; any other (one with an
    ending, or one written in another field order) is parsed to be sure.
    """
    if body.endswith(OPEN_SUFFIX):
        return False
    return TurnTrace.model_validate_json(body).ending is not None


class TraceQuery(Record):
    """Filters for listing traces; ``None`` means no filter. Newest first.

    ``turn_id`` finds one turn without knowing its tenant (the operator's
    look-up); ``parent_turn_id`` lists the turns that followed a turn.
    ``older_than`` pages by keyset: only the traces listed after the trace
    at ``(started_at, turn_id)`` in this order (strictly older, or as old
    with a smaller turn id), so the next page is found with an index seek,
    never an offset; ``newer_than`` is its mirror, and ``oldest_first``
    reverses the order (to find the turns that came next).
    ``text`` keeps the turns whose user's message or reply holds every word
    of it (:func:`search_words`; case and, on SQLite, accents folded), found
    with the database's own full-text index; text with no word finds none.
    """

    turn_id: str | None = None
    parent_turn_id: str | None = None
    agent_id: str | None = None
    user_id: str | None = None
    user_ids: tuple[str, ...] | None = None
    """Only these users' traces (a viewer whose key acts for some users only)."""
    session_id: str | None = None
    status: TurnStatus | None = None
    since: datetime | None = None
    until: datetime | None = None
    older_than: tuple[datetime, str] | None = None
    newer_than: tuple[datetime, str] | None = None
    oldest_first: bool = False
    text: str | None = None
    limit: int = Field(default=50, ge=1, le=10_000)


_WORD = re.compile(r"[^\W_]+")
MAX_WORDS = 16
"""Words of a search kept (the first ones); a longer text is cut to these."""


def text_words(text: str) -> tuple[str, ...]:
    """The words of ``text``: runs of letters and digits, case folded.

    Punctuation, underscores and spaces only separate words, as in SQLite's
    ``unicode61`` tokenizer.
    """
    return tuple(word.casefold() for word in _WORD.findall(text))


def search_words(text: str) -> tuple[str, ...]:
    """The words a trace search looks for in ``text`` (:func:`text_words`, the first 16).

    They are data, never query syntax: each backend quotes or binds them.
    """
    return text_words(text)[:MAX_WORDS]


def searched_text(trace: TurnTrace) -> str:
    """The text of ``trace`` a search reads: the user's message and the reply."""
    reply = trace.ending.reply if trace.ending is not None else ""
    return f"{trace.user_input or ''} {reply}"


@runtime_checkable
class TraceStore(Protocol):
    """Keeps turn traces.

    Contract: ``get`` returns the trace of ``turn_id`` only when it belongs to
    ``tenant`` (traces are private to their user); ``list`` is the operator's
    view and filters by the fields of ``query``, newest ``started_at`` first
    (then the greater ``turn_id``; the reverse with ``oldest_first``).
    Turn ids are generated (ULIDs), so a trace is replaced only by its own
    turn's. ``erase`` removes every trace of the tenant and returns how many.
    ``prune`` is retention: it removes every trace that started before
    ``before``, then all but the newest ``keep`` (newest by ``started_at``,
    then ``turn_id``, as ``list`` orders them), and says how many it removed.
    """

    async def put(self, trace: TurnTrace) -> None:
        """Save a trace (replacing one with the same ``turn_id``)."""
        ...

    async def get(self, tenant: Tenant, turn_id: str) -> TurnTrace | None:
        """The tenant's trace of ``turn_id``, if any."""
        ...

    async def list(self, query: TraceQuery) -> list[TurnTrace]:
        """Traces that match ``query``, newest first."""
        ...

    async def erase(self, tenant: Tenant) -> int:
        """Remove every trace of ``tenant``; how many were removed."""
        ...

    async def prune(self, *, before: datetime | None = None, keep: int | None = None) -> int:
        """Remove traces older than ``before`` and beyond the newest ``keep``; the count removed."""
        ...

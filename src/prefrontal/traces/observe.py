"""Observers: live views of turns as they run (logs, spans, metrics).

The orchestrator always has one observer and calls it without asking
whether anyone listens: by default a :class:`NullObserver` that does
nothing, so instrumented code never branches. Hooks are synchronous and
must be cheap; they receive data the turn has already recorded (phase
records and the sealed trace), never live state.

``combine`` turns any number of observers into one. The combination calls
each in order and isolates failures: an observer that raises is logged and
skipped, so a broken exporter never breaks a turn.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import TYPE_CHECKING, Protocol, runtime_checkable

import structlog

from prefrontal.traces.models import PhaseRecord, TurnTrace

if TYPE_CHECKING:
    from prefrontal.bundle.models import ContextBundle

_log = structlog.get_logger("prefrontal.observers")


class TurnIdentity(Protocol):
    """Who and when a turn is for (``prefrontal.TurnContext`` is one)."""

    @property
    def turn_id(self) -> str: ...

    @property
    def parent_turn_id(self) -> str | None: ...

    @property
    def agent_id(self) -> str: ...

    @property
    def user_id(self) -> str: ...

    @property
    def session_id(self) -> str: ...

    @property
    def started_at(self) -> datetime: ...


@runtime_checkable
class Observer(Protocol):
    """Receives every turn's life: started, each phase ended, ended.

    Contract: every hook returns quickly and does no I/O on the caller's
    path (buffer or hand off instead). ``turn_started`` comes first,
    ``phase_ended`` once per phase in the order phases end (concurrent
    phases interleave), then exactly one of ``turn_ended`` (with the sealed
    trace and the bundle) or ``turn_cancelled`` (the caller cancelled the
    turn, or it raised). Hooks of concurrent turns interleave: key any
    per-turn state by ``turn_id``.
    """

    def turn_started(self, turn: TurnIdentity, user_input: str) -> None:
        """A turn began (phase 1 has not run yet)."""
        ...

    def phase_ended(self, turn: TurnIdentity, record: PhaseRecord) -> None:
        """A phase ended, however it ended; ``record`` says how."""
        ...

    def turn_ended(self, trace: TurnTrace, bundle: ContextBundle) -> None:
        """The turn is over and its trace sealed."""
        ...

    def turn_cancelled(self, turn: TurnIdentity) -> None:
        """The turn was cancelled or raised before it could seal its trace."""
        ...


class NullObserver:
    """Observes nothing: the default."""

    def turn_started(self, turn: TurnIdentity, user_input: str) -> None:
        """Does nothing."""

    def phase_ended(self, turn: TurnIdentity, record: PhaseRecord) -> None:
        """Does nothing."""

    def turn_ended(self, trace: TurnTrace, bundle: ContextBundle) -> None:
        """Does nothing."""

    def turn_cancelled(self, turn: TurnIdentity) -> None:
        """Does nothing."""


class CompositeObserver:
    """Calls each of ``observers`` in order; one that raises is logged and skipped."""

    def __init__(self, observers: Iterable[Observer]) -> None:
        self.observers: tuple[Observer, ...] = tuple(observers)

    def turn_started(self, turn: TurnIdentity, user_input: str) -> None:
        self._each("turn_started", turn, user_input)

    def phase_ended(self, turn: TurnIdentity, record: PhaseRecord) -> None:
        self._each("phase_ended", turn, record)

    def turn_ended(self, trace: TurnTrace, bundle: ContextBundle) -> None:
        self._each("turn_ended", trace, bundle)

    def turn_cancelled(self, turn: TurnIdentity) -> None:
        self._each("turn_cancelled", turn)

    def _each(self, hook: str, *args: object) -> None:
        for observer in self.observers:
            try:
                getattr(observer, hook)(*args)
            except Exception as error:
                name = type(observer).__name__
                _log.warning("observer_failed", observer=name, hook=hook, error=repr(error))


def combine(observers: Iterable[Observer] = ()) -> Observer:
    """One observer for many: a :class:`NullObserver` for none, else a composite.

    A single observer is wrapped too, so that its failures are isolated.
    """
    chosen = tuple(observers)
    return CompositeObserver(chosen) if chosen else NullObserver()

"""``RecordingObserver``: an observer that keeps what it saw, for tests."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from prefrontal.traces.models import PhaseRecord, TurnTrace
from prefrontal.traces.observe import TurnIdentity

if TYPE_CHECKING:
    from prefrontal.bundle.models import ContextBundle


@dataclass
class RecordingObserver:
    """Keeps every hook call in ``events`` as ``(hook, turn_id, payload)``."""

    events: list[tuple[str, str, object]] = field(default_factory=list)

    def turn_started(self, turn: TurnIdentity, user_input: str) -> None:
        self.events.append(("turn_started", turn.turn_id, user_input))

    def phase_ended(self, turn: TurnIdentity, record: PhaseRecord) -> None:
        self.events.append(("phase_ended", turn.turn_id, record))

    def turn_ended(self, trace: TurnTrace, bundle: ContextBundle) -> None:
        self.events.append(("turn_ended", trace.turn_id, trace))

    def turn_cancelled(self, turn: TurnIdentity) -> None:
        self.events.append(("turn_cancelled", turn.turn_id, None))

    def hooks(self) -> list[str]:
        """The names of the hooks called, in order."""
        return [hook for hook, _, _ in self.events]

    def phases(self) -> list[PhaseRecord]:
        """The phase records seen, in the order the phases ended."""
        return [p for hook, _, p in self.events if isinstance(p, PhaseRecord)]

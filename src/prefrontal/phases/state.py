"""``TurnState``: the blackboard the phases of one turn read and write.

Each phase writes only its own fields, so phases that run concurrently never
write the same thing. The runner owns ``records``.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from functools import cached_property
from typing import Any

from prefrontal.budgets.policy import Allocation, BudgetPolicy
from prefrontal.budgets.tokens import TokenCounter
from prefrontal.buffer import SessionBuffer
from prefrontal.bundle.models import ContextBundle, Fragment, Section
from prefrontal.bundle.pinning import Pin
from prefrontal.bundle.readiness import NO_PROFILE, not_ready
from prefrontal.config import OrchestratorConfig, PhaseName
from prefrontal.phases.ahead import Ahead, Spawn
from prefrontal.stores.consciousness import AgentProfile
from prefrontal.stores.conversation import ConversationTurn
from prefrontal.stores.frontal_cortex import FrontalItem
from prefrontal.stores.set import Stores
from prefrontal.stores.tenancy import Tenant
from prefrontal.stores.working_memory import SessionKey, SessionState
from prefrontal.traces.models import (
    DroppedRecord,
    PhaseRecord,
    PhaseStatus,
    SectionUsage,
    SentMessage,
    TurnStatus,
    TurnTrace,
)
from prefrontal.traces.observe import NullObserver, Observer
from prefrontal.traces.seal import sealing
from prefrontal.turn import (
    TurnContext,
    TurnRequest,
    WorkingMemoryView,
)

Clock = Callable[[], datetime]


@dataclass(frozen=True, slots=True)
class PhaseOutcome:
    """What a phase reports about its own work (the runner adds timing and status)."""

    items_loaded: int = 0
    tokens_loaded: int = 0
    items_dropped: int = 0
    tokens_dropped: int = 0
    degraded: bool = False
    warnings: tuple[str, ...] = ()
    detail: dict[str, object] = field(default_factory=dict)


@dataclass
class TurnState:
    """Everything one turn knows, phase by phase."""

    request: TurnRequest
    context: TurnContext
    config: OrchestratorConfig
    policy: BudgetPolicy
    stores: Stores
    counter: TokenCounter
    clock: Clock
    version: str
    budgets_ms: Mapping[PhaseName, float]
    """Each phase's time budget: its own, or the configured one."""
    indices: Mapping[PhaseName, int]
    """Each phase's number, from its place in the tuple of phases."""
    observer: Observer = field(default_factory=NullObserver)
    monotonic_start: float = field(default_factory=time.monotonic)
    # phase 1
    session: SessionState | None = None
    buffer: SessionBuffer | None = None
    linking: Ahead[list[SessionState]] | None = None
    """A new session's read of the user's recent sessions, started ahead for phase 10's links."""
    loading: dict[PhaseName, Ahead[Any]] = field(default_factory=dict)
    """The store reads of phases 2, 3 and 4, started ahead by phase 1 (none in sequential mode)."""
    # phases 2-7
    profile: AgentProfile | None = None
    frontal_items: list[FrontalItem] = field(default_factory=list)
    recent_turns: list[ConversationTurn] = field(default_factory=list)
    loads: dict[Section, list[Fragment]] = field(default_factory=dict)
    # phases 8-11
    pin: Pin | None = None
    """The owner's pinned section and whether the budget holds it (phase 8)."""
    demands: dict[str, int] = field(default_factory=dict)
    allocation: Allocation = field(default_factory=dict)
    sections: list[SectionUsage] = field(default_factory=list)
    bundle: ContextBundle | None = None
    dropped: list[DroppedRecord] = field(default_factory=list)
    working_memory: WorkingMemoryView | None = None
    saving: SessionBuffer | None = None
    """The refreshed buffer phase 10 leaves for the writes behind the turn to save."""
    trace: TurnTrace | None = None
    # the runner's
    records: dict[str, PhaseRecord] = field(default_factory=dict)
    started_ms: dict[str, float] = field(default_factory=dict)
    attempts: dict[str, int] = field(default_factory=dict)
    foreign: dict[str, int] = field(default_factory=dict)
    """Per phase: what its stores returned that the turn's tenant may not see (dropped)."""
    spawn: Spawn | None = None
    """Starts a read beside the loading phases while they run in graph mode (see :mod:`.ahead`)."""
    overlap: bool = True
    """Whether store calls made at once can overlap. ``False`` when no call of the turn can wait
    (:meth:`~prefrontal.stores.set.Stores.never_wait`): a phase then makes the calls it would
    make at once one after another, without tasks."""

    @cached_property
    def tenant(self) -> Tenant:
        """The ``(agent, user)`` every store call of this turn is made for (built once)."""
        return Tenant(agent_id=self.context.agent_id, user_id=self.context.user_id)

    @cached_property
    def session_key(self) -> SessionKey:
        """The session whose working-memory buffer this turn refreshes (built once)."""
        c = self.context
        return SessionKey(agent_id=c.agent_id, user_id=c.user_id, session_id=c.session_id)

    def elapsed_ms(self) -> float:
        """Milliseconds since the turn started (monotonic clock)."""
        return (time.monotonic() - self.monotonic_start) * 1_000

    def seconds_left(self) -> float:
        """Seconds until the turn's deadline (never negative)."""
        return max(self.context.deadline_ms - self.elapsed_ms(), 0.0) / 1_000

    def count(self, text: str) -> int:
        """Tokens in ``text`` with the turn's tokenizer."""
        return self.counter.count(text)

    def has_rules(self) -> bool:
        """Whether the agent's profile holds rules (safety, access control, escalation)."""
        if self.profile is None:
            return False
        g = self.profile.governance
        return bool(g.safety_policies or g.access_control or g.escalation)

    def seal_trace(self, records: Iterable[PhaseRecord]) -> TurnTrace:
        """The turn's trace sealed with ``records``; whether its context is ready for the router.

        Not ready, with a warning that says why, when the identity or the
        rules are not in the context, the budget is below the owner's floor
        (no data was delivered), or it is empty because stores failed
        (:func:`~prefrontal.bundle.readiness.not_ready`). Built once, with
        every field final.
        """
        records = list(records)
        sealed = sealing(records)
        stores_failed = sealed.status is TurnStatus.DEGRADED
        unready = not_ready(
            self.bundle,
            has_rules=self.has_rules(),
            stores_failed=stores_failed,
            identity_cause=self._identity_cause(records),
            below_floor=self.pin.shortfall() if self.pin else None,
        )
        notes = tuple(f"finalize: not ready for the router: {reason}" for reason in unready)
        return self._trace(
            status=sealed.status,
            ready_for_router=not unready,
            phases=sealed.phases,
            warnings=sealed.warnings + notes,
            errors=sealed.errors,
        )

    def _identity_cause(self, records: list[PhaseRecord]) -> str | None:
        """Why no profile was loaded (the store failed or was slow, or holds none), or ``None``."""
        if self.profile is not None:
            return None
        phase = next((r for r in records if r.name == "consciousness"), None)
        if phase is None:
            return None
        if phase.errors:
            return f"the consciousness store failed ({phase.errors[0].message})"
        if phase.status in (PhaseStatus.TIMEOUT, PhaseStatus.FAILED, PhaseStatus.CANCELLED):
            return f"the consciousness store did not answer ({phase.status.value})"
        return NO_PROFILE

    def _trace(self, **sealed: Any) -> TurnTrace:
        """The turn's trace with who, when and what it spent, and the ``sealed`` fields given."""
        c, bundle = self.context, self.bundle
        record = self.config.record_context
        return TurnTrace(
            turn_id=c.turn_id,
            parent_turn_id=c.parent_turn_id,
            agent_id=c.agent_id,
            user_id=c.user_id,
            session_id=c.session_id,
            started_at=c.started_at,
            duration_ms=round(self.elapsed_ms(), 3),
            deadline_ms=c.deadline_ms,
            total_budget=self.policy.total,
            total_tokens=bundle.total_tokens if bundle else 0,
            checksum=bundle.checksum if bundle else "",
            sections=tuple(self.sections),
            dropped=tuple(self.dropped) if record else tuple(_textless(self.dropped)),
            version=self.version,
            user_input=self.request.user_input,
            sent=tuple(SentMessage(**m) for m in bundle.to_messages(self.request.user_input))
            if bundle and record
            else (),
            **sealed,
        )


def _textless(dropped: list[DroppedRecord]) -> list[DroppedRecord]:
    """``dropped`` without the fragments' text (the context is not recorded)."""
    return [d.model_copy(update={"text": ""}) for d in dropped]

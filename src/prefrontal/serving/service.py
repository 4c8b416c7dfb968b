"""What both servers do, once: the operations over one orchestrator, for an authorised tenant.

The HTTP API and the MCP tools are thin transports over :class:`Service`:
they authenticate the caller, decide the tenant, and call one method here.
Every method is scoped to a :class:`~prefrontal.stores.tenancy.Tenant`; an id
that names nothing of that tenant (a turn, a memory) raises
:class:`~prefrontal.errors.NotFoundError` whether it exists for someone else
or not at all, so that a caller learns nothing about other tenants' data.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import UTC, datetime

import anyio

from prefrontal.budgets.tokens import default_counter
from prefrontal.errors import NotFoundError
from prefrontal.exchange import ToolCall
from prefrontal.orchestrator import Orchestrator
from prefrontal.serving.determinism import (
    TEST_CLOCK_ENV,
    TEST_DELAY_ENV,
    CountingIds,
    SteppedClock,
    parse_instant,
)
from prefrontal.serving.echo import quoted
from prefrontal.serving.models import (
    EndTurnOut,
    ErasureOut,
    ForgetOut,
    MemoryOut,
    PhaseOut,
    RecallOut,
    RememberBody,
    ToolCallBody,
    TraceOut,
    TurnOut,
)
from prefrontal.serving.readiness import Readiness, StoresUnavailableError
from prefrontal.serving.recall import session_recall
from prefrontal.stores.set import Stores
from prefrontal.stores.tenancy import Scope, Tenant
from prefrontal.traces.observe import Observer
from prefrontal.turn import OrchestratorConfig, TurnRequest

READINESS_TIMEOUT_S = 2.0
READINESS_TENANT = Tenant(agent_id="prefrontal-readiness", user_id="prefrontal-readiness")


def _utc_now() -> datetime:
    return datetime.now(UTC)


class Service:
    """The operations of both servers over ``orchestrator``.

    ``before_call`` runs at the start of every operation: the test clock
    steps forward there (see :mod:`prefrontal.serving.determinism`).
    """

    def __init__(
        self,
        orchestrator: Orchestrator,
        *,
        clock: Callable[[], datetime],
        before_call: Callable[[], object] | None = None,
        turn_delay_s: float = 0.0,
    ) -> None:
        self.orchestrator = orchestrator
        self._turn_delay_s = turn_delay_s
        self._clock = clock
        self._before_call = before_call
        self._counter = default_counter(orchestrator.config.tokenizer)
        self.readiness = Readiness(self._answer_readiness)
        """The last readiness check; turns are refused while it failed (:mod:`.readiness`)."""

    @classmethod
    def build(
        cls,
        stores: Stores,
        config: OrchestratorConfig | None = None,
        *,
        observers: Iterable[Observer] = (),
        environ: Mapping[str, str] | None = None,
    ) -> Service:
        """A service over ``stores``: the wall clock, or the test clock that ``environ`` sets."""
        env = environ or {}
        delay = float(env.get(TEST_DELAY_ENV) or 0) / 1_000
        start = env.get(TEST_CLOCK_ENV)
        if not start:
            orchestrator = Orchestrator(stores, config, clock=_utc_now, observers=observers)
            return cls(orchestrator, clock=_utc_now, turn_delay_s=delay)
        clock = SteppedClock(parse_instant(start))
        orchestrator = Orchestrator(
            stores, config, clock=clock, ids=CountingIds(), observers=observers
        )
        return cls(orchestrator, clock=clock, before_call=clock.advance, turn_delay_s=delay)

    @property
    def stores(self) -> Stores:
        """The stores the service runs on."""
        return self.orchestrator.stores

    def _begin(self) -> None:
        if self._before_call is not None:
            self._before_call()

    # ------------------------------------------------------------- turns

    async def start_turn(self, request: TurnRequest) -> TurnOut:
        """Run a turn for ``request`` (whose tenant the caller has checked).

        Answers once the turn's writes (trace, buffer) have ended, so that any
        server process over the same stores finds the turn; the turn's status
        never depends on them (:mod:`prefrontal.orchestrator.writes`).
        """
        await self.readiness.gate()
        self._begin()
        if self._turn_delay_s:
            await anyio.sleep(self._turn_delay_s)
        result = await self.orchestrator.start_turn(request)
        await self.orchestrator.wait_written(result.context.turn_id)
        return TurnOut.of(result)

    async def end_turn(
        self,
        tenant: Tenant,
        turn_id: str,
        reply: str,
        *,
        tool_calls: Sequence[ToolCallBody] = (),
        outcome: str | None = None,
    ) -> EndTurnOut:
        """Record the reply of ``tenant``'s turn ``turn_id`` (NotFoundError when it has none)."""
        await self.readiness.gate()
        self._begin()
        ended = await self.orchestrator.end_turn(
            turn_id,
            reply,
            agent_id=tenant.agent_id,
            user_id=tenant.user_id,
            tool_calls=[ToolCall.model_validate(call.model_dump()) for call in tool_calls],
            outcome=outcome,
        )
        return EndTurnOut(
            turn_id=ended.turn_id,
            written=ended.written,
            message_ids=tuple(ended.message_ids),
            memory_ids=tuple(ended.memory_ids),
            phases=tuple(PhaseOut.of(p) for p in ended.trace.steps),
        )

    async def trace(self, tenant: Tenant, turn_id: str) -> TraceOut:
        """The trace of ``tenant``'s turn ``turn_id``."""
        self._begin()
        await self.orchestrator.wait_written(turn_id)
        trace = await self.stores.traces.get(tenant, turn_id)
        if trace is None or (trace.agent_id, trace.user_id) != (tenant.agent_id, tenant.user_id):
            raise NotFoundError(f"no turn {quoted(turn_id)} for this user")
        return TraceOut.of(trace)

    # ---------------------------------------------------------- memories

    async def recall(
        self, tenant: Tenant, query: str, *, top_k: int = 10, session_id: str | None = None
    ) -> RecallOut:
        """Memories for ``query``, always searched; with a session, the hits join its buffer."""
        self._begin()
        if session_id is not None:
            return await session_recall(
                self.orchestrator,
                tenant,
                session_id,
                query,
                top_k=top_k,
                clock=self._clock,
                counter=self._counter,
            )
        hits = await self.orchestrator.memory.recall(tenant, query, top_k=top_k)
        return RecallOut(
            mode="search",
            reason="no_session",
            memories=tuple(MemoryOut.of(hit.item, hit.score) for hit in hits),
        )

    async def remember(
        self, tenant: Tenant, body: RememberBody, *, author: str | None = None
    ) -> MemoryOut:
        """Store a memory for ``tenant``, written by ``author`` (the caller's key name)."""
        self._begin()
        item = await self.orchestrator.memory.remember(
            tenant,
            body.content,
            importance=body.importance,
            source=body.source,
            kind=body.kind,
            store=body.store,
            scope=body.scope,
            tags=body.tags,
            author=author,
        )
        return MemoryOut.of(item)

    async def scope_of(self, tenant: Tenant, item_id: str) -> Scope | None:
        """The scope of the memory ``item_id`` names for ``tenant`` (``None`` when none).

        A look-up before another operation (deciding the right it needs), not
        an operation of its own: the test clock does not step for it.
        """
        item = await self.orchestrator.memory.get(tenant, item_id)
        return None if item is None else item.scope

    async def update(
        self,
        tenant: Tenant,
        item_id: str,
        *,
        content: str | None = None,
        importance: float | None = None,
        shared: bool = False,
        author: str | None = None,
    ) -> MemoryOut:
        """Change one of ``tenant``'s memories (NotFoundError when it has none by that id);
        with ``shared``, a shared memory it sees, whoever wrote it; ``author`` (the caller's
        key) is recorded as who wrote it now."""
        self._begin()
        item = await self.orchestrator.memory.update(
            tenant, item_id, content=content, importance=importance, shared=shared, author=author
        )
        return MemoryOut.of(item)

    async def forget(self, tenant: Tenant, item_id: str, *, shared: bool = False) -> ForgetOut:
        """Remove one of ``tenant``'s memories; with ``shared``, a shared one whoever wrote it."""
        self._begin()
        removed = await self.orchestrator.memory.forget(tenant, item_id, shared=shared)
        return ForgetOut(item_id=item_id, forgotten=removed)

    async def erase(self, tenant: Tenant) -> ErasureOut:
        """Remove everything of ``tenant``'s user, in every store."""
        self._begin()
        report = await self.orchestrator.memory.erase(tenant.agent_id, tenant.user_id)
        return ErasureOut(
            agent_id=tenant.agent_id, user_id=tenant.user_id, removed=dict(report.removed)
        )

    # ------------------------------------------------------------ health

    async def check_ready(self) -> None:
        """Return when the stores answer a read within two seconds; raise otherwise.

        The outcome is remembered (:attr:`readiness`): while the last check
        failed, turns raise :class:`~prefrontal.serving.readiness.StoresUnavailableError`.
        """
        reason = await self.readiness.check()
        if reason is not None:
            raise StoresUnavailableError(f"the memory stores are not reachable: {reason}")

    async def _answer_readiness(self) -> None:
        with anyio.fail_after(READINESS_TIMEOUT_S):
            await self.stores.consciousness.get_profile(READINESS_TENANT)
            await self.stores.traces.get(READINESS_TENANT, "readiness")

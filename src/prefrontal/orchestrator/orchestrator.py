"""``Orchestrator``: the front door. ``await orchestrator.start_turn(request)``."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from contextlib import AsyncExitStack
from datetime import UTC, datetime
from importlib.metadata import PackageNotFoundError, version
from types import TracebackType

import anyio
from ulid import ULID

from prefrontal.agents import AgentStateAPI
from prefrontal.budgets.policy import BudgetPolicy, default_policy
from prefrontal.budgets.tokens import TokenCounter, default_counter
from prefrontal.bundle.checksum import checksum
from prefrontal.bundle.models import ContextBundle
from prefrontal.errors import ConfigurationError, NotFoundError
from prefrontal.exchange.background import BackgroundRunner
from prefrontal.exchange.extract import Extractor
from prefrontal.exchange.forgetting import SummaryRebuild
from prefrontal.exchange.models import EndTurnResult, ToolCall
from prefrontal.exchange.summary import ExtractiveSummarizer, Summarizer
from prefrontal.memory import MemoryAPI
from prefrontal.memory.fence import TenantFence
from prefrontal.orchestrator.admission import Admission
from prefrontal.orchestrator.budget_floor import refuse_below_floor
from prefrontal.orchestrator.end_turn import TurnEnder
from prefrontal.orchestrator.opening import open_ahead
from prefrontal.orchestrator.runner import run_phases
from prefrontal.orchestrator.writes import INLINE_FLOOR_S, TurnWrites, WriteStats, in_process
from prefrontal.phases import PHASE_INDEX, PHASES
from prefrontal.phases.finalize import turn_writes
from prefrontal.phases.state import Clock, TurnState
from prefrontal.stores.durable import shared_batch
from prefrontal.stores.set import Stores
from prefrontal.stores.tenancy import Tenant
from prefrontal.stores.working_memory import SessionKey
from prefrontal.traces.observe import Observer, combine
from prefrontal.turn import (
    OrchestratorConfig,
    TurnContext,
    TurnRequest,
    TurnResult,
    WorkingMemoryView,
)

IdFactory = Callable[[], str]


def _package_version() -> str:
    try:
        return version("prefrontal")
    except PackageNotFoundError:  # pragma: no cover - running from a source tree
        return "0+unknown"


def _utc_now() -> datetime:
    return datetime.now(UTC)


def aware(clock: Clock) -> Clock:
    """``clock``, once it has shown that it tells timezone-aware time (else ConfigurationError).

    A naive clock would fail every turn later, when its time meets a stored one.
    """
    if clock().tzinfo is None:
        raise ConfigurationError(
            "clock must return timezone-aware datetimes, such as datetime.now(UTC); "
            "it returned a naive one"
        )
    return clock


def _new_ulid() -> str:
    return str(ULID())


class Orchestrator:
    """Runs turns over a set of stores.

    ``clock`` and ``ids`` are injectable so that a turn is reproducible: the
    same request, store contents, clock and ids give the same bundle and
    checksum. Use as an async context manager to close the stores at exit.
    ``observers`` see every turn live (logs, spans, metrics; see
    :mod:`prefrontal.traces.observe`). ``counter`` counts tokens (default: the
    tiktoken encoding ``config.tokenizer`` names). ``summarizer`` folds old
    conversation into the rolling summary (extractive by default);
    ``extractor``, when given, turns each ended exchange into semantic items,
    in the background while the orchestrator is entered (see :meth:`end_turn`).

    Each turn's writes (trace, buffer, recall counts) run behind it, in the
    orchestrator's task group while it is entered (see
    :mod:`prefrontal.orchestrator.writes` for what that guarantees); at most
    ``config.admission.max_turns_in_flight`` turns run at once (see
    :mod:`prefrontal.orchestrator.admission`). ``memory.erase`` is a barrier
    for a user's turns, their writes and extractions
    (:mod:`prefrontal.memory.fence`).
    """

    def __init__(
        self,
        stores: Stores,
        config: OrchestratorConfig | None = None,
        *,
        clock: Clock = _utc_now,
        ids: IdFactory = _new_ulid,
        observers: Iterable[Observer] = (),
        counter: TokenCounter | None = None,
        summarizer: Summarizer | None = None,
        extractor: Extractor | None = None,
    ) -> None:
        self.stores = stores
        self.config = config or OrchestratorConfig()
        self._clock = aware(clock)
        self._ids = ids
        self._counter = counter or default_counter(self.config.tokenizer)
        overrides = self.config.phase_budgets_ms
        self._budgets_ms = {p.name: overrides.get(p.name, p.budget_ms) for p in PHASES}
        self._version = _package_version()
        self.observer = combine(observers)
        self._runner = BackgroundRunner(self.config.end_turn.max_pending_extractions)
        written = (stores.traces, stores.working_memory, stores.episodic, stores.semantic)
        self._writes = TurnWrites(
            self.config.writes,
            attempts=self.config.store_attempts,
            batch=shared_batch(written, synced=False),
            in_process=in_process(written),
        )
        self._admission = Admission(self.config.admission)
        self.fence = TenantFence()
        """Erase's barrier, shared with :attr:`memory` (:mod:`prefrontal.memory.fence`)."""
        summarizer = summarizer or ExtractiveSummarizer()
        self._overlap = not stores.never_wait()
        """Whether the turns' store calls can overlap: known once, as the writes' ``in_process``."""
        self._ender = TurnEnder(
            stores,
            self.config,
            clock=self._clock,
            count_tokens=self._counter.count,
            summarizer=summarizer,
            extractor=extractor,
            runner=self._runner,
            fence=self.fence,
        )
        self._exit = AsyncExitStack()
        self._memory = MemoryAPI(
            stores,
            clock=self._clock,
            ids=ids,
            counter=self._counter,
            config=self.config.recall,
            fence=self.fence,
            summary=SummaryRebuild(
                summarizer=summarizer,
                window=self.config.conversation.recent_turns,
                batch=self.config.end_turn.fold_batch,
                max_tokens=self.config.end_turn.summary_tokens,
            ),
        )
        self._agents = AgentStateAPI(stores, clock=self._clock)

    async def __aenter__(self) -> Orchestrator:
        """Open the stores, start the background runners; leaving waits for their work, then
        closes the stores.

        The stores open here, before the first turn (:mod:`.opening`; a store that cannot
        open yet opens at its first call instead). Turns' writes are drained first, then
        extractions, then the stores close.
        """
        self._exit.push_async_callback(self.stores.aclose)
        await open_ahead(self.stores)
        await self._exit.enter_async_context(self._runner)
        await self._exit.enter_async_context(self._writes.runner)
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> bool | None:
        return await self._exit.__aexit__(exc_type, exc, tb)

    @property
    def clock(self) -> Clock:
        """The clock turns, memories and the agent's state are dated by (timezone-aware)."""
        return self._clock

    @property
    def memory(self) -> MemoryAPI:
        """The memory API (remember, recall, get, update, forget, erase) over these stores.

        It shares the orchestrator's clock, ids, token counter and rerank weights.
        """
        return self._memory

    @property
    def agents(self) -> AgentStateAPI:
        """The agent-state API (profile, goals, actions, questions, scratch page), versioned.

        It shares the orchestrator's clock, so a change is dated on the turns' timeline.
        """
        return self._agents

    def policy(self, total: int) -> BudgetPolicy:
        """The budget policy for a turn with ``total`` tokens."""
        configured = self.config.budget_policy
        return configured.with_total(total) if configured else default_policy(total)

    async def start_turn(self, request: TurnRequest) -> TurnResult:
        """Run the eleven phases for ``request`` and return the context, trace and buffer.

        Returns within the configured deadline (plus the assembly phases'
        own small budgets) whatever the stores do; a failing store degrades
        its phase, never the turn. Cancelling the call cancels every phase.
        The turn's writes run behind it (:mod:`prefrontal.orchestrator.writes`).
        Raises :class:`~prefrontal.errors.OverloadedError` when the turn
        found no slot in time (:mod:`prefrontal.orchestrator.admission`),
        and :class:`~prefrontal.errors.BudgetBelowFloorError` when the
        request's ``token_budget`` cannot hold the owner's pinned section
        (:mod:`prefrontal.bundle.pinning`); nothing of a refused turn is
        written. Below the floor with the configured budget, the turn
        delivers no data and is not ready for the router.
        """
        turn = self._new_turn(request)
        tenant = Tenant(agent_id=request.agent_id, user_id=request.user_id)
        epoch = self.fence.began_turn(turn.context.turn_id, tenant)
        target_s = turn.context.deadline_ms / 1_000 * self.config.admission.target_share
        async with self._admission.admitted(turn.seconds_left(), target_s):
            result = await self._run(turn)
        await self._writes.submit(
            result.context.turn_id,
            turn.session_key,
            turn_writes(turn, result.trace),
            inline_limit_s=max(turn.seconds_left(), INLINE_FLOOR_S),
            ticket=self.fence.ticket(tenant, "turn_writes", epoch=epoch),
        )
        self.observer.turn_ended(result.trace, result.bundle)
        return result

    async def _run(self, turn: TurnState) -> TurnResult:
        self.observer.turn_started(turn.context, turn.request.user_input)
        try:
            await self._earlier_writes(turn)
            sequential = self.config.concurrency == "sequential" or not turn.overlap
            await run_phases(PHASES, turn, sequential=sequential)
            refuse_below_floor(turn)
            return self._result(turn)
        except BaseException:
            self.observer.turn_cancelled(turn.context)
            raise

    async def _earlier_writes(self, turn: TurnState) -> None:
        """Wait, within half the turn's time, for its session's and its parent's writes."""
        parent = turn.context.parent_turn_id
        keys: list[str | SessionKey] = [turn.session_key, *([parent] if parent else [])]
        if not any(self._writes.pending(key) for key in keys):
            return
        with anyio.move_on_after(turn.seconds_left() / 2):
            await self._writes.session_written(turn.session_key)
            if parent:
                await self._writes.turn_written(parent)

    async def end_turn(
        self,
        turn: TurnResult | str,
        reply: str,
        *,
        agent_id: str | None = None,
        user_id: str | None = None,
        tool_calls: Sequence[ToolCall] = (),
        outcome: str | None = None,
    ) -> EndTurnResult:
        """Record the turn's exchange (its input, tool calls and ``reply``) and form memory from it.

        ``turn`` is the :class:`TurnResult` of :meth:`start_turn` or its turn
        id (then with ``agent_id`` and ``user_id``; a turn id that names no
        started turn of theirs is a :class:`~prefrontal.errors.NotFoundError`).
        The messages, episodic items, the rolling summary, the session's
        buffer and the turn's ended trace are written in one transaction
        where the backend has them; an extractor runs in the background
        while the orchestrator is entered. Idempotent: a second call for the
        same turn writes nothing and returns ``written=False``. A turn started
        after this returns sees all it wrote. See :mod:`prefrontal.orchestrator.end_turn`.
        A turn whose user was erased after it began is a
        :class:`~prefrontal.errors.NotFoundError`: nothing of it is written.
        """
        turn_id = turn if isinstance(turn, str) else turn.context.turn_id
        await self.wait_written(turn_id)
        if isinstance(turn, TurnResult):
            agent_id, user_id = turn.context.agent_id, turn.context.user_id
        tenant = (
            None
            if agent_id is None or user_id is None
            else Tenant(agent_id=agent_id, user_id=user_id)
        )
        if tenant is None:
            raise ValueError("end_turn with a bare turn id needs agent_id and user_id")
        epoch = self.fence.turn_epoch(turn_id, tenant)
        async with self.fence.holding(tenant, "end_turn", epoch=epoch) as live:
            if not live:
                raise NotFoundError(
                    f"turn {turn_id!r} began before user {tenant.user_id!r} was erased"
                )
            ended = await self._ender.end_turn(
                turn,
                reply,
                agent_id=agent_id,
                user_id=user_id,
                tool_calls=tool_calls,
                outcome=outcome,
                epoch=epoch,
            )
        self.fence.ended_turn(turn_id)
        return ended

    async def wait_background(self) -> None:
        """Return once the writes behind earlier turns and the extractions of ``end_turn`` ended."""
        await self._writes.wait()
        await self._runner.wait()

    async def wait_written(self, turn_id: str) -> None:
        """Return once the writes behind turn ``turn_id`` have ended (at once when none is pending).

        A failed write is logged and counted (:attr:`write_stats`), not raised here.
        """
        await self._writes.turn_written(turn_id)

    @property
    def write_stats(self) -> WriteStats:
        """What the writes behind turns have done: written, failed, merged, pending."""
        return self._writes.stats

    @property
    def refused(self) -> int:
        """Turns refused by admission control (:class:`~prefrontal.errors.OverloadedError`)."""
        return self._admission.refused

    @property
    def turns_in_flight_limit(self) -> int | None:
        """Turns that may run at once now (learnt when adaptive; ``None`` when unbounded)."""
        limit = self._admission.limit
        return None if limit is None else limit.value

    def _new_turn(self, request: TurnRequest) -> TurnState:
        total = request.token_budget or self.config.total_token_budget
        context = TurnContext(
            turn_id=self._ids(),
            agent_id=request.agent_id,
            user_id=request.user_id,
            session_id=request.session_id,
            parent_turn_id=request.parent_turn_id,
            started_at=self._clock(),
            total_budget=total,
            deadline_ms=self.config.deadline_ms,
        )
        return TurnState(
            request=request,
            context=context,
            config=self.config,
            policy=self.policy(total),
            stores=self.stores,
            counter=self._counter,
            clock=self._clock,
            version=self._version,
            budgets_ms=self._budgets_ms,
            indices=PHASE_INDEX,
            observer=self.observer,
            overlap=self._overlap,
        )

    def _result(self, turn: TurnState) -> TurnResult:
        """The turn's result: the trace phase 11 sealed, or one sealed here when it could not."""
        bundle = turn.bundle or self._empty_bundle(turn)
        turn.bundle = bundle
        trace = turn.trace or turn.seal_trace(turn.records.values())
        return TurnResult(
            context=turn.context,
            bundle=bundle,
            trace=trace,
            working_memory=turn.working_memory or WorkingMemoryView(),
            warnings=trace.warnings,
            ready_for_router=trace.ready_for_router,
        )

    def _empty_bundle(self, turn: TurnState) -> ContextBundle:
        return ContextBundle(
            turn_id=turn.context.turn_id,
            text="",
            total_tokens=0,
            budget=turn.policy.total,
            fragments=(),
            source_breakdown={},
            checksum=checksum("", []),
            tokenizer=turn.counter.encoding_name,
            version=turn.version,
            created_at=turn.context.started_at,
        )

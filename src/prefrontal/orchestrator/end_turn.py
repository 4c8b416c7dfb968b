"""``end_turn``: record what was said, then let memory form from it.

One call, after the model answered:

1. ``exchange``: the user's input, the tool calls and the reply are written
   as conversation messages and episodic items of the session's thread,
   together with the turn's trace and its ending, all or nothing
   (:mod:`prefrontal.stores.exchange`). A turn whose trace already has an
   ending is not written again: the call returns what the first one wrote,
   when it gives the same reply; another reply raises
   :class:`~prefrontal.errors.TurnConflictError` (:mod:`.retries`).
2. ``summary``: what left the recent-conversation window is folded into the
   rolling summary (:mod:`prefrontal.exchange.summary`).
3. ``buffer``: the exchange is offered to the session's working-memory
   buffer (until the next turn's context takes its place); tool results
   stay there as the agent's own items.
4. ``consolidation``: the session's working-memory items going cold are
   promoted into episodic memory (:func:`prefrontal.formation.consolidate`).
5. ``extraction`` (with an :class:`~prefrontal.exchange.Extractor`): runs in
   the orchestrator's background runner when it is entered (inline
   otherwise), bounded by ``extract_timeout_s``; its outcome is added to the
   trace when it ends.

Steps 1 to 4 share one read and one write transaction on SQLite and
PostgreSQL: what the bookkeeping needs (the rolling summary, the messages
leaving the window, the session's buffer) is read first, the new summary
and buffer state are computed without I/O, and the exchange, the summary,
the buffer state and the ended trace (with its steps) are written in one
transaction, one commit. Each of the summary and the buffer is written
there only if nobody changed it since it was read; otherwise it is done
again on the newer state after the commit. Consolidation touches no store
unless some item of the buffer is due. Cancelled before the commit, the
call leaves nothing; what runs after it (those redone steps, a due
consolidation) runs shielded from cancellation for at most
``bookkeeping_timeout_s``. A step that fails (or takes longer than
``bookkeeping_timeout_s``) is recorded in the ending's trace and does not
fail the call.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TypeVar

import anyio

from prefrontal.buffer import ItemProvenance, ItemSource, Lifetime, NewItem, SessionBuffer
from prefrontal.errors import NotFoundError
from prefrontal.exchange.background import BackgroundRunner
from prefrontal.exchange.extract import ExchangeView, Extractor, extract
from prefrontal.exchange.models import EndTurnResult, ToolCall
from prefrontal.exchange.records import Utterance, exchange
from prefrontal.exchange.summary import Summarizer, fold, folded
from prefrontal.formation import consolidate, episodic_keeper
from prefrontal.formation.planning import is_due
from prefrontal.memory.fence import TenantFence
from prefrontal.orchestrator.preloaded import Preloaded
from prefrontal.orchestrator.retries import check_same_reply
from prefrontal.stores.conversation import Role
from prefrontal.stores.exchange import (
    Exchange,
    Lookup,
    Prior,
    SummaryChange,
    exchange_writer,
)
from prefrontal.stores.long_term import MemoryKind
from prefrontal.stores.set import Stores
from prefrontal.stores.tenancy import Tenant
from prefrontal.stores.working_memory import SessionKey, SessionState
from prefrontal.traces.models import ErrorRecord, PhaseRecord, PhaseStatus, TurnEnding, TurnTrace
from prefrontal.traces.phase_records import phase_record
from prefrontal.trusted import evolve
from prefrontal.turn import OrchestratorConfig, TurnResult

Clock = Callable[[], datetime]
TokenCounter = Callable[[str], int]

T = TypeVar("T")

STEP_BUDGETS_MS = {"exchange": 50.0, "summary": 50.0, "buffer": 50.0, "consolidation": 100.0}
STEP_ORDER = ("exchange", "summary", "buffer", "consolidation")
"""The order of the steps in the ending's trace, whenever each ran."""


def user_id_of(turn_id: str) -> str:
    """The id of a turn's user message (and of its episodic item)."""
    return f"{turn_id}:user"


def reply_id_of(turn_id: str) -> str:
    """The id of a turn's reply (and of its episodic item)."""
    return f"{turn_id}:reply"


def utterances(
    trace: TurnTrace, user_input: str, reply: str, calls: Sequence[ToolCall], at: datetime
) -> list[Utterance]:
    """The user's input, each tool call, then the reply, linked to the turn and its parent."""
    links: dict[str, str | int | float | bool] = {"turn_id": trace.turn_id}
    if trace.parent_turn_id is not None:
        links["parent_turn_id"] = trace.parent_turn_id
    user = Utterance(
        item_id=user_id_of(trace.turn_id),
        role=Role.USER,
        content=user_input,
        at=trace.started_at,
        metadata=links,
    )
    tools = [
        Utterance(
            item_id=f"{trace.turn_id}:tool:{n}",
            role=Role.TOOL,
            content=call.text(),
            at=at,
            kind=MemoryKind.TOOL_RESULT,
            metadata=links | {"tool": call.name},
        )
        for n, call in enumerate(calls)
    ]
    answer = Utterance(
        item_id=reply_id_of(trace.turn_id),
        role=Role.ASSISTANT,
        content=reply,
        at=at,
        metadata=links,
    )
    return [user, *tools, answer]


@dataclass
class Steps:
    """The step records of one end-turn call, timed from its start, one per step name."""

    began: float = field(default_factory=time.perf_counter)
    by_name: dict[str, PhaseRecord] = field(default_factory=dict)

    def elapsed_ms(self) -> float:
        """Milliseconds since the call began."""
        return (time.perf_counter() - self.began) * 1_000

    @property
    def records(self) -> tuple[PhaseRecord, ...]:
        """The records in :data:`STEP_ORDER` (others after), numbered from 1."""
        rank = {name: n for n, name in enumerate(STEP_ORDER)}
        ordered = sorted(self.by_name.values(), key=lambda r: rank.get(r.name, len(rank)))
        return tuple(
            r if r.index == n else evolve(r, {"index": n}) for n, r in enumerate(ordered, start=1)
        )

    async def run(
        self,
        name: str,
        step: Callable[[], Awaitable[tuple[T, dict[str, object]]]],
        deadline: float,
    ) -> T | None:
        """Run ``step`` until ``deadline`` (anyio time), recording how it ended.

        Returns its value; ``None`` when it failed or ran out of time (its
        errors never escape; cancellation from outside does).
        """
        started = self.elapsed_ms()
        status, errors, detail = PhaseStatus.OK, tuple[ErrorRecord, ...](), dict[str, object]()
        value: T | None = None
        with anyio.CancelScope(deadline=deadline) as scope:
            try:
                value, detail = await step()
            except Exception as error:
                status = PhaseStatus.FAILED
                errors = (ErrorRecord(type=type(error).__name__, message=str(error)[:2_000]),)
        if scope.cancelled_caught:
            status, value = PhaseStatus.TIMEOUT, None
            errors = (ErrorRecord(type="TimeoutError", message=f"{name} ran out of time"),)
        self.add(name, status, started, detail, errors)
        return value

    def add(
        self,
        name: str,
        status: PhaseStatus,
        started: float,
        detail: dict[str, object],
        errors: tuple[ErrorRecord, ...] = (),
    ) -> PhaseRecord:
        """Record a step that started at ``started`` ms and ends now (replacing a record of it)."""
        record = phase_record(
            name=name,
            index=len(self.by_name) + 1,
            status=status,
            started_ms=round(started, 3),
            duration_ms=round(self.elapsed_ms() - started, 3),
            budget_ms=STEP_BUDGETS_MS.get(name, 100.0),
            errors=errors,
            detail=detail,
        )
        self.by_name[name] = record
        return record


@dataclass
class Plan:
    """What one end-turn call will write, computed before its transaction."""

    records: Exchange
    session: SessionBuffer | None
    due: bool
    """Some working-memory item is due for consolidation."""


class TurnEnder:
    """What ``Orchestrator.end_turn`` does, with the orchestrator's parts."""

    def __init__(
        self,
        stores: Stores,
        config: OrchestratorConfig,
        *,
        clock: Clock,
        count_tokens: TokenCounter,
        summarizer: Summarizer,
        extractor: Extractor | None,
        runner: BackgroundRunner,
        fence: TenantFence,
    ) -> None:
        self.stores, self.config, self.clock = stores, config, clock
        self.count_tokens, self.summarizer, self.extractor = count_tokens, summarizer, extractor
        self.runner, self.fence = runner, fence

    async def end_turn(
        self,
        turn: TurnResult | str,
        reply: str,
        *,
        agent_id: str | None,
        user_id: str | None,
        tool_calls: Sequence[ToolCall],
        outcome: str | None,
        epoch: int = 0,
    ) -> EndTurnResult:
        """Record the exchange of ``turn`` (see the module).

        ``epoch`` is the erasures the user had seen when the turn began
        (:mod:`prefrontal.memory.fence`): its extraction is dropped if the
        user is erased before it runs, and cancelled by an erase while it does.
        """
        if not reply.strip():
            raise ValueError("reply must not be empty or only whitespace")
        steps = Steps()
        trace = await self._trace(turn, agent_id, user_id)
        writer = exchange_writer(self.stores)
        if trace.ending is not None:
            check_same_reply(trace, reply)
            await self._extract_missing(trace, tool_calls, epoch)
            return _result(trace, written=False)
        at = self.clock()
        calls = tuple(tool_calls)
        records = self._records(trace, reply, outcome, calls, at)
        prior = await writer.prior(self._lookup(trace, records))
        if prior.ended:
            stored = prior.trace or await self._stored(trace)
            check_same_reply(stored, reply)
            await self._extract_missing(stored, tool_calls, epoch)
            return _result(stored, written=False)
        plan = await self._plan(trace, prior, records, reply, calls, at, steps)
        started = steps.elapsed_ms()

        def stamp(written: TurnTrace) -> TurnTrace:
            detail: dict[str, object] = {"memories": len(plan.records.memories)}
            steps.add("exchange", PhaseStatus.OK, started, detail)
            return _with_steps(written, steps)

        done = await writer.write(plan.records, stamp)
        if done is None:
            stored = await self._stored(trace)
            check_same_reply(stored, reply)
            return _result(stored, written=False)
        assert done.trace is not None  # an exchange of a turn always carries its trace
        final = await self._after(done.trace, plan, done, steps, calls, at)
        await self._extract(final, calls, at, epoch)
        return _result(final, written=True)

    def _lookup(self, trace: TurnTrace, records: Exchange) -> Lookup:
        return Lookup(
            tenant=_tenant(trace),
            turn_id=trace.turn_id,
            session=_key(trace),
            fold=self.config.end_turn.fold,
            window=self.config.conversation.recent_turns,
            batch=self.config.end_turn.fold_batch,
            incoming=records.messages,
        )

    def _records(
        self,
        trace: TurnTrace,
        reply: str,
        outcome: str | None,
        calls: Sequence[ToolCall],
        at: datetime,
    ) -> Exchange:
        """The exchange's records, the trace with its ending among them."""
        said = utterances(trace, _input_of(trace), reply, calls, at)
        ending = TurnEnding(
            ended_at=at,
            reply=reply,
            outcome=outcome,
            tool_calls=tuple(c.name for c in calls),
            message_ids=tuple(u.item_id for u in said if u.role in (Role.USER, Role.ASSISTANT)),
            memory_ids=tuple(u.item_id for u in said),
        )
        return exchange(
            said,
            tenant=_tenant(trace),
            session_id=trace.session_id,
            thread_id=trace.session_id,
            trace=evolve(trace, {"ending": ending}),
        )

    async def _plan(
        self,
        trace: TurnTrace,
        prior: Prior,
        records: Exchange,
        reply: str,
        calls: Sequence[ToolCall],
        at: datetime,
        steps: Steps,
    ) -> Plan:
        """What to write: the exchange, the folded summary, the buffer's new state."""
        deadline = anyio.current_time() + self.config.end_turn.bookkeeping_timeout_s
        change = None
        if self.config.end_turn.fold:
            change = await steps.run("summary", lambda: self._folded(prior, records, at), deadline)
        session = await steps.run(
            "buffer", lambda: self._offered(trace, prior.session, reply, calls, at), deadline
        )
        due = session is None or _due(session, at)  # a failed buffer step: consolidate to be sure
        if self.config.end_turn.consolidate and not due:
            steps.add("consolidation", PhaseStatus.OK, steps.elapsed_ms(), _NOTHING_DUE)
        state = None if session is None else _captured(session)
        return Plan(
            records=evolve(records, {"summary": change, "session": state}),
            session=session,
            due=self.config.end_turn.consolidate and due,
        )

    async def _folded(
        self, prior: Prior, records: Exchange, at: datetime
    ) -> tuple[SummaryChange | None, dict[str, object]]:
        change, done = await folded(
            prior.summary,
            prior.leaving,
            records.tenant,
            max_tokens=self.config.end_turn.summary_tokens,
            summarizer=self.summarizer,
            count_tokens=self.count_tokens,
            now=at,
        )
        return change, {"folded": done.folded, "summary_tokens": done.tokens}

    async def _offered(
        self,
        trace: TurnTrace,
        state: SessionState | None,
        reply: str,
        calls: Sequence[ToolCall],
        at: datetime,
    ) -> tuple[SessionBuffer, dict[str, object]]:
        """The session's buffer as read, with the exchange offered (saved by the transaction)."""
        session = await SessionBuffer.load(
            Preloaded(self.stores.working_memory, state),
            _key(trace),
            config=self.config.buffer,
            count_tokens=self.count_tokens,
            clock=self.clock,
            keeper=episodic_keeper(self.stores.episodic, _key(trace)),
        )
        outcomes = [
            (await session.add(item, now=at)).outcome.value for item in _offers(trace, reply, calls)
        ]
        saved = await session.save(now=at)
        return session, {"outcomes": dict(Counter(outcomes)), "version": saved.version}

    async def _after(
        self,
        trace: TurnTrace,
        plan: Plan,
        done: Exchange,
        steps: Steps,
        calls: Sequence[ToolCall],
        at: datetime,
    ) -> TurnTrace:
        """Redo what lost a race, run a due consolidation; save the trace if anything ran."""
        refold = plan.records.summary is not None and done.summary is None
        reoffer = plan.records.session is not None and done.session is None
        if not (refold or reoffer or plan.due):
            return trace
        ending = trace.ending
        assert ending is not None
        timeout = self.config.end_turn.bookkeeping_timeout_s
        with anyio.move_on_after(timeout, shield=True):
            deadline = anyio.current_time() + timeout
            if refold:
                await steps.run("summary", lambda: self._fold(trace, at), deadline)
            if reoffer:
                await steps.run(
                    "buffer", lambda: self._offer(trace, ending.reply, calls, at), deadline
                )
            if plan.due:
                await steps.run("consolidation", lambda: self._consolidate(trace, at), deadline)
            final = _with_steps(trace, steps)
            await self.stores.traces.put(final)
            return final
        return _with_steps(trace, steps)

    async def _trace(
        self, turn: TurnResult | str, agent_id: str | None, user_id: str | None
    ) -> TurnTrace:
        if isinstance(turn, TurnResult):
            return turn.trace
        if agent_id is None or user_id is None:
            raise ValueError("end_turn with a bare turn id needs agent_id and user_id")
        trace = await self.stores.traces.get(Tenant(agent_id=agent_id, user_id=user_id), turn)
        if trace is None:
            raise NotFoundError(
                f"no turn {turn!r} of agent {agent_id!r} and user {user_id!r}: "
                "end_turn ends a turn that start_turn began"
            )
        return trace

    async def _stored(self, trace: TurnTrace) -> TurnTrace:
        stored = await self.stores.traces.get(_tenant(trace), trace.turn_id)
        return stored or trace

    async def _fold(self, trace: TurnTrace, at: datetime) -> tuple[None, dict[str, object]]:
        settings = self.config.end_turn
        done = await fold(
            self.stores.conversation,
            _tenant(trace),
            window=self.config.conversation.recent_turns,
            batch=settings.fold_batch,
            max_tokens=settings.summary_tokens,
            summarizer=self.summarizer,
            count_tokens=self.count_tokens,
            now=at,
        )
        return None, {"folded": done.folded, "summary_tokens": done.tokens, "again": True}

    async def _offer(
        self, trace: TurnTrace, reply: str, calls: Sequence[ToolCall], at: datetime
    ) -> tuple[None, dict[str, object]]:
        session = await SessionBuffer.load(
            self.stores.working_memory,
            _key(trace),
            config=self.config.buffer,
            count_tokens=self.count_tokens,
            clock=self.clock,
            max_attempts=self.config.writes.save_attempts,
            keeper=episodic_keeper(self.stores.episodic, _key(trace)),
        )
        outcomes = [
            (await session.add(item, now=at)).outcome.value for item in _offers(trace, reply, calls)
        ]
        saved = await session.save(now=at)
        detail = {"outcomes": dict(Counter(outcomes)), "version": saved.version, "again": True}
        return None, detail

    async def _consolidate(self, trace: TurnTrace, at: datetime) -> tuple[None, dict[str, object]]:
        report = await consolidate(self.stores, _key(trace), now=at, count_tokens=self.count_tokens)
        return None, {"promoted": list(report.promoted_ids), "released": len(report.released)}

    async def _extract_missing(
        self, trace: TurnTrace, calls: Sequence[ToolCall], epoch: int
    ) -> None:
        """On a retry: run the extraction a cancelled first call never scheduled.

        Its items have the same ids whenever it runs, so running it twice is harmless.
        A turn with a message forgotten since is not extracted again.
        """
        ending = trace.ending
        if self.extractor is None or ending is None or trace.forgotten:
            return
        if any(step.name == "extraction" for step in ending.steps):
            return
        await self._extract(trace, calls, ending.ended_at, epoch)

    async def _extract(
        self, trace: TurnTrace, calls: Sequence[ToolCall], at: datetime, epoch: int
    ) -> None:
        extractor = self.extractor
        if extractor is None:
            return
        ending = trace.ending
        assert ending is not None
        view = ExchangeView(
            turn_id=trace.turn_id,
            parent_turn_id=trace.parent_turn_id,
            agent_id=trace.agent_id,
            user_id=trace.user_id,
            session_id=trace.session_id,
            user_input=_input_of(trace),
            reply=ending.reply,
            tool_calls=tuple(calls),
            at=at,
        )
        job = Extraction(self.stores, view, extractor, self.config.end_turn.extract_timeout_s)
        ticket = self.fence.ticket(_tenant(trace), "extraction", epoch=epoch, subject=trace.turn_id)

        async def fenced() -> None:
            await ticket.run(job)

        if not self.runner.running:
            await fenced()
            return
        try:
            await self.runner.submit(fenced)
        except BaseException:  # cancelled waiting for a slot: it never runs
            ticket.release()
            raise


class Extraction:
    """One extraction: run the extractor, write its items, add its step to the turn's trace."""

    def __init__(
        self, stores: Stores, view: ExchangeView, extractor: Extractor, timeout_s: float
    ) -> None:
        self.stores, self.view, self.extractor, self.timeout_s = stores, view, extractor, timeout_s

    async def __call__(self) -> None:
        began = time.perf_counter()
        status, errors, detail = PhaseStatus.OK, tuple[ErrorRecord, ...](), dict[str, object]()
        try:
            with anyio.fail_after(self.timeout_s):
                items = await extract(self.stores.semantic, self.view, self.extractor)
            detail = {
                "items": [i.item_id for i in items],
                "superseded": [i.supersedes for i in items if i.supersedes],
            }
        except Exception as error:
            status = PhaseStatus.TIMEOUT if isinstance(error, TimeoutError) else PhaseStatus.FAILED
            errors = (
                ErrorRecord(
                    type=type(error).__name__, message=str(error)[:2_000] or type(error).__name__
                ),
            )
        duration = (time.perf_counter() - began) * 1_000
        with anyio.CancelScope(shield=True):
            await self._record(status, errors, detail, duration)

    async def _record(
        self,
        status: PhaseStatus,
        errors: tuple[ErrorRecord, ...],
        detail: dict[str, object],
        duration_ms: float,
    ) -> None:
        trace = await self.stores.traces.get(self.view.tenant, self.view.turn_id)
        if trace is None or trace.ending is None:
            return
        ending = trace.ending
        record = PhaseRecord(
            name="extraction",
            index=len(ending.steps) + 1,
            status=status,
            started_ms=round(ending.duration_ms, 3),
            duration_ms=round(duration_ms, 3),
            budget_ms=self.timeout_s * 1_000,
            errors=errors,
            detail=detail,
        )
        update = {
            "steps": (*ending.steps, record),
            "errors": (*ending.errors, *errors),
        }
        await self.stores.traces.put(
            trace.model_copy(update={"ending": ending.model_copy(update=update)})
        )


_NOTHING_DUE: dict[str, object] = {"promoted": [], "released": 0}


def _tenant(trace: TurnTrace) -> Tenant:
    return Tenant(agent_id=trace.agent_id, user_id=trace.user_id)


def _key(trace: TurnTrace) -> SessionKey:
    return SessionKey(agent_id=trace.agent_id, user_id=trace.user_id, session_id=trace.session_id)


def _offers(trace: TurnTrace, reply: str, calls: Sequence[ToolCall]) -> list[NewItem]:
    """What the buffer is offered: the exchange, then each tool call's result."""
    return [_exchange_item(trace, reply), *(_tool_item(trace, n, c) for n, c in enumerate(calls))]


def _due(session: SessionBuffer, at: datetime) -> bool:
    """True when consolidation at ``at`` would find work in ``session`` (no I/O)."""
    config = session.buffer.config
    return any(i.consolidating_into is not None or is_due(i, config, at) for i in session.items)


def _captured(session: SessionBuffer) -> SessionState | None:
    """The state ``session`` saved into its :class:`Preloaded` store (for the transaction)."""
    store = session.store
    return store.saved if isinstance(store, Preloaded) else None


def _input_of(trace: TurnTrace) -> str:
    if not trace.user_input:
        raise NotFoundError(
            f"the trace of turn {trace.turn_id!r} does not hold its user input "
            "(it was written by an older prefrontal): it cannot be ended"
        )
    return trace.user_input


def _with_steps(trace: TurnTrace, steps: Steps) -> TurnTrace:
    ending = trace.ending
    assert ending is not None
    records = steps.records
    update = {
        "steps": records,
        "duration_ms": round(steps.elapsed_ms(), 3),
        "errors": tuple(e for r in records for e in r.errors),
        "warnings": tuple(f"{r.name}: {w}" for r in records for w in r.warnings),
    }
    return evolve(trace, {"ending": evolve(ending, update)})


def _result(trace: TurnTrace, *, written: bool) -> EndTurnResult:
    ending = trace.ending
    assert ending is not None
    return EndTurnResult(
        turn_id=trace.turn_id,
        written=written,
        message_ids=ending.message_ids,
        memory_ids=ending.memory_ids,
        trace=ending,
    )


def _exchange_item(trace: TurnTrace, reply: str) -> NewItem:
    return NewItem(
        item_id=f"exchange:{trace.turn_id}",
        content=f"user: {trace.user_input}\nassistant: {reply}",
        source=ItemSource.USER_INPUT,
        priority=0.7,
        urgency=0.3,
        lifetime=Lifetime.TURN,
        provenance=ItemProvenance(
            store="conversation",
            item_ids=(user_id_of(trace.turn_id), reply_id_of(trace.turn_id)),
            phase="end_turn",
            section="conversation",
            turn_id=trace.turn_id,
        ),
    )


def _tool_item(trace: TurnTrace, number: int, call: ToolCall) -> NewItem:
    return NewItem(
        item_id=f"{trace.turn_id}:tool:{number}",
        content=call.text(),
        source=ItemSource.EXTERNAL,
        priority=0.6,
        lifetime=Lifetime.SESSION,
        provenance=ItemProvenance(
            store="episodic",
            item_ids=(f"{trace.turn_id}:tool:{number}",),
            phase="end_turn",
            turn_id=trace.turn_id,
        ),
    )

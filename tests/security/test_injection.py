"""The injection suite, in process: hundreds of hostile strings through every path, on every backend.

Every string of :data:`~tests.security.hostile.HOSTILE` is written through
each path a user or a tool reaches (private memory in both stores, shared
memory with its author, a memory's speaker, goals, scratch entries, the
conversation's summary; the input, reply, tool calls, outcome and an
extractor's output of a finished turn), then a turn is run that recalls
them. Each bundle must keep prefrontal's structure, its system message
must be exactly the one a turn without them has, and each string's marker
must still reach the model, as data.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime

import pytest

from prefrontal import Stores
from prefrontal.demo import DEMO_AGENT, DEMO_USER, seed
from prefrontal.exchange import ToolCall
from prefrontal.exchange.extract import ExchangeView
from prefrontal.exchange.models import Extracted
from prefrontal.orchestrator import Orchestrator
from prefrontal.stores.conversation import ConversationSummary
from prefrontal.stores.frontal_cortex import FrontalItem, FrontalKind, FrontalStatus
from prefrontal.stores.long_term import MemoryItem
from prefrontal.stores.scratch_page import Observation
from prefrontal.stores.tenancy import Scope, Tenant
from prefrontal.turn import OrchestratorConfig, TurnRequest
from tests.endturn_support import build
from tests.security.contract import check_messages, check_structure, delivered
from tests.security.hostile import HOSTILE

pytestmark = pytest.mark.anyio

NOW = datetime(2026, 11, 22, 10, 0, tzinfo=UTC)
MAYA = Tenant(agent_id=DEMO_AGENT, user_id=DEMO_USER)
SAM = Tenant(agent_id=DEMO_AGENT, user_id="sam")
BATCH = 24
EXCHANGE_BATCH = 16
ROOMY: dict[str, object] = {
    "total_token_budget": 100_000,
    "frontal_cortex": {"active_goals": 100},
    "conversation": {"recent_turns": 200},
    "recall": {"episodic_candidates": 200, "semantic_candidates": 200, "gate": False},
    "scratch_page": {"entries": 100},
}


async def echo_reply(exchange: ExchangeView) -> Sequence[Extracted]:
    """An extractor that keeps the reply as a fact: its output is as hostile as the reply."""
    return [Extracted(content=exchange.reply)]


def orchestrator(stores: Stores) -> Orchestrator:
    return Orchestrator(
        stores,
        OrchestratorConfig.model_validate({"deadline_ms": 30_000, **ROOMY}),
        clock=lambda: NOW,
    )


def ask(text: str, session: str = "inject", parent: str | None = None) -> TurnRequest:
    return TurnRequest(
        agent_id=DEMO_AGENT,
        user_id=DEMO_USER,
        session_id=session,
        user_input=text,
        parent_turn_id=parent,
    )


def marker(index: int, path: str) -> str:
    return f"qz{index:04d}{path}"


def goal(
    n: int, title: str, status: FrontalStatus = FrontalStatus.ACTIVE, detail: str = ""
) -> FrontalItem:
    return FrontalItem(
        item_id=f"goal-{n}",
        agent_id=DEMO_AGENT,
        user_id=DEMO_USER,
        kind=FrontalKind.GOAL,
        title=title,
        detail=detail,
        status=status,
        created_at=NOW,
        updated_at=NOW,
    )


async def control_system(orch: Orchestrator) -> str:
    """The system message of a turn before anything hostile was stored."""
    result = await orch.start_turn(ask("What is the launch plan?", session="control"))
    return result.bundle.to_messages()[0]["content"]


async def store_batch(stores: Stores, orch: Orchestrator, start: int, batch: Sequence[str]) -> None:
    """Each string of ``batch`` through every stored path, each with its own marker."""
    memory = orch.memory
    for offset, text in enumerate(batch):
        n = start + offset
        await memory.remember(
            MAYA, f"{text} {marker(n, 'p')}", store="episodic", item_id=f"mem-{n}"
        )
        await memory.remember(
            SAM,
            f"{text} {marker(n, 's')}",
            scope=Scope.SHARED,
            author=f"sam {text[:80]}",
            item_id=f"shared-{n}",
        )
        await stores.episodic.put(
            MemoryItem(
                item_id=f"spoken-{n}",
                agent_id=DEMO_AGENT,
                user_id=DEMO_USER,
                content=f"{text} {marker(n, 'k')}",
                metadata={"speaker": text[:200], "source": text[:200]},
                created_at=NOW,
            )
        )
        await stores.frontal_cortex.put(goal(n, f"{text} {marker(n, 'g')}", detail=text))
        await stores.scratch_page.put(
            Observation(
                item_id=f"scratch-{n}",
                agent_id=DEMO_AGENT,
                user_id=DEMO_USER,
                content=f"{text} {marker(n, 'o')}",
                created_at=NOW,
            )
        )
    await stores.conversation.put_summary(
        ConversationSummary(
            agent_id=DEMO_AGENT,
            user_id=DEMO_USER,
            text=f"{batch[0]} {marker(start, 'y')}",
            topics=tuple(t[:1_000] for t in batch[:3]),
            decisions=tuple(t[:1_000] for t in batch[3:6]),
            updated_at=NOW,
        )
    )


async def test_stored_paths_keep_the_structure_and_deliver_the_text(stores: Stores) -> None:
    """Memories (private, shared, spoken), goals, scratch and summary: structure kept, text delivered."""
    await seed(stores)
    orch = orchestrator(stores)
    system = await control_system(orch)
    checked = 0
    for start in range(0, len(HOSTILE), BATCH):
        batch = HOSTILE[start : start + BATCH]
        await store_batch(stores, orch, start, batch)
        markers = [marker(start + k, p) for k in range(len(batch)) for p in "pskgo"]
        result = await orch.start_turn(ask(" ".join(markers)))
        messages = result.bundle.to_messages()
        check_structure(result.bundle)
        check_messages(messages, system)
        missing = [m for m in [*markers, marker(start, "y")] if not delivered(messages, m)]
        assert not missing
        checked += len(markers) + 1
        await clear(stores, start, batch)
    assert checked >= 5 * len(HOSTILE)


async def clear(stores: Stores, start: int, batch: Sequence[str]) -> None:
    """Put the batch away (forgotten, done, resolved), so that the next one is recalled instead."""
    numbers = range(start, start + len(batch))
    await stores.episodic.delete(MAYA, [f"mem-{n}" for n in numbers])
    await stores.episodic.delete(MAYA, [f"spoken-{n}" for n in numbers])
    await stores.semantic.delete(SAM, [f"shared-{n}" for n in numbers])
    for n in numbers:
        await stores.frontal_cortex.put(goal(n, "done", FrontalStatus.DONE))
    entries = await stores.scratch_page.active(MAYA, now=NOW, limit=1_000)
    for entry in entries:
        if entry.item_id.startswith("scratch-"):
            await stores.scratch_page.put(entry.model_copy(update={"resolved": True}))


async def test_a_finished_turn_keeps_the_structure_whatever_it_held(stores: Stores) -> None:
    """Input, reply, tool calls, outcome and extracted facts: the next turn's structure is kept.

    Each exchange carries a batch of the strings joined in each of its paths."""
    await seed(stores)
    orch = build(stores, clock=lambda: NOW, extractor=echo_reply, total_token_budget=100_000)
    system = await control_system(orch)
    parent: str | None = None
    for n, start in enumerate(range(0, len(HOSTILE), EXCHANGE_BATCH)):
        text = " ".join(HOSTILE[start : start + EXCHANGE_BATCH])
        result = await orch.start_turn(ask(f"{text} {marker(n, 'i')}", parent=parent))
        messages = result.bundle.to_messages()
        check_structure(result.bundle)
        check_messages(messages, system)
        if parent is not None:
            assert delivered(messages, marker(n - 1, "i"))
            assert delivered(messages, marker(n - 1, "r"))
        call = ToolCall(name=text[:200], result=f"{text} {marker(n, 't')}")
        reply = f"{marker(n, 'r')} {text}"  # the marker first: a long reply is cut
        await orch.end_turn(result, reply, tool_calls=[call], outcome=text[:1_000])
        parent = result.context.turn_id
    await orch.wait_background()
    last = await orch.start_turn(ask(marker(n, "r"), parent=parent))
    check_structure(last.bundle)
    check_messages(last.bundle.to_messages(), system)
    assert any("(extracted)" in f.text for f in last.bundle.fragments)

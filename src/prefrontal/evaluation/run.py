"""Running the evaluation: ingest each conversation, ask every question, score the contexts.

Each question is one real turn (``Orchestrator.start_turn``) asked a day
after the conversation's last session, in a session of its own so that no
question sees another's working memory. Nothing at query time reads a
question's category, answer or evidence: they are used only to score the
bundle afterwards. The baselines get the same total budget.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path

from prefrontal.budgets.policy import BudgetPolicy, default_policy
from prefrontal.config import RecallConfig
from prefrontal.evaluation.baselines import Bm25Baseline, recency
from prefrontal.evaluation.ingest import Coverage, ingest_notes, ingest_turns, turn_time
from prefrontal.evaluation.locomo import Conversation, Dataset, Question
from prefrontal.evaluation.scoring import Scored, bundle_items, covered, recall
from prefrontal.files import private_directory
from prefrontal.orchestrator.orchestrator import Orchestrator
from prefrontal.retrieval.embedder import Embedder
from prefrontal.stores import sqlite
from prefrontal.stores.set import Stores
from prefrontal.stores.tenancy import Tenant
from prefrontal.turn import OrchestratorConfig, TurnRequest

AGENT_ID = "locomo-listener"
DEADLINE_MS = 120_000
"""Generous: the measure is what the context holds, not whether a busy CPU met 1 s."""

Progress = Callable[[int], None]


@dataclass
class Run:
    """Per-question scores of the pipeline and of each baseline."""

    pipeline: list[Scored] = field(default_factory=list)
    with_notes: list[Scored] = field(default_factory=list)
    recency: list[Scored] = field(default_factory=list)
    bm25: list[Scored] = field(default_factory=list)
    context_tokens: list[int] = field(default_factory=list)
    seconds: float = 0.0


def context_policy(total: int) -> BudgetPolicy:
    """The default split with no reserve: the whole budget is context, as the baselines get."""
    return BudgetPolicy(total=total, reserve=0, sections=default_policy(total).sections)


StoreFactory = Callable[[str], Stores]
"""Fresh stores for a conversation, given a name for them."""


def memory_stores(embedder: Embedder | None) -> Stores:
    """Fresh in-memory stores (long-term memory embedding with ``embedder`` when given)."""
    return Stores.in_memory(embedder=embedder)


def in_memory(embedder: Embedder | None) -> StoreFactory:
    """In-memory stores for every conversation (the default: fast, nothing left behind)."""
    return lambda _name: memory_stores(embedder)


def sqlite_files(directory: Path, embedder: Embedder | None) -> StoreFactory:
    """One SQLite file per conversation in ``directory``, replaced if it exists."""
    private_directory(directory)

    def open_fresh(name: str) -> Stores:
        path = directory / f"{name}.sqlite"
        for leftover in (
            path,
            path.with_name(path.name + "-wal"),
            path.with_name(path.name + "-shm"),
        ):
            leftover.unlink(missing_ok=True)
        return sqlite.open_stores(path, embedder=embedder)

    return open_fresh


def asked_at(conv: Conversation) -> datetime:
    """When the questions are asked: a day after the conversation's last turn."""
    return turn_time(conv.turns[-1]) + timedelta(days=1)


async def ask_all(
    stores: Stores,
    conv: Conversation,
    coverage: Coverage,
    budget: int,
    progress: Progress,
    feedback: bool = False,
) -> tuple[list[Scored], list[int]]:
    """Run one turn per question and score each bundle."""
    config = OrchestratorConfig(
        total_token_budget=budget,
        budget_policy=context_policy(budget),
        deadline_ms=DEADLINE_MS,
        recall=RecallConfig(feedback=feedback),
    )
    when = asked_at(conv)
    orchestrator = Orchestrator(stores, config, clock=lambda: when)
    scores: list[Scored] = []
    tokens: list[int] = []
    for number, question in enumerate(conv.questions):
        result = await orchestrator.start_turn(_request(conv, number, question))
        held = covered(bundle_items(result.bundle), coverage)
        scores.append(Scored(question.category, recall(question.evidence, held)))
        tokens.append(result.bundle.total_tokens)
        progress(1)
    return scores, tokens


def _request(conv: Conversation, number: int, question: Question) -> TurnRequest:
    return TurnRequest(
        agent_id=AGENT_ID,
        user_id=conv.sample_id,
        session_id=f"question-{number}",
        user_input=question.text,
    )


def baselines(conv: Conversation, budget: int, count: Callable[[str], int], run: Run) -> None:
    """Score the most-recent-turns and BM25 baselines on every question."""
    bm25 = Bm25Baseline(conv.turns)
    latest = {t.dia_id for t in recency(conv.turns, budget, count)}
    for question in conv.questions:
        matched = {t.dia_id for t in bm25.select(question.text, budget, count)}
        run.recency.append(Scored(question.category, recall(question.evidence, latest)))
        run.bm25.append(Scored(question.category, recall(question.evidence, matched)))


async def evaluate_conversation(
    conv: Conversation,
    budget: int,
    run: Run,
    *,
    stores_for: StoreFactory,
    notes: bool,
    count: Callable[[str], int],
    progress: Progress,
    feedback: bool = False,
) -> None:
    """Ingest one conversation, score the pipeline (turns only, then with notes) and baselines."""
    tenant = Tenant(agent_id=AGENT_ID, user_id=conv.sample_id)
    stores = stores_for(conv.sample_id)
    try:
        coverage = await ingest_turns(stores, conv, tenant)
        scores, tokens = await ask_all(stores, conv, coverage, budget, progress, feedback)
    finally:
        await stores.aclose()
    run.pipeline.extend(scores)
    run.context_tokens.extend(tokens)
    if notes:
        stores = stores_for(f"{conv.sample_id}-notes")
        try:
            coverage = await ingest_turns(stores, conv, tenant)
            coverage |= await ingest_notes(stores, conv, tenant)
            asked = await ask_all(stores, conv, coverage, budget, progress, feedback)
            run.with_notes.extend(asked[0])
        finally:
            await stores.aclose()
    baselines(conv, budget, count, run)


async def evaluate(
    dataset: Dataset,
    budget: int,
    *,
    embedder: Embedder | None = None,
    notes: bool = False,
    db: Path | None = None,
    progress: Progress = lambda _: None,
    feedback: bool = False,
) -> Run:
    """Evaluate the pipeline and the baselines on every conversation of ``dataset``.

    The stores are in memory, or with ``db`` one SQLite file per conversation there.
    """
    from prefrontal.budgets.tokens import default_counter

    count = default_counter().count
    stores_for = sqlite_files(db, embedder) if db else in_memory(embedder)
    run = Run()
    started = time.perf_counter()
    for conv in dataset.conversations:
        await evaluate_conversation(
            conv,
            budget,
            run,
            stores_for=stores_for,
            notes=notes,
            count=count,
            progress=progress,
            feedback=feedback,
        )
    run.seconds = round(time.perf_counter() - started, 2)
    return run

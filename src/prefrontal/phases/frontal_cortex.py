"""Phase 3, ``frontal_cortex``: active goals, pending actions, questions, stories, progress.

Each kind is ranked by relevance to the input, then priority, blocking and
due date, and cut to its configured count. Progress deltas are the items
finished or changed since the session's last turn. Every line carries the
item's handle (``Goal #482913 (...)``, :mod:`prefrontal.agents.handles`),
which the tools and routes take to change it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Set
from dataclasses import dataclass
from datetime import datetime

from prefrontal.agents.handles import handle_of
from prefrontal.bundle.fence import as_data
from prefrontal.bundle.models import Fragment, Section
from prefrontal.config import PhaseName
from prefrontal.object_cache import ObjectCache
from prefrontal.phases.ahead import taken
from prefrontal.phases.fragments import fragment, input_terms, loaded, made_once, shared
from prefrontal.phases.origins import author_label
from prefrontal.phases.spec import PhaseSpec
from prefrontal.phases.state import PhaseOutcome, TurnState
from prefrontal.phases.store_calls import call_store, list_of
from prefrontal.retrieval.analysis import term_set
from prefrontal.stores.frontal_cortex import FrontalItem, FrontalKind, FrontalQuery, FrontalStatus

NAME: PhaseName = "frontal_cortex"
FETCH_LIMIT = 200
OPEN = (FrontalStatus.ACTIVE, FrontalStatus.BLOCKED)
FAR_FUTURE = datetime.max.replace(tzinfo=None)
QUERY = FrontalQuery(limit=FETCH_LIMIT)
"""What the phase asks the store for (a frozen model, built once)."""
ITEMS_KEPT = 8_192
"""Items whose terms and due dates are remembered (see :func:`weighed`)."""


@dataclass(frozen=True, slots=True)
class Weighed:
    """What ranking an item looks at besides the input: worked out once per stored item."""

    terms: frozenset[str]
    """The distinct terms of its title, detail and tags."""
    due: datetime
    """Its due date without time zone (:data:`FAR_FUTURE` when it has none)."""


_WEIGHED: ObjectCache[Weighed] = ObjectCache(ITEMS_KEPT)


def weighed(item: FrontalItem) -> Weighed:
    """``item``'s terms and due date, worked out once for the very same (frozen) item."""
    return _WEIGHED((item,), None, lambda: _weigh(item))


def _weigh(item: FrontalItem) -> Weighed:
    return Weighed(
        terms=term_set(f"{item.title} {item.detail} {' '.join(item.tags)}"),
        due=item.due_at.replace(tzinfo=None) if item.due_at else FAR_FUTURE,
    )


def sort_key(item: FrontalItem, query_terms: Set[str]) -> tuple[float, float, bool, datetime, str]:
    """Most relevant first, then highest priority, blocking first, soonest due, then id."""
    seen = weighed(item)
    relevance = shared(query_terms, seen.terms)
    return (-round(relevance, 3), -item.priority, not item.blocking, seen.due, item.item_id)


def describe(item: FrontalItem) -> str:
    """One line: kind, handle, author, priority, status, owner, due date, title and detail."""
    written = author_label(item.author, item.scope, item.user_id)
    flags = [] if written is None else [written]
    flags.append(f"priority {item.priority:.1f}")
    if item.progress:
        flags.append(f"{item.progress:.0%} done")
    if item.blocking:
        flags.append("blocking")
    if item.status is FrontalStatus.BLOCKED:
        flags.append("blocked")
    if item.kind is FrontalKind.ACTION:
        flags.append(f"owner {item.owner}")
    if item.due_at:
        flags.append(f"due {item.due_at:%Y-%m-%d}")
    detail = f" — {as_data(item.detail, opens_line=False)}" if item.detail else ""
    title = as_data(item.title, opens_line=False)
    kind = item.kind.value.capitalize()
    return f"{kind} {handle_of(item)} ({', '.join(flags)}): {title}{detail}"


def progress_line(item: FrontalItem) -> str:
    """A progress delta: what changed since the last turn."""
    title = as_data(item.title, opens_line=False)
    return f"Progress: {item.kind.value} {handle_of(item)} '{title}' is now {item.status.value}"


def select(turn: TurnState, items: list[FrontalItem]) -> list[FrontalItem]:
    """The open items of each kind, ranked and cut to the configured counts."""
    limits = {
        FrontalKind.GOAL: turn.config.frontal_cortex.active_goals,
        FrontalKind.ACTION: turn.config.frontal_cortex.pending_actions,
        FrontalKind.QUESTION: turn.config.frontal_cortex.questions,
        FrontalKind.STORY: turn.config.frontal_cortex.stories,
    }
    query_terms = input_terms(turn)
    open_items: dict[FrontalKind, list[FrontalItem]] = {kind: [] for kind in FrontalKind}
    for item in items:
        if item.status in OPEN:
            open_items[item.kind].append(item)
    chosen: list[FrontalItem] = []
    for kind, limit in limits.items():
        chosen.extend(sorted(open_items[kind], key=lambda i: sort_key(i, query_terms))[:limit])
    return chosen


def progress(turn: TurnState, items: list[FrontalItem]) -> list[FrontalItem]:
    """Items that changed state since the session's last turn (none in a new session)."""
    if turn.session is None:
        return []
    since = turn.session.updated_at
    return [i for i in items if i.updated_at > since and i.status not in OPEN]


def read(turn: TurnState) -> Callable[[], Awaitable[object]]:
    """This phase's store read: goals and work items (started ahead by phase 1 in graph mode)."""
    tenant = turn.tenant
    return lambda: call_store(turn, NAME, lambda: turn.stores.frontal_cortex.query(tenant, QUERY))


async def run(turn: TurnState) -> PhaseOutcome:
    """Load goals and work items; keep the most relevant of each kind."""
    found = await taken(turn.loading.get(NAME), read(turn))
    items = list_of(found, FrontalItem, NAME)
    chosen = select(turn, items)
    turn.frontal_items = chosen
    lines = [(i, describe) for i in chosen] + [(i, progress_line) for i in progress(turn, items)]
    fragments = [item_fragment(turn, item, line, rank) for rank, (item, line) in enumerate(lines)]
    turn.loads[Section.FRONTAL_CORTEX] = fragments
    count, tokens = loaded(fragments)
    open_count = sum(1 for i in items if i.status in OPEN)
    return PhaseOutcome(
        items_loaded=count,
        tokens_loaded=tokens,
        items_dropped=open_count - len(chosen),
        detail={
            "fetched": len(items),
            "shown": [stamp(i) for i in chosen],
            "changed": [change(i) for i in changed(turn, items)],
        },
    )


def stamp(item: FrontalItem) -> str:
    """``kind:id@vN``: which item, at which version, a turn showed."""
    return f"{item.kind.value}:{item.item_id}@v{item.version}"


def change(item: FrontalItem) -> dict[str, object]:
    """What the trace records of an item changed since the last turn."""
    return {
        "id": item.item_id,
        "kind": item.kind.value,
        "status": item.status.value,
        "progress": item.progress,
        "priority": item.priority,
        "version": item.version,
    }


def changed(turn: TurnState, items: list[FrontalItem]) -> list[FrontalItem]:
    """Items added or changed since the session's last turn (none in a new session)."""
    if turn.session is None:
        return []
    since = turn.session.updated_at
    return [i for i in items if i.updated_at > since]


def item_fragment(
    turn: TurnState, item: FrontalItem, line: Callable[[FrontalItem], str], rank: int
) -> Fragment:
    """The fragment of ``item``'s ``line`` at ``rank``, made once for the same item and rank."""
    return made_once(
        turn,
        item,
        (NAME, line.__name__, rank),
        lambda: fragment(
            turn,
            Section.FRONTAL_CORTEX,
            line(item),
            store="frontal_cortex",
            item_ids=(item.item_id,),
            phase=NAME,
            rank=rank,
            position=rank,
            score=item.priority,
            created_at=item.created_at,
            updated_at=item.updated_at,
        ),
    )


SPEC = PhaseSpec(
    name=NAME,
    run=run,
    budget_ms=100,
    needs=("turn_context",),
    reads=frozenset({"loading", "session"}),
    writes=frozenset({"frontal_items", "loads"}),
)

"""What fencing untrusted text and labelling its origin cost in tokens.

``python -m tests.benchmarks.fence_cost`` prints one JSON object:

- ``hostile``: over the injection suite's strings
  (:data:`tests.security.hostile.HOSTILE`), the tokens ``as_data`` adds to
  one string (mean, median, max) and how many it changed;
- ``plain``: the same over the demo's stored texts (memories, goals,
  scratch entries, messages): how many ``as_data`` changed, and the tokens
  it added;
- ``labels``: the tokens of each origin label a memory line can start with;
- ``demo_turn``: the demo turn's context with the fence and labels and
  without them (``as_data`` and the labels replaced by the identity in the
  modules that render fragments, fresh stores each): its tokens, the tokens
  of its fragments, and the tokens of ``to_messages()`` (which also carries
  the one framing line of the system message);
- ``framing``: the tokens of that framing line.

Token counts are cl100k (the default counter). Figures are measured, never
asserted.
"""

from __future__ import annotations

import json
import statistics
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any

import anyio

from prefrontal import Orchestrator, OrchestratorConfig, Stores, TurnRequest
from prefrontal.budgets.tokens import default_counter
from prefrontal.bundle import fence, messages
from prefrontal.demo import DEMO_AGENT, DEMO_USER, SAMPLE_INPUT, seed
from prefrontal.phases import conversation, frontal_cortex, origins, scratch_page, session
from prefrontal.stores.tenancy import Tenant
from tests.security.hostile import HOSTILE

NOW = datetime(2026, 11, 22, 10, 0, tzinfo=UTC)
COUNT = default_counter()
RENDERERS = (conversation, frontal_cortex, origins, scratch_page, session)


def added(texts: list[str]) -> dict[str, float]:
    """The tokens ``as_data`` adds to each of ``texts``, and how many it changed."""
    costs = [COUNT.count(fence.as_data(t)) - COUNT.count(t) for t in texts]
    changed = sum(fence.as_data(t) != t for t in texts)
    return {
        "strings": len(texts),
        "changed": changed,
        "mean": round(statistics.mean(costs), 2),
        "median": statistics.median(costs),
        "max": max(costs),
    }


def _identity(text: str, **_: object) -> str:
    return text


@contextmanager
def unfenced() -> Iterator[None]:
    """Rendering without the fence, the origin labels and the framing line."""
    saved: list[tuple[Any, str, Any]] = []

    def swap(module: Any, name: str, value: object) -> None:
        saved.append((module, name, getattr(module, name)))
        setattr(module, name, value)

    for module in RENDERERS:
        for name in ("as_data", "speaker_label"):
            if hasattr(module, name):
                swap(module, name, _identity)
    swap(conversation, "inline", _identity)
    swap(origins, "origin_label", lambda item: "")
    swap(session, "NOTE_LABELS", {})
    swap(messages, "DATA_FRAMING", "")
    try:
        yield
    finally:
        for module, name, value in reversed(saved):
            setattr(module, name, value)


async def demo_turn() -> dict[str, int]:
    """The demo turn's tokens: its context, its fragments, its messages."""
    stores = Stores.in_memory()
    await seed(stores)
    orch = Orchestrator(stores, OrchestratorConfig(deadline_ms=30_000), clock=lambda: NOW)
    request = TurnRequest(
        agent_id=DEMO_AGENT, user_id=DEMO_USER, session_id="cost", user_input=SAMPLE_INPUT
    )
    bundle = (await orch.start_turn(request)).bundle
    return {
        "context_tokens": bundle.total_tokens,
        "fragments": len(bundle.fragments),
        "fragment_tokens": sum(f.tokens for f in bundle.fragments),
        "message_tokens": sum(COUNT.count(m["content"]) for m in bundle.to_messages()),
    }


async def stored_texts() -> list[str]:
    """Every text the demo stores hold that a user, a tool or another user wrote."""
    stores = Stores.in_memory()
    await seed(stores)
    tenant = Tenant(agent_id=DEMO_AGENT, user_id=DEMO_USER)
    texts: list[str] = []
    for store in (stores.episodic, stores.semantic):
        texts.extend(hit.item.content for hit in await store.search(tenant, _everything()))
    texts.extend(t.content for t in await stores.conversation.recent(tenant, limit=200))
    texts.extend(e.content for e in await stores.scratch_page.active(tenant, now=NOW, limit=100))
    return texts


def _everything() -> Any:
    from prefrontal.stores.long_term import MemoryQuery

    return MemoryQuery(text="", limit=1_000, now=NOW)


async def measure() -> dict[str, Any]:
    fenced = await demo_turn()
    with unfenced():
        bare = await demo_turn()
    labels = ["(shared by maya) ", "(extracted) ", "(from calendar) ", "(tool) ", "(user) "]
    return {
        "hostile": added(list(HOSTILE)),
        "plain": added(await stored_texts()),
        "labels": {label.strip(): COUNT.count(label) for label in labels},
        "framing": COUNT.count(messages.DATA_FRAMING),
        "demo_turn": {"fenced": fenced, "bare": bare},
    }


def main(run: Callable[..., Any] = anyio.run) -> None:
    print(json.dumps(run(measure), indent=2))


if __name__ == "__main__":
    main()

"""What fencing untrusted text and labelling its origin cost in tokens.

``python -m tests.benchmarks.fence_cost`` prints one JSON object:

- ``hostile``: over the injection suite's strings
  (:data:`tests.security.hostile.HOSTILE`), the tokens ``as_data`` adds to
  one string (mean, median, max) and how many it changed;
- ``plain``: the same over the demo's stored texts (memories, goals,
  scratch entries, messages): how many ``as_data`` changed, and the tokens
  it added;
- ``locomo`` (with ``--locomo PATH``): the same over the turns of a LoCoMo file;
- ``labels``: the tokens of each origin label a memory line can start with;
- ``demo_turn``: the demo turn's context with the fence and labels and
  without them (``as_data`` and the labels replaced by the identity in the
  modules that render fragments, fresh stores each): its tokens, the tokens
  of its fragments, and the tokens of ``to_messages()`` (which also carries
  the one framing line of the system message);
- ``framing``: the tokens of that framing line;
- ``families``: per chat-template family (:data:`tests.security.templates.FORGED_TURNS`),
  the tokens a forged exchange takes as stored and as fenced;
- ``cpu``: the fence's CPU time in a demo turn (every ``as_data`` and
  ``speaker_label`` call the renderers make, timed), cold (the fence's
  caches emptied before the turn) and warm (the same turn again), median
  over ``--turns`` turns, beside the whole turn's median; and ``as_data``
  alone over the hostile strings, cold, per call.

Run it with ``PYTHONPATH=src`` and with the source of an older prefrontal
first on the path to compare: the same figures for both. Token counts are
cl100k (the default counter). Figures are measured, never asserted.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any

import anyio

from prefrontal import Orchestrator, OrchestratorConfig, Stores, TurnRequest
from prefrontal.budgets.tokens import default_counter
from prefrontal.bundle import fence, messages
from prefrontal.demo import DEMO_AGENT, DEMO_USER, SAMPLE_INPUT, content, seed
from prefrontal.evaluation.locomo import load
from prefrontal.phases import conversation, frontal_cortex, origins, scratch_page, session
from tests.security.hostile import HOSTILE
from tests.security.templates import FORGED_TURNS

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


def stored_texts() -> list[str]:
    """Every text of the demo that a user, the assistant or a tool wrote: goals, messages,
    the summary and decisions, episodes, facts and scratch entries."""
    return [
        *(text for _, title, detail, *_ in content.FRONTAL for text in (title, detail) if text),
        *(text for _, text in content.CONVERSATION),
        content.SUMMARY,
        *content.DECISIONS,
        *(text for *_, text in content.EPISODES),
        *(text for *_, text in content.FACTS),
        *(text for *_, text in content.OBSERVATIONS),
    ]


def locomo_texts(path: str) -> list[str]:
    """The text of every turn of a LoCoMo file."""
    dataset = load(path)
    return [turn.text for conversation in dataset.conversations for turn in conversation.turns]


def clear_caches() -> None:
    """Empty the fence's caches (those the running prefrontal has)."""
    fence._fenced.cache_clear()
    for module, name in (("prefrontal.bundle.confusables", "fold"),):
        try:
            cached = getattr(__import__(module, fromlist=[name]), name)
        except ImportError:
            continue
        cached.cache_clear()


@contextmanager
def timed_fence(spent: list[int]) -> Iterator[None]:
    """Every fence call of the renderers adds its CPU nanoseconds to ``spent[0]``."""
    saved: list[tuple[Any, str, Any]] = []
    for module in RENDERERS:
        for name in ("as_data", "speaker_label"):
            if hasattr(module, name):
                real = getattr(module, name)
                saved.append((module, name, real))
                setattr(module, name, _timing(real, spent))
    try:
        yield
    finally:
        for module, name, value in saved:
            setattr(module, name, value)


def _timing(real: Callable[..., str], spent: list[int]) -> Callable[..., str]:
    def timed(*args: Any, **kwargs: Any) -> str:
        began = time.process_time_ns()
        try:
            return real(*args, **kwargs)
        finally:
            spent[0] += time.process_time_ns() - began
            spent[1] += 1

    return timed


async def fence_cpu(turns: int) -> dict[str, float]:
    """The fence's CPU time per demo turn, cold and warm, and the turn's own (medians, µs)."""
    stores = Stores.in_memory()
    await seed(stores)
    orch = Orchestrator(stores, OrchestratorConfig(deadline_ms=30_000), clock=lambda: NOW)
    request = TurnRequest(
        agent_id=DEMO_AGENT, user_id=DEMO_USER, session_id="cost", user_input=SAMPLE_INPUT
    )
    await orch.start_turn(request)  # imports, the tokenizer, the stores' first reads
    cold: list[float] = []
    warm: list[float] = []
    whole: list[float] = []
    calls = 0
    for _ in range(turns):
        for caches_cleared, out in ((True, cold), (False, warm)):
            if caches_cleared:
                clear_caches()
            spent = [0, 0]
            with timed_fence(spent):
                began = time.process_time_ns()
                await orch.start_turn(request)
                took = time.process_time_ns() - began
            out.append(spent[0] / 1_000)
            calls = spent[1]
            if not caches_cleared:
                whole.append(took / 1_000)
    clear_caches()
    began = time.process_time_ns()
    for text in HOSTILE:
        fence.as_data(text)
    per_hostile = (time.process_time_ns() - began) / 1_000 / len(HOSTILE)
    return {
        "turns": turns,
        "fence_calls_per_turn": calls,
        "fence_us_per_turn_cold": round(statistics.median(cold), 1),
        "fence_us_per_turn_warm": round(statistics.median(warm), 1),
        "turn_us_warm": round(statistics.median(whole), 1),
        "as_data_us_per_hostile_string_cold": round(per_hostile, 2),
    }


def families() -> dict[str, dict[str, int]]:
    """Each family's forged exchange: its tokens stored and fenced."""
    return {
        family: {"stored": COUNT.count(text), "fenced": COUNT.count(fence.as_data(text))}
        for family, text in FORGED_TURNS.items()
    }


async def measure(locomo: str | None, turns: int) -> dict[str, Any]:
    fenced = await demo_turn()
    with unfenced():
        bare = await demo_turn()
    labels = ["(shared by maya) ", "(extracted) ", "(from calendar) ", "(tool) ", "(user) "]
    return {
        "hostile": added(list(HOSTILE)),
        "plain": added(stored_texts()),
        **({"locomo": added(locomo_texts(locomo))} if locomo else {}),
        "labels": {label.strip(): COUNT.count(label) for label in labels},
        "framing": COUNT.count(messages.DATA_FRAMING),
        "demo_turn": {"fenced": fenced, "bare": bare},
        "families": families(),
        "cpu": await fence_cpu(turns),
    }


def main(run: Callable[..., Any] = anyio.run) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--locomo", help="a LoCoMo file whose turns to measure too")
    parser.add_argument("--turns", type=int, default=30, help="demo turns timed for the CPU cost")
    arguments = parser.parse_args()
    print(json.dumps(run(measure, arguments.locomo, arguments.turns), indent=2))


if __name__ == "__main__":
    main()

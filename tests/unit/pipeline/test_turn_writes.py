"""How a turn's writes run (in one task where none can wait, at once where one can, in one limit).

And what its recall counts record.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import anyio
import pytest

from prefrontal import Section, Stores
from prefrontal.config import WritesConfig
from prefrontal.demo import DEMO_AGENT, DEMO_USER, seed
from prefrontal.demo.seed import memories
from prefrontal.orchestrator.writes import TurnWrites, in_process
from prefrontal.phases.finalize import TurnWrite
from prefrontal.stores.memory import InMemoryTraceStore
from prefrontal.stores.tenancy import Tenant
from prefrontal.stores.working_memory import SessionKey
from tests.conftest import FIXED_NOW, demo_request, orchestrator

pytestmark = pytest.mark.anyio
SESSION = SessionKey(agent_id="a", user_id="u", session_id="s")


class SlowTraces(InMemoryTraceStore):
    """An in-memory trace store whose subclass may wait: not the reference class."""


def written(
    kinds: list[str], kind: str, wait: Callable[[], Awaitable[None]] | None = None
) -> TurnWrite:
    """A write that notes its kind and the task it ran in (after awaiting ``wait``, if given)."""

    async def call() -> int:
        if wait is not None:
            await wait()
        kinds.append(f"{kind}@{anyio.get_current_task().id}")
        return 0

    return TurnWrite(kind, call)


def test_only_the_reference_in_memory_backends_are_in_process() -> None:
    """The in-memory set is in process; a subclass or another backend among them is not."""
    stores = Stores.in_memory()
    written_by_turns = [stores.traces, stores.working_memory, stores.episodic, stores.semantic]
    assert in_process(written_by_turns)
    assert not in_process([SlowTraces(), *written_by_turns[1:]])
    assert not in_process([object(), *written_by_turns])


async def test_in_process_writes_run_in_order_in_the_submitting_task() -> None:
    """Where no write can wait they run one after another in the caller's task, all counted."""
    ran: list[str] = []
    writes = TurnWrites(WritesConfig(), attempts=1, in_process=True)
    kinds = ["trace", "buffer", "recall:episodic"]
    await writes.submit("t1", SESSION, [written(ran, k) for k in kinds], inline_limit_s=5)
    here = anyio.get_current_task().id
    assert ran == [f"{kind}@{here}" for kind in kinds]
    assert (writes.stats.written, writes.stats.failed, writes.stats.pending) == (3, 0, 0)


async def test_writes_that_can_wait_run_at_once() -> None:
    """The first write waits for the second to have run: only concurrent writes both end."""
    ran: list[str] = []
    second_ran = anyio.Event()

    async def after_second() -> None:
        await second_ran.wait()

    async def second() -> int:
        second_ran.set()
        return 0

    writes = TurnWrites(WritesConfig(), attempts=1)
    batch = [written(ran, "trace", after_second), TurnWrite("buffer", second)]
    with anyio.fail_after(5):
        await writes.submit("t1", SESSION, batch, inline_limit_s=5)
    assert ran == [f"trace@{anyio.get_current_task().id}"]
    assert (writes.stats.written, writes.stats.failed) == (2, 0)


async def test_a_write_past_the_limit_fails_alone() -> None:
    """A write still running at the limit is counted failed; the one that ended is written."""
    ran: list[str] = []

    async def forever() -> None:
        await anyio.sleep_forever()

    writes = TurnWrites(WritesConfig(), attempts=1)
    batch = [written(ran, "trace", forever), written(ran, "buffer")]
    await writes.submit("t1", SESSION, batch, inline_limit_s=0.05)
    assert [r.split("@")[0] for r in ran] == ["buffer"]
    assert (writes.stats.written, writes.stats.failed, writes.stats.pending) == (1, 1, 0)


async def test_a_cancelled_caller_counts_the_unfinished_writes_failed_and_is_cancelled() -> None:
    """Cancelling ``submit`` run in the caller fails the writes it stopped and cancels the caller."""
    ran: list[str] = []
    started = anyio.Event()

    async def hang() -> None:
        started.set()
        await anyio.sleep_forever()

    writes = TurnWrites(WritesConfig(), attempts=1)
    batch = [written(ran, "buffer"), written(ran, "trace", hang)]
    returned: list[bool] = []

    async def caller() -> None:
        await writes.submit("t1", SESSION, batch, inline_limit_s=5)
        returned.append(True)

    async with anyio.create_task_group() as group:
        group.start_soon(caller)
        await started.wait()
        group.cancel_scope.cancel()
    assert not returned
    assert [r.split("@")[0] for r in ran] == ["buffer"]
    assert (writes.stats.written, writes.stats.failed, writes.stats.pending) == (1, 1, 0)
    assert not writes.pending("t1")


async def test_a_turn_counts_a_recall_of_each_memory_in_its_context_and_of_no_other() -> None:
    """After a turn, the items of its episodic and semantic fragments were recalled once each."""
    stores = Stores.in_memory()
    await seed(stores)
    result = await orchestrator(stores).start_turn(demo_request())
    shown = {
        section: {i for f in result.bundle.section(section) for i in f.provenance.item_ids}
        for section in (Section.EPISODIC, Section.SEMANTIC)
    }
    assert shown[Section.EPISODIC] and shown[Section.SEMANTIC]
    tenant = Tenant(agent_id=DEMO_AGENT, user_id=DEMO_USER)
    episodic, semantic = memories(DEMO_AGENT, DEMO_USER)
    seeded = {Section.EPISODIC: episodic, Section.SEMANTIC: semantic}
    for section, store in (
        (Section.EPISODIC, stores.episodic),
        (Section.SEMANTIC, stores.semantic),
    ):
        items = await store.get(tenant, [item.item_id for item in seeded[section]])
        assert len(items) == len(seeded[section])
        recalled = {item.item_id for item in items if item.recall_count}
        assert recalled == shown[section]
        assert {item.recall_count for item in items if item.recall_count} == {1}
        assert {item.last_recalled_at for item in items if item.recall_count} == {FIXED_NOW}

"""A trace's JSON document: a turn's ended trace written from its open trace's JSON and its
ending's, the very text ``model_dump_json`` gives, without serializing the context again."""

from __future__ import annotations

import pytest

from prefrontal import Orchestrator, Stores
from prefrontal.demo import seed
from prefrontal.stores.tenancy import Tenant
from prefrontal.traces import documents
from prefrontal.traces.models import TurnEnding, TurnTrace
from tests.conftest import FIXED_NOW, fixed_clock
from tests.unit.traces.helpers import request, run, small_trace


class CountingSerializer:
    """Stands in for the whole trace's serializer and counts its calls."""

    def __init__(self) -> None:
        self.calls = 0
        self.real = TurnTrace.__pydantic_serializer__

    def to_json(self, trace: TurnTrace) -> bytes:
        self.calls += 1
        document: bytes = self.real.to_json(trace)
        return document


@pytest.fixture
def counting(monkeypatch: pytest.MonkeyPatch) -> CountingSerializer:
    serializer = CountingSerializer()
    monkeypatch.setattr(documents, "_SERIALIZER", serializer)
    return serializer


def ending(reply: str = "Done.") -> TurnEnding:
    return TurnEnding(ended_at=FIXED_NOW, reply=reply, message_ids=("m1",))


def test_an_ended_copy_is_written_from_the_open_traces_json(counting: CountingSerializer) -> None:
    """The copy of an open trace with its ending set is the same text as serializing it whole,
    and the whole trace is serialized once, for the open trace only."""
    open_trace = small_trace("t-ended", 1, user_input='He said "ending": no')
    first = documents.serialize(open_trace)
    ended = open_trace.model_copy(update={"ending": ending()})
    second = documents.serialize(ended)
    later = ended.model_copy(update={"ending": ending("Done, with a step.")})
    third = documents.serialize(later)
    assert first == open_trace.model_dump_json().encode()
    assert second == ended.model_dump_json().encode()
    assert third == later.model_dump_json().encode()
    assert counting.calls == 1
    assert documents.parse(third) is later


def test_a_copy_that_changed_another_field_is_serialized_whole(
    counting: CountingSerializer,
) -> None:
    """A trace whose other fields are not the very objects last written (a forgotten message,
    another turn's trace, a rebuilt equal trace) is serialized whole."""
    open_trace = small_trace("t-forgot", 2, user_input="hello")
    documents.serialize(open_trace)
    forgotten = open_trace.model_copy(
        update={"ending": ending(), "user_input": None, "forgotten": ("m0",)}
    )
    rebuilt = TurnTrace.model_validate_json(open_trace.model_dump_json())
    rebuilt = rebuilt.model_copy(update={"ending": ending()})
    for trace in (forgotten, rebuilt):
        assert documents.serialize(trace) == trace.model_dump_json().encode()
    assert counting.calls == 3


def test_a_real_turns_stored_traces_are_their_json(counting: CountingSerializer) -> None:
    """A demo turn's open and ended traces, as the in-memory store keeps them, are each trace's
    ``model_dump_json``; ending the turn serialized no whole trace again."""

    async def turn() -> tuple[TurnTrace, TurnTrace, int]:
        stores = Stores.in_memory()
        await seed(stores)
        async with Orchestrator(stores, clock=fixed_clock) as orchestrator:
            result = await orchestrator.start_turn(request())
            await orchestrator.wait_background()
            before = counting.calls
            await orchestrator.end_turn(result, "The review is on Friday.")
            await orchestrator.wait_background()
            context = result.context
            tenant = Tenant(agent_id=context.agent_id, user_id=context.user_id)
            ended = await stores.traces.get(tenant, context.turn_id)
            assert ended is not None
            return result.trace, ended, counting.calls - before

    open_trace, ended, whole = run(turn)
    assert open_trace.ending is None and ended.ending is not None
    assert whole == 0
    assert documents.serialize(ended) == ended.model_dump_json().encode()
    assert documents.written_heads() <= documents.WRITTEN_HEADS

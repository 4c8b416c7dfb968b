"""``end_turn`` on every backend: what it writes, retries, cancellation, concurrency, the loop."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from datetime import timedelta
from pathlib import Path

import anyio
import pytest

from prefrontal import NotFoundError, Section, Stores
from prefrontal.errors import TurnConflictError
from prefrontal.exchange import Extracted, ToolCall
from prefrontal.orchestrator.retries import reply_hash
from prefrontal.stores import ConversationTurn, MemoryItem, MemoryQuery
from prefrontal.stores.conversation import Role
from tests.conftest import FIXED_NOW
from tests.endturn_support import (
    AGENT,
    BACKENDS,
    SESSION,
    TENANT,
    USER,
    ScriptedExtractor,
    ask,
    build,
    open_stores,
)

pytestmark = pytest.mark.anyio


@pytest.fixture(params=BACKENDS)
def stores(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Stores]:
    yield from open_stores(request.param, request, tmp_path)


async def test_end_turn_writes_the_exchange_as_messages_and_memories(stores: Stores) -> None:
    """The input and the reply become two messages and two episodic items of the session's thread."""
    orchestrator = build(stores)
    result = await orchestrator.start_turn(ask("Is the payment review on track?"))
    ended = await orchestrator.end_turn(result, "Yes: Lena signs it off on Friday.")
    turn_id = result.context.turn_id
    assert ended.written and ended.turn_id == turn_id
    messages = await stores.conversation.recent(TENANT, limit=10, session_id=SESSION)
    assert [(m.role, m.content) for m in messages] == [
        (Role.USER, "Is the payment review on track?"),
        (Role.ASSISTANT, "Yes: Lena signs it off on Friday."),
    ]
    assert tuple(m.item_id for m in messages) == ended.message_ids
    items = await stores.episodic.get(TENANT, list(ended.memory_ids))
    assert [(i.thread_id, i.position) for i in items] == [(SESSION, 0), (SESSION, 1)]
    assert all(i.metadata["turn_id"] == turn_id for i in items)
    assert [i.metadata["speaker"] for i in items] == ["user", "assistant"]


async def test_the_next_turn_shows_the_previous_exchange_not_a_status_line(stores: Stores) -> None:
    """The parent's input and reply are in the next bundle, and no internal id is in its text."""
    orchestrator = build(stores)
    first = await orchestrator.start_turn(ask("Is the payment review on track?"))
    await orchestrator.end_turn(first, "Yes: Lena signs it off on Friday.", outcome="answered")
    second = await orchestrator.start_turn(ask("What did I just ask?", first.context.turn_id))
    text = "\n".join(f.text for f in second.bundle.section(Section.CONVERSATION))
    assert "Is the payment review on track?" in text
    assert "Lena signs it off on Friday" in text
    assert "Outcome of the previous turn: answered." in text
    assert first.context.turn_id not in second.bundle.text
    assert "Previous turn" not in second.bundle.text


async def test_the_previous_reply_is_cut_to_its_budget(stores: Stores) -> None:
    """A long reply of the parent turn is shown cut to ``reply_tokens``, with an ellipsis."""
    orchestrator = build(stores, end_turn={"reply_tokens": 20})
    first = await orchestrator.start_turn(ask("Tell me everything."))
    await orchestrator.end_turn(first, " ".join(f"word{n}" for n in range(500)))
    second = await orchestrator.start_turn(ask("And then?", first.context.turn_id))
    replies = [f for f in second.bundle.section(Section.CONVERSATION) if f.role == "assistant"]
    assert len(replies) == 1
    assert replies[0].text.endswith("…")
    assert replies[0].tokens <= 30


async def test_a_retried_end_turn_writes_nothing_twice(stores: Stores) -> None:
    """A retry with the same reply returns ``written=False`` and the first call's ids; one copy
    is stored."""
    orchestrator = build(stores)
    result = await orchestrator.start_turn(ask("Book the room for Tuesday."))
    first = await orchestrator.end_turn(result, "Booked.")
    again = await orchestrator.end_turn(result, "Booked.")
    by_id = await orchestrator.end_turn(
        result.context.turn_id, "Booked.", agent_id=AGENT, user_id=USER
    )
    assert first.written and not again.written and not by_id.written
    assert again.message_ids == by_id.message_ids == first.message_ids
    messages = await stores.conversation.recent(TENANT, limit=10)
    assert [m.content for m in messages] == ["Book the room for Tuesday.", "Booked."]


async def test_a_retry_with_another_reply_is_a_conflict(stores: Stores) -> None:
    """Another reply for a turn already ended raises TurnConflictError naming both replies'
    hashes; the first reply stays, alone."""
    orchestrator = build(stores)
    result = await orchestrator.start_turn(ask("Book the room for Tuesday."))
    await orchestrator.end_turn(result, "Booked.")
    with pytest.raises(TurnConflictError) as raised:
        await orchestrator.end_turn(result, "Booked, again.")
    assert (raised.value.recorded, raised.value.offered) == (
        reply_hash("Booked."),
        reply_hash("Booked, again."),
    )
    assert reply_hash("Booked.") in str(raised.value)
    assert reply_hash("Booked, again.") in str(raised.value)
    with pytest.raises(TurnConflictError):
        await orchestrator.end_turn(
            result.context.turn_id, "Booked, a third time.", agent_id=AGENT, user_id=USER
        )
    messages = await stores.conversation.recent(TENANT, limit=10)
    assert [m.content for m in messages] == ["Book the room for Tuesday.", "Booked."]


async def test_an_unknown_turn_id_is_a_clear_error(stores: Stores) -> None:
    """A bare turn id that names no started turn of the tenant raises NotFoundError naming it."""
    orchestrator = build(stores)
    result = await orchestrator.start_turn(ask("Hello."))
    with pytest.raises(NotFoundError, match="no turn 'nope'"):
        await orchestrator.end_turn("nope", "Hi.", agent_id=AGENT, user_id=USER)
    with pytest.raises(NotFoundError, match=result.context.turn_id):
        await orchestrator.end_turn(result.context.turn_id, "Hi.", agent_id=AGENT, user_id="eve")


async def test_a_bare_turn_id_recovers_the_user_input(stores: Stores) -> None:
    """Ended by its id alone, a turn's user message is the input start_turn was given."""
    orchestrator = build(stores)
    result = await orchestrator.start_turn(ask("Where is the offsite?"))
    await orchestrator.end_turn(result.context.turn_id, "Lisbon.", agent_id=AGENT, user_id=USER)
    messages = await stores.conversation.recent(TENANT, limit=10)
    assert [m.content for m in messages] == ["Where is the offsite?", "Lisbon."]


async def test_tool_calls_become_episodic_items_and_buffer_items(stores: Stores) -> None:
    """Each tool call is a tool-result memory of the thread, and the next turn's buffer holds it."""
    orchestrator = build(stores)
    result = await orchestrator.start_turn(ask("What is the weather in Lisbon?"))
    call = ToolCall(name="weather", arguments={"city": "Lisbon"}, result="21 C, sunny")
    ended = await orchestrator.end_turn(result, "21 C and sunny.", tool_calls=[call])
    assert len(ended.memory_ids) == 3 and len(ended.message_ids) == 2
    tool = (await stores.episodic.get(TENANT, [ended.memory_ids[1]]))[0]
    assert tool.content == "weather(city='Lisbon') -> 21 C, sunny"
    assert tool.position == 1
    second = await orchestrator.start_turn(ask("Thanks.", result.context.turn_id))
    held = [i.item_id for i in second.working_memory.items]
    assert any(i.endswith(ended.memory_ids[1]) for i in held), held


async def test_the_end_turn_trace_is_kept_with_the_turn(stores: Stores) -> None:
    """The stored trace of the turn holds the ending: reply, ids and its timed steps."""
    orchestrator = build(stores)
    result = await orchestrator.start_turn(ask("Remind me of the launch date."))
    ended = await orchestrator.end_turn(result, "December 3.")
    trace = await stores.traces.get(TENANT, result.context.turn_id)
    assert trace is not None and trace.ending is not None
    assert trace.ending == ended.trace
    assert [s.name for s in trace.ending.steps] == [
        "exchange",
        "summary",
        "buffer",
        "consolidation",
    ]
    assert all(s.status.value == "ok" for s in trace.ending.steps)
    assert trace.ending.reply == "December 3."


async def test_cancelled_at_any_moment_end_turn_leaves_all_or_nothing(stores: Stores) -> None:
    """Cut off at growing delays, each call leaves the exchange whole or absent; a retry completes it."""
    orchestrator = build(stores)
    for number, delay in enumerate((0.0, 0.0002, 0.0005, 0.001, 0.002, 0.005, 0.01, 0.05)):
        result = await orchestrator.start_turn(ask(f"Question {number}?", session=f"s{number}"))
        with anyio.move_on_after(delay):
            await orchestrator.end_turn(result, f"Answer {number}.")
        # A COMMIT the cut-off call already sent may still land on the server: let it settle.
        await anyio.sleep(0.1)
        messages = await stores.conversation.recent(TENANT, limit=10, session_id=f"s{number}")
        trace = await stores.traces.get(TENANT, result.context.turn_id)
        assert trace is not None
        ended = trace.ending is not None
        assert len(messages) == (2 if ended else 0), (delay, messages)
        ids = [f"{result.context.turn_id}:user", f"{result.context.turn_id}:reply"]
        assert len(await stores.episodic.get(TENANT, ids)) == (2 if ended else 0)
        retry = await orchestrator.end_turn(result, f"Answer {number}.")
        assert retry.written is not ended
        messages = await stores.conversation.recent(TENANT, limit=10, session_id=f"s{number}")
        assert [m.content for m in messages] == [f"Question {number}?", f"Answer {number}."]


async def test_two_concurrent_end_turns_on_one_session_lose_nothing(stores: Stores) -> None:
    """Two turns of a session ended at once: four messages, four distinct thread positions."""
    orchestrator = build(stores)
    first = await orchestrator.start_turn(ask("First question?"))
    second = await orchestrator.start_turn(ask("Second question?"))
    async with anyio.create_task_group() as tg:
        tg.start_soon(orchestrator.end_turn, first, "First answer.")
        tg.start_soon(orchestrator.end_turn, second, "Second answer.")
    messages = await stores.conversation.recent(TENANT, limit=10, session_id=SESSION)
    assert sorted(m.content for m in messages) == sorted(
        ["First question?", "First answer.", "Second question?", "Second answer."]
    )
    items = await stores.episodic.get(TENANT, [m.item_id for m in messages])
    assert sorted(i.position or 0 for i in items) == [0, 1, 2, 3]


async def test_two_concurrent_calls_for_one_turn_write_it_once(stores: Stores) -> None:
    """Racing retries of one turn: exactly one is written, both report the same ids."""
    orchestrator = build(stores)
    result = await orchestrator.start_turn(ask("Only once?"))
    outcomes = []

    async def end() -> None:
        outcomes.append(await orchestrator.end_turn(result, "Only once."))

    async with anyio.create_task_group() as tg:
        for _ in range(3):
            tg.start_soon(end)
    assert sorted(o.written for o in outcomes) == [False, False, True]
    messages = await stores.conversation.recent(TENANT, limit=10)
    assert len(messages) == 2


async def test_a_sixty_turn_loop_recalls_a_fact_of_turn_three_at_turn_fifty_five(
    stores: Stores,
) -> None:
    """The fact stated in turn 3 is in turn 55's bundle, with provenance to turn 3."""
    fact = "My sister Ilse lives in Rotterdam and keeps bees."
    extractor = ScriptedExtractor(
        {fact: [Extracted(content="The user's sister Ilse keeps bees in Rotterdam.", key="sister")]}
    )
    inputs = [f"Let us plan item {n} of the launch checklist." for n in range(1, 61)]
    inputs[2] = fact
    inputs[54] = "Where does my sister Ilse keep her bees?"
    orchestrator = build(stores, extractor=extractor, conversation={"recent_turns": 10})
    turn_ids: list[str] = []
    bundles = {}
    async with orchestrator:
        parent: str | None = None
        for number, text in enumerate(inputs, start=1):
            result = await orchestrator.start_turn(ask(text, parent))
            bundles[number] = result.bundle
            await orchestrator.end_turn(result, f"Reply {number}: noted.")
            parent = result.context.turn_id
            turn_ids.append(parent)
        third = turn_ids[2]
        bundle = bundles[55]
        recalled = [
            f
            for f in bundle.fragments
            if f.section in (Section.EPISODIC, Section.SEMANTIC)
            and any(i.startswith(third) for i in f.provenance.item_ids)
        ]
        assert recalled, bundle.text
        assert any("Ilse" in f.text for f in recalled)
        recent = [f.provenance.item_ids[0] for f in bundle.section(Section.CONVERSATION)]
        assert not any(i.startswith(third) for i in recent)


async def test_an_extracted_fact_supersedes_its_earlier_version(stores: Stores) -> None:
    """A fact with the key of a live earlier one replaces it in search, with provenance to its turn."""
    extractor = ScriptedExtractor(
        {
            "I live in Porto.": [Extracted(content="The user lives in Porto.", key="home")],
            "I moved to Lisbon.": [Extracted(content="The user lives in Lisbon.", key="home")],
        }
    )
    async with build(stores, extractor=extractor) as orchestrator:
        first = await orchestrator.start_turn(ask("I live in Porto."))
        await orchestrator.end_turn(first, "Noted.")
        second = await orchestrator.start_turn(ask("I moved to Lisbon.", first.context.turn_id))
        await orchestrator.end_turn(second, "Noted.")
        await orchestrator.wait_background()
        found = await search_facts(stores, "user lives")
        assert [(i.content, i.metadata["turn_id"]) for i in found] == [
            ("The user lives in Lisbon.", second.context.turn_id)
        ]
        old = await stores.semantic.get(TENANT, [f"{first.context.turn_id}:fact:0"])
        assert old[0].superseded_by == found[0].item_id


async def test_a_failing_extractor_is_in_the_trace_and_nothing_else_fails(stores: Stores) -> None:
    """The extractor's error ends its step as failed in the turn's trace; the exchange is kept."""
    extractor = ScriptedExtractor({}, fail=["Remember this."])
    async with build(stores, extractor=extractor) as orchestrator:
        result = await orchestrator.start_turn(ask("Remember this."))
        ended = await orchestrator.end_turn(result, "I will try.")
        assert ended.written
        await orchestrator.wait_background()
        trace = await stores.traces.get(TENANT, result.context.turn_id)
        assert trace is not None and trace.ending is not None
        step = trace.ending.step("extraction")
        assert step.status.value == "failed"
        assert "cannot read 'Remember this.'" in step.errors[0].message


async def test_what_leaves_the_window_is_folded_into_the_rolling_summary(stores: Stores) -> None:
    """With a window of four messages, five exchanges fold the first six into the summary, once."""
    orchestrator = build(stores, conversation={"recent_turns": 4})
    parent: str | None = None
    for number in range(1, 6):
        result = await orchestrator.start_turn(ask(f"Question {number}. More words.", parent))
        await orchestrator.end_turn(result, f"Answer {number}. Details.")
        parent = result.context.turn_id
    summary = await stores.conversation.get_summary(TENANT)
    assert summary is not None
    assert summary.text.splitlines() == [
        "user: Question 1.",
        "assistant: Answer 1.",
        "user: Question 2.",
        "assistant: Answer 2.",
        "user: Question 3.",
        "assistant: Answer 3.",
    ]
    again = await orchestrator.end_turn(
        parent or "", "Answer 5. Details.", agent_id=AGENT, user_id=USER
    )
    assert not again.written
    assert await stores.conversation.get_summary(TENANT) == summary
    following = await orchestrator.start_turn(ask("And now?", parent))
    assert "Summary so far: user: Question 1." in following.bundle.text


async def test_any_async_callable_can_summarize(stores: Stores) -> None:
    """A summarizer of one's own takes the default's place; its text is cut to ``summary_tokens``."""

    async def shout(
        previous: str | None,
        messages: Sequence[ConversationTurn],
        max_tokens: int,
        count_tokens: Callable[[str], int],
    ) -> str:
        return " ".join([previous or "", *(m.content.upper() for m in messages)]).strip()

    orchestrator = build(stores, summarizer=shout, conversation={"recent_turns": 2})
    parent: str | None = None
    for number in range(1, 4):
        result = await orchestrator.start_turn(ask(f"question {number}", parent))
        await orchestrator.end_turn(result, f"answer {number}")
        parent = result.context.turn_id
    summary = await stores.conversation.get_summary(TENANT)
    assert summary is not None
    assert summary.text == "QUESTION 1 ANSWER 1 QUESTION 2 ANSWER 2"


async def search_facts(stores: Stores, text: str) -> list[MemoryItem]:
    """The live semantic items that match ``text``."""
    query = MemoryQuery(text=text, limit=10, now=FIXED_NOW + timedelta(days=1))
    return [hit.item for hit in await stores.semantic.search(TENANT, query)]

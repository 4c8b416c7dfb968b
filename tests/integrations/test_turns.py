"""What the integrations share: the system part split off, tool calls kept flat, one turn per input."""

from __future__ import annotations

from pathlib import Path

import pytest

from prefrontal.bundle.messages import Message
from prefrontal.integrations import FrameworkTurns, split, tool_call
from prefrontal.stores.records import MAX_LINE_CHARS
from tests.integrations import conversation as conv

pytestmark = pytest.mark.anyio


def test_only_system_messages_take_the_system_part() -> None:
    placed = split(
        [
            Message(role="system", content="You are Atlas."),
            Message(role="user", content="data: a memory"),
            Message(role="assistant", content="Earlier reply."),
            Message(role="tool", content="a tool's words"),
            Message(role="system", content="The clock."),
        ]
    )
    assert placed.instructions == "You are Atlas.\n\nThe clock."
    assert [(m["role"], m["content"]) for m in placed.messages] == [
        ("user", "data: a memory"),
        ("assistant", "Earlier reply."),
        ("user", "a tool's words"),
    ]


def test_tool_arguments_stay_flat_and_bounded() -> None:
    call = tool_call(
        "search",
        {"q": "porto", "filters": {"year": 2026}, "n": 3, "long": "x" * (MAX_LINE_CHARS + 5)},
    )
    assert call.arguments["q"] == "porto"
    assert call.arguments["n"] == 3
    assert call.arguments["filters"] == '{"year": 2026}'
    assert len(str(call.arguments["long"])) == MAX_LINE_CHARS


async def test_a_turn_starts_once_per_input_and_ends_once(tmp_path: Path) -> None:
    async with conv.orchestrator_on("memory", tmp_path) as orchestrator:
        turns = FrameworkTurns(orchestrator, agent_id=conv.AGENT)
        first = await turns.start(conv.USER, conv.SESSION, "Hello")
        again = await turns.start(conv.USER, conv.SESSION, "Hello")
        assert again is first
        assert turns.pending(conv.USER, conv.SESSION) is first
        ended = await turns.end(conv.USER, conv.SESSION, "Hi!")
        assert ended is not None and ended.written
        assert await turns.end(conv.USER, conv.SESSION, "Hi again!") is None
        second = await turns.start(conv.USER, conv.SESSION, "Hello")
        assert second.context.turn_id != first.context.turn_id


async def test_a_turn_renders_its_messages_once_however_many_hooks_ask(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every hook of one turn gets the bundle's messages from one rendering, per user input."""
    from prefrontal.bundle.models import ContextBundle

    rendered: list[str | None] = []
    original = ContextBundle.to_messages

    def counted(bundle: ContextBundle, user_input: str | None = None) -> list[Message]:
        rendered.append(user_input)
        return original(bundle, user_input)

    monkeypatch.setattr(ContextBundle, "to_messages", counted)
    async with conv.orchestrator_on("memory", tmp_path) as orchestrator:
        turns = FrameworkTurns(orchestrator, agent_id=conv.AGENT)
        with pytest.raises(LookupError):
            turns.messages(conv.USER, conv.SESSION, "Hello")
        result = await turns.start(conv.USER, conv.SESSION, "Hello")
        first = turns.messages(conv.USER, conv.SESSION, "Hello")
        again = turns.messages(conv.USER, conv.SESSION, "Hello")
        assert first == again == original(result.bundle, "Hello")
        assert first is not again
        assert turns.placed(conv.USER, conv.SESSION, "Hello") is turns.placed(
            conv.USER, conv.SESSION, "Hello"
        )
        assert (
            turns.placed(conv.USER, conv.SESSION).instructions
            == split(original(result.bundle)).instructions
        )
        assert rendered == ["Hello", None]
        await turns.end(conv.USER, conv.SESSION, "Hi!")
        await turns.start(conv.USER, conv.SESSION, "Again")
        turns.messages(conv.USER, conv.SESSION, "Again")
        assert rendered == ["Hello", None, "Again"]

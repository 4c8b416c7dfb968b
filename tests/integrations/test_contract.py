"""The three integrations keep prefrontal's contract: the owner's rules in the system seat, data outside it.

- LangGraph: the user fixed when the nodes were made is the only user a run
  reaches; a run configured for another user is refused before the model.
- The Agents SDK: a run that did not go through ``run_config()`` is refused
  before the model (it would carry neither the owner's instructions nor a
  fenced history).
- Each integration, with every string of :data:`tests.security.hostile.HOSTILE`
  stored through every write path (private, shared and spoken memories,
  goals, scratch entries, the summary) on every backend: the system seat the
  framework gives the model is exactly the owner's system message of a
  clean turn (its rules whole), and each string's marker reaches the model
  outside it.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import pytest

pytest.importorskip("langgraph")
pytest.importorskip("agents")
pytest.importorskip("pydantic_ai")

from agents import Agent as SdkAgent
from agents import Runner
from agents.testing.model import ScriptedModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from langchain_core.runnables import RunnableConfig
from openai.types.responses import ResponseOutputMessage, ResponseOutputText
from pydantic_ai import Agent as PydanticAgent
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, UserPromptPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from prefrontal import Stores
from prefrontal.demo import DEMO_AGENT, DEMO_USER, seed
from prefrontal.integrations.langgraph import PrefrontalTurn, UserMismatch
from prefrontal.integrations.openai_agents import PrefrontalSession, SessionNotPlaced
from prefrontal.integrations.pydantic_ai import PrefrontalDeps, PrefrontalMemory
from prefrontal.orchestrator import Orchestrator
from prefrontal.stores.tenancy import Tenant
from tests.security.hostile import HOSTILE
from tests.security.test_injection import clear, control_system, marker, orchestrator, store_batch

pytestmark = pytest.mark.anyio

BATCH = 48
OWNER_RULE = "never share customer data outside the workspace"
"""One of the demo owner's safety rules: it must be in every system seat."""


def said(text: str) -> list[ResponseOutputMessage]:
    content = [ResponseOutputText(type="output_text", text=text, annotations=[])]
    return [
        ResponseOutputMessage(
            id="msg", type="message", role="assistant", status="completed", content=content
        )
    ]


class Seen:
    """What one model call was given: the system seat and everything else, as text."""

    def __init__(self, system: str, others: Sequence[str]) -> None:
        self.system = system
        self.others = list(others)

    def check(self, owner_system: str, markers: Sequence[str], framework: str) -> None:
        """The system seat is the owner's, whole; every marker arrives outside it."""
        assert self.system == owner_system, framework
        assert OWNER_RULE in self.system, framework
        assert not [m for m in markers if m in self.system], framework
        missing = [m for m in markers if not any(m in text for text in self.others)]
        assert not missing, framework


def langgraph_seen(messages: Sequence[BaseMessage]) -> Seen:
    system = [str(m.content) for m in messages if isinstance(m, SystemMessage)]
    others = [str(m.content) for m in messages if not isinstance(m, SystemMessage)]
    return Seen("\n\n".join(system), others)


def pydantic_seen(messages: Sequence[ModelMessage], instructions: str | None) -> Seen:
    others: list[str] = []
    for message in messages:
        for part in message.parts:
            if isinstance(part, UserPromptPart):
                others.append(str(part.content))
            elif isinstance(part, TextPart):
                others.append(part.content)
    return Seen(instructions or "", others)


def markers_of(start: int, batch: Sequence[str]) -> list[str]:
    return [marker(start + k, p) for k in range(len(batch)) for p in "pskgo"] + [marker(start, "y")]


def batches() -> Iterator[tuple[int, tuple[str, ...]]]:
    for start in range(0, len(HOSTILE), BATCH):
        yield start, HOSTILE[start : start + BATCH]


async def run_langgraph(orch: Orchestrator, question: str, session: str) -> Seen:
    turn = PrefrontalTurn(orch, agent_id=DEMO_AGENT, user_id=DEMO_USER)
    state: dict[str, Any] = {"messages": [HumanMessage(question)]}
    config: RunnableConfig = {"configurable": {"thread_id": session}}
    update = await turn.before_model(state, config)
    seen = langgraph_seen(update["llm_input_messages"])
    await turn.after_model({"messages": [*state["messages"], AIMessage("Noted.")]}, config)
    return seen


async def run_agents(orch: Orchestrator, question: str, session_id: str) -> Seen:
    session = PrefrontalSession(orch, agent_id=DEMO_AGENT, user_id=DEMO_USER, session_id=session_id)
    model = ScriptedModel([said("Noted.")])
    agent = SdkAgent(name="atlas", instructions=session.instructions, model=model)
    await Runner.run(
        agent, question, session=session, run_config=session.run_config(tracing_disabled=True)
    )
    call = model.calls[0]
    others = [str(item.get("content")) for item in call.input if isinstance(item, dict)]
    return Seen(call.system_instructions or "", others)


async def run_pydantic(orch: Orchestrator, question: str, session: str) -> Seen:
    memory = PrefrontalMemory(orch, agent_id=DEMO_AGENT)
    calls: list[Seen] = []

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        calls.append(pydantic_seen(messages, info.instructions))
        return ModelResponse(parts=[TextPart("Noted.")])

    agent = PydanticAgent(
        FunctionModel(model), instructions=memory.instructions, capabilities=memory.capabilities()
    )
    await agent.run(question, deps=PrefrontalDeps(DEMO_USER, session))
    return calls[0]


RUNNERS = {"langgraph": run_langgraph, "agents": run_agents, "pydantic-ai": run_pydantic}


async def test_hostile_text_never_takes_the_system_seat(stores: Stores) -> None:
    """Every hostile string, stored on every path, reaches each framework's model outside the
    owner's system seat.

    Each batch is stored once and each framework runs a turn on it, in a session of its own.
    """
    await seed(stores)
    orch = orchestrator(stores)
    owner_system = await control_system(orch)
    checked = dict.fromkeys(RUNNERS, 0)
    for start, batch in batches():
        await store_batch(stores, orch, start, batch)
        markers = markers_of(start, batch)
        for framework, run in RUNNERS.items():
            seen = await run(orch, " ".join(markers), f"attack-{framework}-{start}")
            seen.check(owner_system, markers, framework)
            checked[framework] += len(markers)
        await clear(stores, start, batch)
    assert all(n >= 5 * len(HOSTILE) for n in checked.values()), checked


async def private_memories(orch: Orchestrator) -> None:
    """Maya and Sam each keep a private memory the other must never see."""
    await orch.memory.remember(
        Tenant(agent_id=DEMO_AGENT, user_id="sam"), "sam's locker code is qzsamsecret"
    )
    await orch.memory.remember(
        Tenant(agent_id=DEMO_AGENT, user_id=DEMO_USER), "maya's locker code is qzmayasecret"
    )


async def test_langgraph_refuses_a_run_configured_for_another_user() -> None:
    """Nodes fixed to Maya refuse a run whose configurable.user_id is Sam; Sam's memory stays out."""
    stores = Stores.in_memory()
    orch = orchestrator(stores)
    await private_memories(orch)
    turn = PrefrontalTurn(orch, agent_id=DEMO_AGENT, user_id=DEMO_USER)
    state = {"messages": [HumanMessage("What is the locker code?")]}
    hostile: RunnableConfig = {"configurable": {"thread_id": "t", "user_id": "sam"}}
    with pytest.raises(UserMismatch, match="sam"):
        await turn.before_model(state, hostile)
    assert turn.turns.last == {}
    same: RunnableConfig = {"configurable": {"thread_id": "t", "user_id": DEMO_USER}}
    update = await turn.before_model(state, same)
    given = " ".join(str(m.content) for m in update["llm_input_messages"])
    assert "qzmayasecret" in given
    assert "qzsamsecret" not in given


@pytest.mark.filterwarnings("ignore::langgraph.warnings.LangGraphDeprecatedSinceV10")
@pytest.mark.parametrize("seat", ["prompt", "pre_model_hook"])
async def test_a_react_agent_run_for_another_user_never_reaches_the_model(seat: str) -> None:
    """Through create_react_agent, either seat: a mismatched run fails before any model call."""
    from langgraph.prebuilt import create_react_agent

    from tests.integrations.test_langgraph_turns import RecordingModel

    stores = Stores.in_memory()
    orch = orchestrator(stores)
    await private_memories(orch)
    turn = PrefrontalTurn(orch, agent_id=DEMO_AGENT, user_id=DEMO_USER)
    model = RecordingModel(messages=iter([AIMessage("Noted.")]))
    model.seen = []
    placing: dict[str, Any] = (
        {"prompt": turn.prompt} if seat == "prompt" else {"pre_model_hook": turn.before_model}
    )
    agent = create_react_agent(model, [], post_model_hook=turn.after_model, **placing)
    hostile: RunnableConfig = {"configurable": {"thread_id": "t", "user_id": "sam"}}
    with pytest.raises(UserMismatch):
        await agent.ainvoke({"messages": [HumanMessage("What is the locker code?")]}, hostile)
    assert model.seen == []


async def test_an_agents_run_without_the_session_config_is_refused() -> None:
    """A run without run_config() fails before the model: no raw history, no missing rules."""
    stores = Stores.in_memory()
    await seed(stores)
    orch = orchestrator(stores)
    session = PrefrontalSession(orch, agent_id=DEMO_AGENT, user_id=DEMO_USER, session_id="s")
    model = ScriptedModel([said("first"), said("second")])
    agent = SdkAgent(name="atlas", instructions=session.instructions, model=model)
    first = await Runner.run(
        agent, "Remember qzfirst.", session=session, run_config=session.run_config()
    )
    assert first.final_output == "first"
    assert OWNER_RULE in (model.calls[0].system_instructions or "")
    with pytest.raises(SessionNotPlaced, match="run_config"):
        await Runner.run(agent, "And now?", session=session)
    assert len(model.calls) == 1

"""An OpenAI Agents SDK agent with prefrontal's memory, offline (the SDK's ScriptedModel).

Run: ``.venv/bin/python examples/openai_agents_session.py`` (needs ``prefrontal[openai-agents]``).

``PrefrontalSession`` is the run's session; its ``instructions`` give the
agent only the system part of the turn's messages, and its run config puts
the rest in the model's input. Each run's end records the exchange.
"""

from __future__ import annotations

import anyio
from agents import Agent, Runner
from agents.testing.model import ScriptedModel
from openai.types.responses import ResponseOutputMessage, ResponseOutputText

from prefrontal import Orchestrator, Stores
from prefrontal.demo import seed
from prefrontal.integrations.openai_agents import PrefrontalSession


def said(text: str) -> list[ResponseOutputMessage]:
    part = ResponseOutputText(type="output_text", text=text, annotations=[])
    return [
        ResponseOutputMessage(
            id="msg", type="message", role="assistant", status="completed", content=[part]
        )
    ]


async def main() -> None:
    stores = Stores.in_memory()
    await seed(stores)  # the demo agent: identity, goals, memories
    async with Orchestrator(stores) as orchestrator:
        session = PrefrontalSession(
            orchestrator, agent_id="atlas", user_id="maya", session_id="s-1"
        )
        model = ScriptedModel([said(f"Reply {n}.") for n in range(1, 4)])
        agent = Agent(name="atlas", instructions=session.instructions, model=model)
        for text in ("My sister's wedding is in Porto.", "I fly from Berlin.", "Where is it?"):
            result = await Runner.run(
                agent, text, session=session, run_config=session.run_config(tracing_disabled=True)
            )
            print(f"user: {text}\n  assistant: {result.final_output}")
        last = model.calls[-1]
        print(f"  last model input: {[(i['role'], i['content'][:60]) for i in last.input]}")
        print(f"session items: {len(await session.get_items())}")


if __name__ == "__main__":
    anyio.run(main)

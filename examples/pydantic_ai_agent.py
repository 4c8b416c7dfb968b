"""A pydantic-ai agent with prefrontal's memory, offline (pydantic-ai's FunctionModel).

Run: ``.venv/bin/python examples/pydantic_ai_agent.py`` (needs ``prefrontal[pydantic-ai]``).

``PrefrontalMemory.instructions`` gives the agent only the system part of
the turn's messages; its history processor puts the rest before the prompt;
after each run the exchange is recorded.
"""

from __future__ import annotations

import anyio
from pydantic_ai import Agent
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from prefrontal import Orchestrator, Stores
from prefrontal.demo import seed
from prefrontal.integrations.pydantic_ai import PrefrontalDeps, PrefrontalMemory


def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    print(
        f"  model sees {len(messages)} messages; instructions: {len(info.instructions or '')} chars"
    )
    return ModelResponse(parts=[TextPart(f"Reply {len(messages)}.")])


async def main() -> None:
    stores = Stores.in_memory()
    await seed(stores)  # the demo agent: identity, goals, memories
    async with Orchestrator(stores) as orchestrator:
        memory = PrefrontalMemory(orchestrator, agent_id="atlas")
        agent = Agent(
            FunctionModel(model),
            instructions=memory.instructions,
            capabilities=memory.capabilities(),
        )
        deps = PrefrontalDeps(user_id="maya", session_id="s-1")
        for text in ("My sister's wedding is in Porto.", "I fly from Berlin.", "Where is it?"):
            print(f"user: {text}")
            result = await agent.run(text, deps=deps)
            print(f"  assistant: {result.output}")


if __name__ == "__main__":
    anyio.run(main)

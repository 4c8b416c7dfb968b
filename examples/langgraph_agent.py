"""A LangGraph agent with prefrontal's memory, offline (langchain-core's fake chat model).

Run: ``.venv/bin/python examples/langgraph_agent.py`` (needs ``prefrontal[langgraph]``).

Three turns through ``create_react_agent``: ``PrefrontalTurn.prompt``
starts each turn and puts the bundle's messages in front of the model (in
the model's node), ``after_model`` ends it; ``PrefrontalStore`` is the graph's long-term store,
so a memory the graph stores is one prefrontal's turns recall.
"""

from __future__ import annotations

import warnings
from typing import Any

import anyio
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.runnables import RunnableConfig

from prefrontal import Orchestrator, Stores
from prefrontal.demo import seed
from prefrontal.integrations.langgraph import PrefrontalStore, PrefrontalTurn

with warnings.catch_warnings():  # create_react_agent: deprecated in LangGraph 1.x, kept until 2.0
    warnings.simplefilter("ignore")
    from langgraph.prebuilt import create_react_agent


class FakeModel(GenericFakeChatModel):
    """Scripted replies; prints what it was given."""

    def bind_tools(self, tools: Any, **kwargs: Any) -> FakeModel:
        return self

    last_input: list[Any] = []  # noqa: RUF012 (a pydantic field)

    async def _agenerate(self, messages: Any, *args: Any, **kwargs: Any) -> Any:
        print(f"  model input: {[(m.type, str(m.content)[:40]) for m in messages]}")
        self.last_input = list(messages)
        return await super()._agenerate(messages, *args, **kwargs)


async def main() -> None:
    stores = Stores.in_memory()
    await seed(stores)  # the demo agent: identity, goals, memories
    async with Orchestrator(stores) as orchestrator:
        turn = PrefrontalTurn(orchestrator, agent_id="atlas")
        store = PrefrontalStore(stores, agent_id="atlas", user_label=1)
        await store.aput(("memories", "maya"), "diet", {"text": "Maya is vegetarian"})
        replies = iter(AIMessage(content=f"Reply {n}.") for n in range(1, 4))
        model = FakeModel(messages=replies)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            agent = create_react_agent(
                model,
                [],
                prompt=turn.prompt,
                post_model_hook=turn.after_model,
                store=store,
            )
        config: RunnableConfig = {"configurable": {"thread_id": "s-1", "user_id": "maya"}}
        for text in (
            "My sister's wedding is in Porto.",
            "I fly from Berlin.",
            "Any vegetarian dinner ideas?",
        ):
            print(f"user: {text}")
            await agent.ainvoke({"messages": [HumanMessage(text)]}, config)
        recalled = any("Maya is vegetarian" in str(m.content) for m in model.last_input)
        print(f"the stored memory reached the model at turn 3: {recalled}")
        hits = await store.asearch(("memories", "maya"), query="vegetarian dinner")
        print(f"store search: {[hit.value for hit in hits]}")


if __name__ == "__main__":
    anyio.run(main)

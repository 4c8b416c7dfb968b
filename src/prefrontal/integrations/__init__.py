"""Prefrontal in the agent frameworks' own memory seats.

One module per framework, each under its optional extra:

- :mod:`prefrontal.integrations.langgraph` (extra ``langgraph``): a
  ``BaseStore`` over prefrontal's memory stores, and graph nodes that start
  a turn before the model and end it after;
- :mod:`prefrontal.integrations.langchain_agent` (extra ``langchain``):
  a ``create_agent`` middleware that runs the turn before the model call
  and records the exchange;
- :mod:`prefrontal.integrations.openai_agents` (extra ``openai-agents``):
  a ``Session`` over the conversation store and dynamic instructions;
  :mod:`~prefrontal.integrations.openai_agents_tools`, function tools;
- :mod:`prefrontal.integrations.pydantic_ai` (extra ``pydantic-ai``): an
  instructions function and a history processor fed by the turn's bundle.

:mod:`prefrontal.integrations.memory_tools` is what the frameworks' memory
tools for the model share (remember, recall, update a goal, with the MCP
tools' rights and fenced results); :mod:`prefrontal.integrations.blocking`
runs the turns of sync callers on one event loop thread of prefrontal's.

Importing one without its extra raises ``ImportError`` with a one-line hint.
What they share, for any other framework: :class:`FrameworkTurns` (one
started turn per session, reused by every model request of a run, ended
once) and :func:`split` (a turn's messages as a system part and the rest).
Every integration places what prefrontal assembled through
``bundle.to_messages()``: only its system messages take a system seat
(instructions); the rest arrive as input or history messages.
"""

from prefrontal.integrations.turns import FrameworkTurns, Placed, split, tool_call

__all__ = ["FrameworkTurns", "Placed", "split", "tool_call"]

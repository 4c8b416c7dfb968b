"""LangGraph: a ``BaseStore`` over prefrontal's memory, and nodes around the model.

- :class:`PrefrontalStore`: LangGraph's long-term memory seat
  (``graph.compile(store=...)``, ``create_react_agent(store=...)``) over one
  of prefrontal's memory stores, so what a graph stores is what prefrontal's
  turns recall, ranked by prefrontal;
- :class:`PrefrontalTurn`: a ``prompt`` (in the model's node), or a
  ``pre_model_hook`` (or node), that runs ``start_turn`` and puts the
  bundle's messages in front of the model, and a node after the model that
  calls ``end_turn`` with the reply and its tool calls; the ``_sync``
  methods for a graph run synchronously;
- :func:`memory_tools`: ``remember``, ``recall`` and ``update_goal`` as
  tools for the model (LangMem-style), with the MCP tools' rights.

Needs the ``langgraph`` extra (``pip install 'prefrontal[langgraph]'``).
"""

from prefrontal.integrations.extras import require

require("langgraph", "langgraph")

from prefrontal.integrations.langgraph.nodes import (  # noqa: E402
    PrefrontalState,
    PrefrontalTurn,
    UserMismatch,
)
from prefrontal.integrations.langgraph.store import PrefrontalStore  # noqa: E402
from prefrontal.integrations.langgraph.tools import memory_tools  # noqa: E402

__all__ = ["PrefrontalState", "PrefrontalStore", "PrefrontalTurn", "UserMismatch", "memory_tools"]

"""LangGraph: a ``BaseStore`` over prefrontal's memory, and nodes around the model.

- :class:`PrefrontalStore`: LangGraph's long-term memory seat
  (``graph.compile(store=...)``, ``create_react_agent(store=...)``) over one
  of prefrontal's memory stores, so what a graph stores is what prefrontal's
  turns recall, ranked by prefrontal;
- :class:`PrefrontalTurn`: a ``pre_model_hook`` (or node) that runs
  ``start_turn`` and puts the bundle's messages in front of the model, and a
  node after the model that calls ``end_turn`` with the reply and its tool
  calls.

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

__all__ = ["PrefrontalState", "PrefrontalStore", "PrefrontalTurn", "UserMismatch"]

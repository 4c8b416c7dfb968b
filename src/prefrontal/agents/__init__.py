"""Setting up and steering an agent: its profile, goals, pending actions and scratch page.

``AgentStateAPI(stores)`` (or ``orchestrator.agents``) writes the state that
phases 2, 3 and 7 of every turn read, with versioned saves that raise
:class:`~prefrontal.errors.ConflictError` rather than overwrite a newer
change; :mod:`prefrontal.agents.file` applies a declarative TOML agent file.
"""

from prefrontal.agents.api import PROFILE_FIELDS, AgentStateAPI

__all__ = ["PROFILE_FIELDS", "AgentStateAPI"]

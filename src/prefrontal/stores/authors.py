"""Who wrote a stored item: a key's name, or one of the names only prefrontal gives.

A goal, action, question or scratch entry records its ``author`` when it is
written, and again when another writer changes it; a memory records it in
``metadata["author"]``. The servers take it from the caller's grant (the
key's name), never from the request's body. Three names are reserved for
writers no key can pose as: :data:`OWNER` (the owner's agent file),
:data:`AGENT` (the agent's own tool calls, where no key is involved) and
:data:`PREFRONTAL` (what prefrontal drew itself). Neither a key's name nor a
memory's ``source`` from a caller may be one of them or another reserved
word (:func:`is_reserved`), so that no label a caller chooses reads as the
owner's, the agent's or prefrontal's.
"""

from __future__ import annotations

import unicodedata

__all__ = ["AGENT", "HOLDER", "OWNER", "PREFRONTAL", "RESERVED", "TRUSTED", "is_reserved"]

OWNER = "owner"
"""The owner's agent file (or the application, in process)."""
AGENT = "agent"
"""The agent itself: its MCP tool calls where no key is involved."""
PREFRONTAL = "prefrontal"
"""prefrontal itself: what it drew from a finished turn."""
HOLDER = "agent-file"
"""The user id that holds the agent's own items (``AGENT_HOLDER`` of :mod:`prefrontal.agents.api`):
a shared item it holds without an author was the owner's."""

TRUSTED = frozenset({OWNER, AGENT, PREFRONTAL})
"""Authors whose private items need no label: the agent's own side."""

RESERVED = frozenset(
    {
        OWNER,
        AGENT,
        PREFRONTAL,
        "agentfile",
        "assistant",
        "developer",
        "endturn",
        "extracted",
        "extraction",
        "operator",
        "system",
        "tool",
    }
)
"""Folded names no caller may give as an author or a memory's source."""


def _folded(name: str) -> str:
    """``name`` compatibility-folded, case-folded, with only its letters and digits."""
    plain = unicodedata.normalize("NFKC", name).casefold()
    return "".join(char for char in plain if char.isalnum())


def is_reserved(name: str) -> bool:
    """Whether ``name`` is (or folds to) a reserved author or source, in any case or spacing."""
    return _folded(name) in RESERVED

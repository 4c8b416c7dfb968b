"""Memory formation: what the agent lived through becomes long-term memory.

- :func:`consolidate`: a session's working-memory items that are going cold
  (untouched for half their lifetime) are grouped by source, summarized and
  promoted into episodic memory with provenance to their originals, which
  then leave the buffer. Crash-safe and additive (see :mod:`.consolidation`).
- :mod:`.planning`: its pure part (what is due, the groups, the ids, the
  promoted items), usable on its own.
"""

from prefrontal.formation.consolidation import DEFAULT_MAX_TOKENS, consolidate
from prefrontal.formation.planning import (
    Group,
    is_due,
    is_long_term_copy,
    lifetime_of,
    new_groups,
    originals,
    pending_groups,
    promoted_id,
    promoted_item,
)
from prefrontal.formation.report import ConsolidationReport, Promotion

__all__ = [
    "DEFAULT_MAX_TOKENS",
    "ConsolidationReport",
    "Group",
    "Promotion",
    "consolidate",
    "is_due",
    "is_long_term_copy",
    "lifetime_of",
    "new_groups",
    "originals",
    "pending_groups",
    "promoted_id",
    "promoted_item",
]

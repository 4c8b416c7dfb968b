"""Memory formation: what the agent lived through becomes long-term memory.

- :func:`consolidate`: a session's working-memory items that are going cold
  (untouched for half their lifetime) are grouped by source, summarized and
  promoted into episodic memory with provenance to their originals, which
  then leave the buffer. Crash-safe and additive (see :mod:`.consolidation`).
- :func:`episodic_keeper`: the keeper a session's buffer promotes a note
  with as its policy lets it go (evicted, faded, folded): one episodic item
  per note, written before the note leaves (see :mod:`.keeping`).
- :mod:`.planning`: its pure part (what is due, the groups, the ids, the
  promoted items), usable on its own.
"""

from prefrontal.formation.consolidation import DEFAULT_MAX_TOKENS, consolidate
from prefrontal.formation.keeping import EpisodicKeeper, episodic_keeper, open_session
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
    "EpisodicKeeper",
    "Group",
    "Promotion",
    "consolidate",
    "episodic_keeper",
    "is_due",
    "is_long_term_copy",
    "lifetime_of",
    "new_groups",
    "open_session",
    "originals",
    "pending_groups",
    "promoted_id",
    "promoted_item",
]

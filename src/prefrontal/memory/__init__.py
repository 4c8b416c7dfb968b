"""The memory API of seed 002: remember, recall, get, update, forget, and erase a user.

``MemoryAPI(stores)`` (or ``orchestrator.memory``) acts for one tenant at a
time over the episodic and semantic stores, with the tenancy and search of
phases 5 and 6; ``erase(agent_id, user_id)`` removes one user's records from
every store kind.
"""

from prefrontal.memory.api import MemoryAPI, new_ulid
from prefrontal.memory.erasure import ERASED_KINDS, ErasureReport, erase

__all__ = ["ERASED_KINDS", "ErasureReport", "MemoryAPI", "erase", "new_ulid"]

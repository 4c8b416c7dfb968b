"""Every error prefrontal raises, under one root.

The tree::

    PrefrontalError
    ├── ConfigurationError        misuse caught at construction time
    │   └── AgentFileError        an agent file that is not valid (names file, line, field)
    ├── BudgetError               a budget policy that cannot be satisfied
    │   └── BudgetBelowFloorError a turn's budget below what the owner's section needs
    ├── StoreError                a store call failed; carries ``store``
    │   ├── TransientStoreError   worth retrying (busy, timeout, lost connection)
    │   ├── ConflictError         optimistic concurrency: someone saved first
    │   └── ItemRejectedError     the store refused an item (too large, bad text)
    ├── WorkingMemoryError        the working-memory buffer refused an operation
    ├── NotFoundError             an id names nothing the caller may see (memory item, turn)
    ├── TurnConflictError         a turn ended again with another reply than it was ended with
    ├── OverloadedError           too many turns in flight: refused, retry after a moment
    └── DatasetError              an evaluation data file is not in its format

Request validation errors are pydantic's ``ValidationError``: they say which
field is wrong and why. A failing store never fails a turn: the runner records
the error on the phase and carries on.
"""

from __future__ import annotations


class PrefrontalError(Exception):
    """Root of every error raised by prefrontal."""


class ConfigurationError(PrefrontalError):
    """A component was built with settings that cannot work."""


class AgentFileError(ConfigurationError):
    """An agent file cannot be read or is invalid: one line naming the file, line and field."""


class BudgetError(PrefrontalError):
    """A budget policy cannot be satisfied (for example minimums above the total)."""


class BudgetBelowFloorError(BudgetError):
    """A caller chose a turn budget below its floor: what the owner's section needs.

    The owner's section (identity, rules, mode, capabilities, the clock, and
    the blocking goals) is pinned: it never shrinks to make room for data, so
    a budget that cannot hold it whole is refused rather than served without
    the rules. ``budget`` is the total asked for, ``floor`` the smallest total
    that holds the section (both in tokens of the turn's tokenizer).
    """

    def __init__(self, *, budget: int, floor: int) -> None:
        self.budget, self.floor = budget, floor
        super().__init__(
            f"a token budget of {budget} is below this agent's floor of {floor} tokens "
            f"(what its identity, rules, mode and blocking goals need): ask for at least {floor}"
        )


class StoreError(PrefrontalError):
    """A store call failed.

    ``store`` names the store kind (``"episodic"``, ``"working_memory"``, ...) so
    that traces and logs can say where the failure came from.
    """

    def __init__(self, message: str, *, store: str = "unknown") -> None:
        super().__init__(message)
        self.store = store


class TransientStoreError(StoreError):
    """A failure that may succeed on retry: busy database, dropped connection."""


class ErasedTenantError(StoreError):
    """The database refused a write for a user erased there (its erasure record is kept).

    Raised by any process over the same database, in the write's own
    transaction: a write of work begun before the erase, or after it, never
    brings the user back. ``Memory.readmit`` lifts the record.
    """


class ConflictError(StoreError):
    """A save lost an optimistic-concurrency race: reload and try again."""


class ItemRejectedError(StoreError):
    """The store refused an item: empty, oversized or malformed content."""


class WorkingMemoryError(PrefrontalError):
    """The working-memory buffer refused an operation."""


class NotFoundError(PrefrontalError):
    """An id names nothing the caller may see: an unknown memory item or turn."""


class TurnConflictError(PrefrontalError):
    """``end_turn`` was called again for a turn already ended, with another reply.

    A retry with the same reply is answered with what the first call wrote;
    a different reply is never dropped silently: this error names both
    replies' hashes (``recorded`` and ``offered``, BLAKE2b, 16 hex digits).
    """

    def __init__(self, turn_id: str, recorded: str, offered: str) -> None:
        self.turn_id, self.recorded, self.offered = turn_id, recorded, offered
        super().__init__(
            f"turn {turn_id!r} was ended with the reply {recorded}; "
            f"this call gives the reply {offered}: a turn has one reply"
        )


class OverloadedError(PrefrontalError):
    """The orchestrator runs as many turns as it admits and none ended in time: try again later.

    ``retry_after_s`` is a hint of when a slot may be free (HTTP: ``Retry-After``).
    """

    def __init__(self, message: str, *, retry_after_s: float = 1.0) -> None:
        super().__init__(message)
        self.retry_after_s = retry_after_s


class DatasetError(PrefrontalError):
    """An evaluation data file cannot be read, or is not in the format it is read as.

    The message names the file and, where it can, the entry that is wrong.
    """

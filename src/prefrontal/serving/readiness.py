"""Whether the stores answer, as the servers act on it: not ready, and turns refused with a wait.

A server whose database is unreachable still starts (as Kubernetes expects
of a pod: it is taken out of rotation by its readiness probe, not restarted
in a loop), says so once on stderr, answers ``/readyz`` with 503, and
refuses turns with :class:`StoresUnavailableError` (HTTP 503 with
``Retry-After``) instead of running them on stores that cannot answer.

:class:`Readiness` remembers the last check's outcome. A failed check (at
start-up, or by ``/readyz``) makes the stores *unavailable*; while they are,
:meth:`Readiness.gate` checks again at most once every ``recheck_s`` and
refuses the call until a check succeeds. While the stores are available,
the gate costs nothing: a turn whose store fails mid-way is degraded, as
the orchestrator decides.

:func:`agents_not_ready` names the agents whose turns cannot be ready for
the router whatever the stores do (an agent without a profile), and why:
``/readyz`` reports them.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Iterable

from prefrontal.errors import TransientStoreError
from prefrontal.stores.set import Stores
from prefrontal.stores.tenancy import Tenant

READINESS_USER = "prefrontal-readiness"
"""The user a profile is read for (a profile is the agent's, whoever reads it)."""

RECHECK_S = 1.0
"""How often, at most, a refused call checks the stores again (also the ``Retry-After``)."""


class StoresUnavailableError(TransientStoreError):
    """The stores did not answer the last readiness check: try again after ``retry_after_s``."""

    def __init__(self, message: str, *, retry_after_s: float = RECHECK_S) -> None:
        super().__init__(message, store="stores")
        self.retry_after_s = retry_after_s


def reason_of(error: BaseException) -> str:
    """One line saying why a check failed (the error's message, else its type)."""
    text = " ".join(str(error).split())
    return text or type(error).__name__


class Readiness:
    """The outcome of the last readiness check, and a gate for calls while it failed.

    ``check`` raises when the stores do not answer. ``clock`` is monotonic
    seconds (injected by tests).
    """

    def __init__(
        self,
        check: Callable[[], Awaitable[None]],
        *,
        recheck_s: float = RECHECK_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._check = check
        self._recheck_s = recheck_s
        self._clock = clock
        self._checked_at = float("-inf")
        self.reason: str | None = None
        """Why the last check failed; ``None`` when it succeeded (or none ran yet)."""

    @property
    def available(self) -> bool:
        """Whether the last check succeeded (true before any check)."""
        return self.reason is None

    async def check(self) -> str | None:
        """Check the stores now; the reason they are unavailable, or ``None``.

        Cancellation is never caught.
        """
        self._checked_at = self._clock()
        try:
            await self._check()
        except Exception as error:
            self.reason = reason_of(error)
        else:
            self.reason = None
        return self.reason

    async def gate(self) -> None:
        """Return at once while the stores are available; else check again, or refuse.

        Raises :class:`StoresUnavailableError` while the stores stay
        unavailable; checks again only when ``recheck_s`` has passed since
        the last check, so a burst of refused calls costs one check.
        """
        if self.reason is None:
            return
        if self._clock() - self._checked_at >= self._recheck_s:
            await self.check()
        if self.reason is not None:
            raise StoresUnavailableError(
                f"the memory stores are not reachable: {self.reason}",
                retry_after_s=self._recheck_s,
            )


NO_PROFILE = (
    "no profile: every turn runs without identity or rules and is not ready for the router "
    "(apply an agent file, or PUT /v1/agents/{agent_id}/profile)"
)
"""Why an agent without a profile cannot be ready (``{agent_id}`` is filled in)."""


async def agents_not_ready(stores: Stores, agent_ids: Iterable[str]) -> dict[str, str]:
    """The agents of ``agent_ids`` whose turns cannot be ready for the router, and why.

    Today that is an agent without a profile: its turns carry no identity
    or rules, so none is ready for the router.
    """
    reasons: dict[str, str] = {}
    for agent_id in sorted(set(agent_ids)):
        tenant = Tenant(agent_id=agent_id, user_id=READINESS_USER)
        if await stores.consciousness.get_profile(tenant) is None:
            reasons[agent_id] = NO_PROFILE.replace("{agent_id}", agent_id)
    return reasons

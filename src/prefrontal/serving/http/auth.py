"""Who is calling: the API key in ``Authorization: Bearer KEY`` (or ``X-API-Key: KEY``).

:func:`grant_of` finds the key's grant or refuses with 401; :func:`tenant_for`
turns a grant, the user a request names and the agent it may name into the
tenant to act for, or refuses with 403 when the key may not act for them.
:func:`require` refuses with 403 a key without the right an operation needs.
The messages say what is wrong with the caller's own request and nothing of
what else exists.
"""

from __future__ import annotations

from fastapi import HTTPException, Request

from prefrontal.agents.api import AGENT_HOLDER
from prefrontal.serving.echo import quoted
from prefrontal.serving.keys import KeyGrant, KeyRing, Right
from prefrontal.stores.tenancy import Tenant

CHALLENGE = {"WWW-Authenticate": 'Bearer realm="prefrontal"'}


def presented_key(request: Request) -> str | None:
    """The key the request carries, if any."""
    header = request.headers.get("authorization")
    if header:
        scheme, _, value = header.partition(" ")
        if scheme.lower() == "bearer" and value.strip():
            return value.strip()
        return None
    value = request.headers.get("x-api-key", "").strip()
    return value or None


def grant_of(request: Request, keys: KeyRing) -> KeyGrant:
    """The grant of the request's key; 401 when it has none or an unknown one."""
    key = presented_key(request)
    if key is None:
        raise HTTPException(
            401,
            "An API key is required: send it as 'Authorization: Bearer <key>'.",
            headers=CHALLENGE,
        )
    grant = keys.authenticate(key)
    if grant is None:
        raise HTTPException(401, "The API key is not valid.", headers=CHALLENGE)
    return grant


def tenant_for(grant: KeyGrant, user_id: str, agent_id: str | None = None) -> Tenant:
    """The tenant the request acts for; 403 when the key may not act for it."""
    agent = agent_id if agent_id is not None else grant.agent_id
    if agent != grant.agent_id:
        raise HTTPException(403, f"This API key may not act for agent {quoted(agent)}.")
    if user_id == AGENT_HOLDER or not grant.may_act_for(agent, user_id):
        raise HTTPException(403, f"This API key may not act for user {quoted(user_id)}.")
    return Tenant(agent_id=agent, user_id=user_id)


DOING = {
    Right.READ: "read this agent's memory",
    Right.WRITE: "write its users' memory",
    Right.WRITE_SHARED: "write shared memory",
    Right.ERASE: "erase a user",
    Right.ADMINISTER: "administer the agent",
}
"""What each right lets a key do, for the 403 that says it lacks it."""


def require(grant: KeyGrant, right: Right) -> None:
    """Return when ``grant`` holds ``right``; 403 naming the right otherwise."""
    if not grant.allows(right):
        raise HTTPException(
            403, f"This API key may not {DOING[right]}: it lacks the {right.value!r} right."
        )

"""Who is looking: a key with the administer right, by header or by a signed cookie.

A browser signs in once with a key (a form); the server answers with a
cookie holding the key's SHA-256 (never the key) and an HMAC of it under a
secret made when the viewer starts, so the cookie cannot be forged and is
worth nothing once the server restarts. The cookie is ``HttpOnly``,
``SameSite=Strict`` and ``Path=/ui``. ``Authorization: Bearer KEY`` (or
``X-API-Key``) works as well. A viewer without keys (``prefrontal ui`` on
loopback) lets everyone see every agent.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from dataclasses import dataclass

from fastapi import Request

from prefrontal.serving.keys import ANY_USER, KeyGrant, KeyRing
from prefrontal.serving.rights import Operation, needed

COOKIE = "prefrontal_ui"


@dataclass(frozen=True)
class Viewer:
    """Whose turns the page may show: one agent's, or every agent's (``None``)."""

    agent_id: str | None
    name: str
    users: tuple[str, ...] | None = None
    """The only users whose turns the viewer sees (``None``: every user of the agent)."""
    sees_context: bool = True
    """Whether the turn page shows the context as sent and the dropped items' text
    (:data:`~prefrontal.serving.rights.Operation.VIEW_CONTEXT`)."""


EVERYONE = Viewer(agent_id=None, name="local")


class Refused(Exception):
    """The request's key may not see the viewer (it lacks the administer right)."""


class Access:
    """Authenticates viewers against ``keys`` (``None``: no key needed, every agent shown)."""

    def __init__(self, keys: KeyRing | None) -> None:
        self.keys = keys
        self._secret = secrets.token_bytes(32)

    @property
    def open(self) -> bool:
        """True when no key is needed."""
        return self.keys is None

    def viewer(self, request: Request) -> Viewer | None:
        """The viewer of ``request``; ``None`` when it must sign in.

        ``Refused`` when its key lacks the administer right.
        """
        if self.keys is None:
            return EVERYONE
        grant = self._by_header(request) or self._by_cookie(request)
        if grant is None:
            return None
        if not grant.allows(needed(Operation.VIEW_TRACES)):
            raise Refused
        return Viewer(
            agent_id=grant.agent_id,
            name=grant.name,
            users=_users(grant),
            sees_context=_sees_context(grant),
        )

    def sign_in(self, key: str) -> tuple[Viewer, str] | None:
        """The viewer of ``key`` and the cookie value to set; ``None`` for an unknown key.

        ``Refused`` when the key lacks the administer right.
        """
        grant = None if self.keys is None else self.keys.authenticate(key)
        if grant is None:
            return None
        if not grant.allows(needed(Operation.VIEW_TRACES)):
            raise Refused
        viewer = Viewer(grant.agent_id, grant.name, _users(grant), _sees_context(grant))
        return viewer, f"{grant.sha256}.{self._mac(grant.sha256)}"

    def _by_header(self, request: Request) -> KeyGrant | None:
        # Here, not at the top: the HTTP application includes this package's router.
        from prefrontal.serving.http.auth import presented_key

        key = presented_key(request)
        return None if key is None or self.keys is None else self.keys.authenticate(key)

    def _by_cookie(self, request: Request) -> KeyGrant | None:
        value = request.cookies.get(COOKIE, "")
        digest, _, mac = value.partition(".")
        if not digest or not hmac.compare_digest(mac.encode(), self._mac(digest).encode()):
            return None
        grants = () if self.keys is None else self.keys.grants
        return next((g for g in grants if hmac.compare_digest(g.sha256, digest)), None)

    def _mac(self, digest: str) -> str:
        return hmac.new(self._secret, digest.encode(), hashlib.sha256).hexdigest()


def _users(grant: KeyGrant) -> tuple[str, ...] | None:
    return None if ANY_USER in grant.users else grant.users


def _sees_context(grant: KeyGrant) -> bool:
    return grant.allows(needed(Operation.VIEW_CONTEXT))

"""The viewer's one action, guarded: a synchronizer token bound to the viewer's session.

A page that offers an action (forget a memory) puts a token in its form: an
HMAC, under a secret made when the viewer starts, of the viewer's session
and the action. The session is the signed sign-in cookie's value (keys), or,
on the loopback viewer without keys, a random cookie of its own set by the
page that shows the form; both are ``HttpOnly`` and ``SameSite=Strict``. The
server checks the token on the ``POST`` (:meth:`FormTokens.valid`): a form
another site forges cannot read it, and its request carries no session
cookie at all, so it is refused (403). A request signed by an
``Authorization`` header is not a browser form; its session is the key's hash.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets

from fastapi import Request

from prefrontal.serving.ui.access import COOKIE

FORM_COOKIE = "prefrontal_ui_form"
"""The loopback viewer's session cookie (no keys, so no sign-in cookie)."""


class FormTokens:
    """Makes and checks the tokens of the viewer's forms."""

    def __init__(self) -> None:
        self._secret = secrets.token_bytes(32)

    def session(self, request: Request) -> str | None:
        """The session ``request`` belongs to: its sign-in cookie, else its form cookie, else
        the hash of an ``Authorization`` key; ``None`` without any."""
        for name in (COOKIE, FORM_COOKIE):
            value = request.cookies.get(name)
            if value:
                return f"{name}={value}"
        # Here, not at the top: the HTTP application includes this package's router.
        from prefrontal.serving.http.auth import presented_key

        key = presented_key(request)
        return None if key is None else "key=" + hashlib.sha256(key.encode()).hexdigest()

    def token(self, session: str, action: str) -> str:
        """The token of ``action`` (what the form does, to what) in ``session``."""
        message = f"{session}\x1f{action}".encode()
        return hmac.new(self._secret, message, hashlib.sha256).hexdigest()

    def valid(self, request: Request, action: str, presented: str) -> bool:
        """Whether ``presented`` is the token of ``action`` in ``request``'s session."""
        session = self.session(request)
        if session is None or not presented:
            return False
        return hmac.compare_digest(self.token(session, action), presented)


def new_session() -> str:
    """A fresh value for :data:`FORM_COOKIE`."""
    return secrets.token_urlsafe(32)

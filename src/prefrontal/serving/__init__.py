"""prefrontal behind a server: the HTTP API and the MCP tools, over one :class:`Service`.

The transports live in modules that need their extra: :mod:`prefrontal.serving.http`
(``prefrontal[server]``: FastAPI, uvicorn) and :mod:`prefrontal.serving.mcp_tools`
(``prefrontal[mcp]``: the official MCP SDK). This package itself needs neither:
API keys (:mod:`.keys`), the wire models (:mod:`.models`), session recall
(:mod:`.recall`) and the service.
"""

from prefrontal.serving.keys import KeyGrant, KeyRing, hash_key, new_key
from prefrontal.serving.recall import session_recall
from prefrontal.serving.service import Service

__all__ = ["KeyGrant", "KeyRing", "Service", "hash_key", "new_key", "session_recall"]

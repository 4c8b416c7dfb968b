"""API keys: each bound to one agent and the users it may act for.

A key is a random secret the client sends as ``Authorization: Bearer KEY``.
The server never holds the secret itself, only its SHA-256 (a key is 32
random bytes, so a fast hash is enough: there is nothing to guess), and
compares a presented key's hash with every stored one in constant time.

Keys come from a JSON document, read from a file (``--keys-file PATH`` or
``PREFRONTAL_API_KEYS_FILE``) or from the environment (``PREFRONTAL_API_KEYS``),
never from the command line, where they would show in process listings::

    {"keys": [
      {"name": "atlas-web", "sha256": "9f86d0...", "agent_id": "atlas",
       "users": ["maya", "sam"]},
      {"name": "atlas-ops", "sha256": "60303a...", "agent_id": "atlas", "users": ["*"]}
    ]}

``users`` lists the user ids the key may act for; ``"*"`` means every user
of its agent. A key never reaches another agent's data. ``rights`` lists what
the key may do there (:class:`Right`); a key without the field may read,
write its users' private memory and erase them, and nothing more: writing
agent-wide (shared) memory and administering the agent are granted by name.
``modes`` lists the modes a key without ``administer`` may still pick for a
turn (``{"mode": ...}``); by default it may use only the agent's current one.
Which operation needs which right is one table,
:data:`prefrontal.serving.rights.RULES`. A key's ``name`` is what the items it
writes say about their author, so it may not be a reserved author
(``owner``, ``agent``, ``prefrontal``...: :mod:`prefrontal.stores.authors`).
``prefrontal serve new-key`` makes a key and prints its entry.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
from collections.abc import Mapping, Sequence
from enum import StrEnum
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from prefrontal.errors import ConfigurationError
from prefrontal.files import write_private
from prefrontal.stores.authors import is_reserved
from prefrontal.stores.records import Label

ANY_USER = "*"
KEYS_ENV = "PREFRONTAL_API_KEYS"
KEYS_FILE_ENV = "PREFRONTAL_API_KEYS_FILE"
KEY_PREFIX = "pf_"


def hash_key(key: str) -> str:
    """The hex SHA-256 of ``key``: what a keys file stores."""
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


def new_key() -> str:
    """A fresh random key (``pf_`` and 43 URL-safe characters, 256 bits)."""
    return KEY_PREFIX + secrets.token_urlsafe(32)


class Right(StrEnum):
    """One thing a key may do for its agent and users."""

    READ = "read"
    """Run turns, recall and read memories, traces and the agent's state."""
    WRITE = "write"
    """Write, change and forget its users' private memories, goals and scratch entries;
    end turns."""
    WRITE_SHARED = "write_shared"
    """Write, change and forget agent-wide (shared) memories, goals and scratch entries,
    whoever wrote them."""
    ERASE = "erase"
    """Erase everything of one of its users."""
    ADMINISTER = "administer"
    """Read and set the agent's profile; start a turn in any of its modes; see every turn of
    the agent in the trace viewer."""


DEFAULT_RIGHTS: tuple[Right, ...] = (Right.READ, Right.WRITE, Right.ERASE)
"""What a key whose entry names no rights may do."""


class KeyGrant(BaseModel):
    """What one key may do: act for ``agent_id`` and the listed ``users``, with ``rights``."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = Field(min_length=1, max_length=200)
    """A label for logs; never the key."""
    sha256: str = Field(pattern=r"^[0-9a-f]{64}$")
    agent_id: str = Field(min_length=1, max_length=256)
    users: tuple[str, ...] = Field(min_length=1)
    rights: tuple[Right, ...] = Field(default=DEFAULT_RIGHTS, min_length=1)
    modes: tuple[Label, ...] = Field(default=(), max_length=64)
    """Modes the key may pick for a turn without the ``administer`` right."""

    @field_validator("name")
    @classmethod
    def _not_a_reserved_author(cls, name: str) -> str:
        if is_reserved(name):
            raise ValueError(
                f"{name!r} is reserved for the owner, the agent or prefrontal: rename the key"
            )
        return name

    @field_validator("users")
    @classmethod
    def _no_blank_user(cls, users: tuple[str, ...]) -> tuple[str, ...]:
        if any(not user.strip() for user in users):
            raise ValueError("users must not contain an empty id")
        return users

    def may_act_for(self, agent_id: str, user_id: str) -> bool:
        """True when this key may act for ``user_id`` of ``agent_id``."""
        if agent_id != self.agent_id:
            return False
        return ANY_USER in self.users or user_id in self.users

    def allows(self, right: Right) -> bool:
        """True when this key was granted ``right``."""
        return right in self.rights


class _KeysDocument(BaseModel):
    model_config = ConfigDict(extra="forbid")

    keys: tuple[KeyGrant, ...]


class KeyRing:
    """The configured keys, by hash. :meth:`authenticate` finds a key's grant."""

    def __init__(self, grants: Sequence[KeyGrant]) -> None:
        hashes = [grant.sha256 for grant in grants]
        if len(set(hashes)) != len(hashes):
            raise ConfigurationError("the keys file lists the same key twice")
        self._grants = tuple(grants)

    def __len__(self) -> int:
        return len(self._grants)

    @property
    def grants(self) -> tuple[KeyGrant, ...]:
        """Every configured grant."""
        return self._grants

    def authenticate(self, key: str) -> KeyGrant | None:
        """The grant of ``key``, or ``None``; every stored hash is compared, in constant time."""
        presented = hash_key(key).encode("ascii")
        found: KeyGrant | None = None
        for grant in self._grants:
            if hmac.compare_digest(presented, grant.sha256.encode("ascii")):
                found = grant
        return found

    @classmethod
    def parse(cls, document: str, *, origin: str) -> KeyRing:
        """The keys in a JSON ``document``; ``origin`` names where it came from in errors."""
        try:
            parsed = _KeysDocument.model_validate_json(document)
        except ValidationError as error:
            first = error.errors()[0]
            where = ".".join(str(part) for part in first["loc"])
            raise ConfigurationError(
                f"{origin} is not a keys document: {where}: {first['msg']}"
            ) from None
        return cls(parsed.keys)

    @classmethod
    def load(cls, path: Path | None = None, environ: Mapping[str, str] | None = None) -> KeyRing:
        """The keys from ``path``, else ``PREFRONTAL_API_KEYS_FILE``, else ``PREFRONTAL_API_KEYS``.

        Returns an empty ring when none is set.
        """
        env = os.environ if environ is None else environ
        file = path or (Path(env[KEYS_FILE_ENV]) if env.get(KEYS_FILE_ENV) else None)
        if file is not None:
            try:
                text = file.read_text(encoding="utf-8")
            except OSError as error:
                raise ConfigurationError(
                    f"cannot read the keys file {file}: {error.strerror}"
                ) from None
            return cls.parse(text, origin=str(file))
        if env.get(KEYS_ENV):
            return cls.parse(env[KEYS_ENV], origin=KEYS_ENV)
        return cls(())


def key_entry(
    key: str,
    *,
    name: str,
    agent_id: str,
    users: Sequence[str],
    rights: Sequence[Right] = DEFAULT_RIGHTS,
    modes: Sequence[str] = (),
) -> str:
    """The keys-file entry (JSON) for ``key``: its hash, never the key.

    ConfigurationError when the grant is not valid (a reserved name, no user).
    """
    try:
        grant = KeyGrant(
            name=name,
            sha256=hash_key(key),
            agent_id=agent_id,
            users=tuple(users),
            rights=tuple(rights),
            modes=tuple(modes),
        )
    except ValidationError as error:
        first = error.errors()[0]
        where = ".".join(str(part) for part in first["loc"])
        raise ConfigurationError(f"the key's {where}: {first['msg']}") from None
    return json.dumps(grant.model_dump(mode="json"))


def append_entry(path: Path, entry: str) -> None:
    """Add ``entry`` (from :func:`key_entry`) to the keys file ``path``, creating it if missing.

    The file is read as a keys document first (ConfigurationError if it is
    not one), and replaced whole, so that it is never left half written.
    """
    document: dict[str, Any] = {"keys": []}
    if path.exists():
        KeyRing.load(path, environ={})
        document = json.loads(path.read_text(encoding="utf-8"))
    document["keys"].append(json.loads(entry))
    write_private(path, json.dumps(document, indent=2) + "\n")

"""Short handles: how the context names a goal, action, question or scratch entry.

Every item the context shows carries a handle such as ``#482913``: six
digits worked out from who holds the item and its id, so that it is the
same on every turn and on every server, needs no storage, and costs three
tokens (cl100k) where a ULID costs about fifteen. The tools and the HTTP
routes take a handle wherever they take an item's id.

Six digits leave room for collisions: among the items one user sees, two
may (rarely) share a handle. :func:`pick` then refuses the handle and says
to use the item's id, which every tool result and API response carries.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from typing import Protocol, TypeVar

from prefrontal.errors import NotFoundError

DIGITS = 6
_SPACE = 10**DIGITS
HANDLE = re.compile(rf"^#?([0-9]{{{DIGITS}}})$")
"""A handle as a caller may write it: ``#482913`` or ``482913``."""


class Held(Protocol):
    """What a handle is worked out from."""

    @property
    def user_id(self) -> str: ...

    @property
    def item_id(self) -> str: ...


H = TypeVar("H", bound=Held)


def handle_of(item: Held) -> str:
    """``#`` and six digits: ``item``'s handle, the same wherever and whenever it is worked out."""
    digest = hashlib.blake2b(f"{item.user_id}\x1f{item.item_id}".encode(), digest_size=8)
    return f"#{int.from_bytes(digest.digest(), 'big') % _SPACE:0{DIGITS}d}"


def as_handle(reference: str) -> str | None:
    """``reference`` written as a handle (``#482913``), or ``None`` when it is not one."""
    found = HANDLE.match(reference.strip())
    return None if found is None else f"#{found.group(1)}"


def pick(items: Iterable[H], handle: str, what: str) -> H:
    """The one item of ``items`` whose handle is ``handle``.

    :class:`NotFoundError` when none has it, or when two do (then the
    message says to use the item's id instead).
    """
    found = only_with_handle(items, handle)
    if found is None:
        raise NotFoundError(f"no {what} {handle} visible to this user")
    return found


def only_with_handle(items: Iterable[H], handle: str) -> H | None:
    """The one item of ``items`` whose handle is ``handle``, or ``None`` when none has it.

    :class:`NotFoundError` when two do: the message says to use the item's id instead.
    """
    found = [item for item in items if handle_of(item) == handle]
    if len(found) > 1:
        raise NotFoundError(
            f"{len(found)} items share the handle {handle}: use the item_id instead"
        )
    return found[0] if found else None

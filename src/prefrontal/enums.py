"""``FastStrEnum``: a string enum whose members' ``value`` is read without Python code.

On CPython 3.11 an enum member's ``value`` is a descriptor written in Python
(``enum.property``), two Python calls per read. A turn reads some two hundred and fifty
values: the buffer's items' source and lifetime each time pydantic writes an item's JSON
(pydantic's enum serializer reads ``value``), a refresh's outcomes, the goals' kinds, the
phases' statuses. :class:`FastStrEnum` reads ``_value_`` (what ``Enum.value`` returns)
through a property whose getter is :func:`operator.attrgetter`, in C: the same value,
about a seventh of the instructions.

Everything else is :class:`enum.StrEnum`'s: members, lookup by value or name, pickling,
``str()``, comparison with strings, pydantic's validation and serialization. The class
defines no member, so the enums deriving from it may.
"""

from __future__ import annotations

from enum import StrEnum
from operator import attrgetter
from typing import TYPE_CHECKING

__all__ = ["FastStrEnum"]


class FastStrEnum(StrEnum):
    """A :class:`enum.StrEnum` whose ``value`` is read in C (the module docstring)."""

    if TYPE_CHECKING:

        @property
        def value(self) -> str:
            """The member's value (its string)."""
            ...

    else:
        value = property(attrgetter("_value_"), doc="The member's value (its string).")

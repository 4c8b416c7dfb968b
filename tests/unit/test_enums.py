"""``FastStrEnum``: its members read ``value`` in C and behave as ``StrEnum`` members do."""

from __future__ import annotations

import enum
import pickle
from enum import StrEnum

import pytest
from pydantic import BaseModel

from prefrontal.buffer.models import ItemSource, Lifetime
from prefrontal.buffer.policies import EvictionReason
from prefrontal.buffer.snapshot import Outcome
from prefrontal.bundle.fragments import Section
from prefrontal.enums import FastStrEnum
from prefrontal.stores.conversation import Role
from prefrontal.stores.frontal_cortex import FrontalKind, FrontalStatus, Owner
from prefrontal.stores.scratch_page import ScratchKind
from prefrontal.traces.models import PhaseStatus, RecallMode, TurnStatus

ENUMS: tuple[type[FastStrEnum], ...] = (
    ItemSource,
    Lifetime,
    EvictionReason,
    Outcome,
    Section,
    Role,
    FrontalKind,
    FrontalStatus,
    Owner,
    ScratchKind,
    PhaseStatus,
    RecallMode,
    TurnStatus,
)
_ENUM_VALUE = enum.Enum.__dict__["value"]
"""``Enum.value``, the descriptor ``FastStrEnum`` stands in for."""


@pytest.mark.parametrize("kind", ENUMS, ids=lambda kind: kind.__name__)
def test_every_member_reads_the_value_enum_gives(kind: type[FastStrEnum]) -> None:
    """``value`` is what ``Enum.value`` gives, the member's string, for every member."""
    assert issubclass(kind, StrEnum) and list(kind)
    for member in kind:
        expected = _ENUM_VALUE.__get__(member, kind)
        assert member.value == expected == str(member) == member
        assert type(member.value) is str
        assert kind(member.value) is member is kind[member.name]
        assert pickle.loads(pickle.dumps(member)) is member


class _Plain(StrEnum):
    FIRST = "first"
    SECOND = "second"


class _Fast(FastStrEnum):
    FIRST = "first"
    SECOND = "second"


class _WithPlain(BaseModel):
    kind: _Plain
    kinds: tuple[_Plain, ...] = ()


class _WithFast(BaseModel):
    kind: _Fast
    kinds: tuple[_Fast, ...] = ()


def test_pydantic_validates_and_writes_it_as_a_plain_str_enum() -> None:
    """The same JSON and Python dumps as ``StrEnum``'s, read back to the very members; a value
    that is no member is refused by both."""
    for first, second in (("first", "second"), ("second", "first")):
        plain = _WithPlain.model_validate({"kind": first, "kinds": [second, first]})
        fast = _WithFast.model_validate({"kind": first, "kinds": [second, first]})
        assert fast.model_dump_json() == plain.model_dump_json()
        assert fast.model_dump(mode="json") == plain.model_dump(mode="json")
        assert _WithFast.model_validate_json(fast.model_dump_json()) == fast
        assert fast.kind is _Fast(first) and fast.kinds == (_Fast(second), _Fast(first))
    for model in (_WithPlain, _WithFast):
        with pytest.raises(ValueError, match="kind"):
            model.model_validate({"kind": "third"})


def test_the_value_is_read_without_enum_property() -> None:
    """A member's ``value`` is the base class's C property, not ``enum.property``."""
    descriptor = next(
        klass.__dict__["value"] for klass in Section.__mro__ if "value" in klass.__dict__
    )
    assert type(descriptor) is property
    assert descriptor is FastStrEnum.__dict__["value"]

"""Models with the generic attribute lookup read exactly what pydantic's lookup reads.

:mod:`prefrontal.model_reads` gives prefrontal's model classes CPython's
generic attribute lookup (the one the interpreter specialises) when
pydantic's ``__getattr__`` could serve nothing; these tests hold it to
that: the hot models have it, a field, a property, a method and a missing
name read the same as on a model with pydantic's lookup, and a class whose
``__getattr__`` serves something (private attributes, extra fields, its
own) keeps pydantic's.
"""

from __future__ import annotations

import os
import platform
import subprocess
import sys
from typing import Any

import anyio
import pytest
from pydantic import BaseModel, ConfigDict, PrivateAttr

from prefrontal.buffer import BufferConfig, BufferItem, NewItem
from prefrontal.bundle.models import ContextBundle, Fragment, Provenance
from prefrontal.model_reads import FastReads, read_fast, reads_fast
from prefrontal.stores.long_term import MemoryItem, ScoredMemory
from prefrontal.stores.tenancy import Tenant
from prefrontal.traces.models import TurnTrace
from prefrontal.turn import TurnResult

CPYTHON = platform.python_implementation() == "CPython"


@pytest.mark.skipif(not CPYTHON, reason="the generic lookup is given on CPython only")
@pytest.mark.parametrize(
    "cls",
    [
        Fragment,
        Provenance,
        ContextBundle,
        MemoryItem,
        ScoredMemory,
        BufferItem,
        NewItem,
        BufferConfig,
        Tenant,
        TurnTrace,
        TurnResult,
    ],
)
def test_the_models_a_turn_reads_most_have_the_generic_lookup(cls: type) -> None:
    assert reads_fast(cls)


class Plain(BaseModel):
    """A model with pydantic's lookup, to compare with."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    count: int = 0

    @property
    def twice(self) -> int:
        return 2 * self.count

    def named(self) -> str:
        return f"{self.name}:{self.count}"

    @property
    def broken(self) -> int:
        raise AttributeError("inside the property")


class Fast(FastReads):
    """The same model, made a :class:`FastReads`."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    count: int = 0

    @property
    def twice(self) -> int:
        return 2 * self.count

    def named(self) -> str:
        return f"{self.name}:{self.count}"

    @property
    def broken(self) -> int:
        raise AttributeError("inside the property")


def _read(model: BaseModel, name: str) -> tuple[str, Any]:
    """What reading ``name`` on ``model`` gives: its value, or its error's type and message."""
    try:
        value = getattr(model, name)
    except AttributeError as error:
        return "raised", str(error).replace(type(model).__name__, "Model")
    return "gave", value() if callable(value) else value


@pytest.mark.parametrize(
    "name", ["name", "count", "twice", "named", "broken", "missing", "__pydantic_private__"]
)
def test_a_fast_model_reads_what_pydantic_reads(name: str) -> None:
    fast, plain = Fast(name="a", count=3), Plain(name="a", count=3)
    assert reads_fast(Fast) == CPYTHON
    assert not reads_fast(Plain)
    assert _read(fast, name) == _read(plain, name)
    assert fast.model_dump() == plain.model_dump()
    assert fast.model_copy(update={"count": 4}).count == 4
    assert fast == Fast(name="a", count=3)


def test_a_subclass_of_a_fast_model_is_fast_too() -> None:
    class Sub(Fast):
        extra_field: str = "x"

    assert reads_fast(Sub) == CPYTHON
    assert Sub(name="b").extra_field == "x"


def test_a_model_whose_getattr_serves_something_keeps_pydantics_lookup() -> None:
    class Private(FastReads):
        _secret: int = PrivateAttr(default=7)

    class Extra(FastReads):
        model_config = ConfigDict(extra="allow")

    class Own(FastReads):
        def __getattr__(self, name: str) -> Any:
            return f"asked for {name}"

    assert not reads_fast(Private) and Private()._secret == 7
    assert not reads_fast(Extra) and Extra(colour="red").colour == "red"  # type: ignore[attr-defined]
    assert not reads_fast(Own) and Own().anything == "asked for anything"
    assert read_fast(Private) is Private and not reads_fast(Private)


def test_a_class_given_a_getattr_later_gets_pydantics_lookup_back() -> None:
    class Later(FastReads):
        name: str = "n"

    assert reads_fast(Later) == CPYTHON
    type.__setattr__(Later, "__getattr__", lambda self, name: "late")
    assert not reads_fast(Later)
    assert Later().name == "n" and Later().nothing == "late"  # type: ignore[attr-defined]


def test_a_mixin_with_a_lookup_of_its_own_keeps_pydantics_lookup() -> None:
    class Lookup:
        def __getattr__(self, name: str) -> Any:
            return f"mixed {name}"

    class Mixed(FastReads, Lookup):
        name: str = "n"

    assert not reads_fast(Mixed)
    assert Mixed().name == "n"


def _fast_models() -> list[type[BaseModel]]:
    """Every prefrontal model class with the generic lookup, the subclasses of each too."""
    found: list[type[BaseModel]] = []
    pending: list[type[BaseModel]] = [FastReads]
    while pending:
        cls = pending.pop()
        pending.extend(cls.__subclasses__())
        if reads_fast(cls):
            found.append(cls)
    return found


def _with_pydantics_lookup(classes: list[type[BaseModel]]) -> None:
    """Give ``classes`` pydantic's lookup back (CPython sets the slot on a ``__getattr__``)."""
    for cls in classes:
        type.__setattr__(cls, "__getattr__", vars(BaseModel)["__getattr__"])
        type.__delattr__(cls, "__getattr__")


@pytest.mark.skipif(not CPYTHON, reason="the generic lookup is given on CPython only")
def test_a_growing_conversation_assembles_the_same_bundles_with_either_lookup() -> None:
    from tests.benchmarks.growing_turn import conversation

    fast = anyio.run(conversation, "memory", 12, 2)
    classes = _fast_models()
    assert Fragment in classes and MemoryItem in classes and BufferItem in classes
    _with_pydantics_lookup(classes)
    try:
        assert not any(reads_fast(cls) for cls in classes)
        plain = anyio.run(conversation, "memory", 12, 2)
    finally:
        for cls in classes:
            read_fast(cls)
    assert all(reads_fast(cls) for cls in classes)
    assert [r["digest"] for r in fast] == [r["digest"] for r in plain]
    assert [r["tokens"] for r in fast] == [r["tokens"] for r in plain]


@pytest.mark.skipif(not CPYTHON, reason="the generic lookup is given on CPython only")
@pytest.mark.parametrize(("setting", "fast"), [("1", False), ("0", True), (None, True)])
def test_the_environment_switch_keeps_pydantics_lookup(setting: str | None, fast: bool) -> None:
    """``PREFRONTAL_PYDANTIC_LOOKUP=1`` at import leaves every model with pydantic's lookup;
    another value, or none, gives the generic one (a fresh interpreter each)."""
    env = {k: v for k, v in os.environ.items() if k != "PREFRONTAL_PYDANTIC_LOOKUP"}
    if setting is not None:
        env["PREFRONTAL_PYDANTIC_LOOKUP"] = setting
    code = (
        "from prefrontal.bundle.models import Fragment\n"
        "from prefrontal.model_reads import reads_fast\n"
        "print(reads_fast(Fragment))"
    )
    ran = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    )
    assert ran.stdout.strip() == str(fast)

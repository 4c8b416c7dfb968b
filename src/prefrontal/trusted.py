"""Building frozen models from values already known to be valid.

Validation is the contract of every model taken from outside. Inside a
turn, though, about a hundred memories flow through the phases, the buffer
and the stores, and each is made into several models from values validated
once already: a fragment's text and ids, an offered item's fields, a score
worked out in ``[0, 1]``, the turn's time, an item held by a store with a
counter moved. Checking them again is most of what those models cost (an
item with a nested provenance: about 5 µs validated, under 1 µs assembled).

:func:`assemble` builds a model from a mapping that names every one of its
fields, :func:`assembler` makes an ``assemble`` for one class whose caller
names those fields once, :func:`evolve` copies one with some fields changed and
:func:`changed` copies one whose changed dictionary its caller made. None of them
checks the values (``model_copy(update=...)`` does not either): a caller
passes only values the fields accept, and its tests compare what it
assembles with the validated model (``tests/unit/buffer/test_trusted.py``,
the in-memory store's conformance tests). :func:`assemble` and
:func:`assembler` do check the field names, so that a field added to a
model is not silently left out.

A module of its own, below the layers that use it (the buffer, the phases,
the in-memory stores): it imports pydantic and the forgetting registry only.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from pydantic import BaseModel

from prefrontal.forgetting import remembered

M = TypeVar("M", bound=BaseModel)
"""A frozen model with no extra fields and no private attributes (what both functions
assume): the buffer's models, a context's fragments and their provenance, a store's
memory items and hits."""

_new = object.__new__
_slots = BaseModel.__dict__
_set_dict = _slots["__dict__"].__set__
_set_fields_set = _slots["__pydantic_fields_set__"].__set__
_set_extra = _slots["__pydantic_extra__"].__set__
_set_private = _slots["__pydantic_private__"].__set__
"""The setters of the attributes every model has (its slots), called directly: the model's
own ``__setattr__`` refuses a frozen model's, and ``object.__setattr__`` looks each up."""


def assemble(cls: type[M], fields: dict[str, Any]) -> M:
    """A ``cls`` holding ``fields`` (every field named, each value one it accepts), unchecked.

    ``fields`` becomes the model's own dictionary: pass a fresh one. Equal
    to ``cls.model_validate(fields)`` for valid values. Raises
    ``TypeError`` when ``fields`` leaves out a field or names one ``cls``
    does not have.
    """
    names = _names(cls)
    if fields.keys() != names:
        missing, unknown = sorted(names - fields.keys()), sorted(fields.keys() - names)
        raise TypeError(f"{cls.__name__}: fields missing {missing}, unknown {unknown}")
    model = _new(cls)
    _set_dict(model, fields)
    _set_fields_set(model, names)
    _set_extra(model, None)
    _set_private(model, None)
    return model


@remembered(maxsize=None, holds_text=False)
def _names(cls: type[BaseModel]) -> set[str]:
    """The field names of ``cls``: every assembled ``cls`` shares this set as its set fields
    (never changed in place: the models are frozen, and ``model_copy`` copies it first)."""
    return set(cls.__pydantic_fields__)


def evolve(model: M, changes: Mapping[str, Any]) -> M:
    """A copy of ``model`` with ``changes`` (values its fields accept), unchecked.

    Equal to ``model.model_copy(update=changes)``, in less time. Raises
    ``TypeError`` when ``changes`` names a field the model does not have
    (``model_copy`` would drop it silently).
    """
    cls = type(model)
    set_fields: set[str] = model.__pydantic_fields_set__
    if not set_fields.issuperset(changes):  # (an assembled model has every field set: shared)
        if not changes.keys() <= cls.__pydantic_fields__.keys():
            unknown = sorted(changes.keys() - cls.__pydantic_fields__.keys())
            raise TypeError(f"{cls.__name__}: unknown fields {unknown}")
        set_fields = set_fields | changes.keys()
    copied = _new(cls)
    _set_dict(copied, {**model.__dict__, **changes})
    _set_fields_set(copied, set_fields)
    _set_extra(copied, None)
    _set_private(copied, None)
    return copied


def changed(model: M, fields: dict[str, Any], names: frozenset[str]) -> M:
    """A copy of ``model`` whose own dictionary is ``fields``: a copy of ``model.__dict__``
    with the fields of ``names`` (at most) given new values its fields accept, unchecked.

    Equal to ``evolve(model, {name: fields[name] for name in names})``, its set fields
    too, without the dictionary of changes and the second copy: for a caller that
    changes most of a model's fields in place of a fresh copy (the buffer's refresh of
    an item, once per fragment a turn shows again).
    """
    set_fields: set[str] = model.__pydantic_fields_set__
    if not set_fields.issuperset(names):
        set_fields = set_fields | names
    copied = _new(type(model))
    _set_dict(copied, fields)
    _set_fields_set(copied, set_fields)
    _set_extra(copied, None)
    _set_private(copied, None)
    return copied


def assembler(cls: type[M], fields: tuple[str, ...]) -> Callable[[dict[str, Any]], M]:
    """:func:`assemble` for ``cls``, ``fields`` checked once here instead of at every call.

    For a caller that builds ``cls`` many times a turn from a dictionary
    literal naming ``fields`` (every field of ``cls``, as it declares): the
    function returned takes that dictionary and does not look at its keys
    again. Raises ``TypeError`` when ``fields`` are not ``cls``'s fields.
    """
    names = _names(cls)
    if set(fields) != names or len(fields) != len(names):
        missing, unknown = sorted(names - set(fields)), sorted(set(fields) - names)
        raise TypeError(f"{cls.__name__}: fields missing {missing}, unknown {unknown}")

    def build(values: dict[str, Any]) -> M:
        model = _new(cls)
        _set_dict(model, values)
        _set_fields_set(model, names)
        _set_extra(model, None)
        _set_private(model, None)
        return model

    return build

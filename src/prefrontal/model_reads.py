"""Model classes whose field reads the interpreter specialises (on CPython).

pydantic's ``BaseModel`` defines ``__getattr__``: it serves a model's
private attributes and extra fields. A class with a ``__getattr__``
anywhere in its MRO gets CPython's ``slot_tp_getattr_hook`` as its
attribute lookup, and CPython specialises an attribute read (``LOAD_ATTR``)
only for a type whose lookup is the generic one, ``object``'s. So every
field read on a model takes the interpreter's general path: about 40 ns
against 9 ns once specialised. A late turn of a long conversation reads
some twenty thousand fields of fragments, memory items and buffer items.

:func:`read_fast` gives a model class the generic lookup
(``PyObject_GenericGetAttr``) when its ``__getattr__`` could serve nothing:
no private attributes, no extra fields allowed, and no ``__getattr__`` or
``__getattribute__`` in its MRO but ``BaseModel``'s and ``object``'s. Every
read then finds the same field, property or method as before, and a
missing name raises ``AttributeError`` as before (pydantic's ``__getattr__``
raises it for such a class too): what changes is the time a read takes,
never what it gives.

prefrontal's models derive from :class:`FastReads`, which passes each of
its subclasses to it as pydantic completes them. It does nothing on an
interpreter other than CPython, or when a type's slot is not where this
module looks for it: ``object``'s must hold ``PyObject_GenericGetAttr``,
and the class's the lookup ``BaseModel``'s holds. CPython sets the slot
again itself when a class is given a ``__getattr__`` later, and a subclass
starts with pydantic's lookup until passed here: the slower path, never a
wrong one.

Setting the environment variable :data:`KEEP_PYDANTIC_LOOKUP` to ``1``
before prefrontal is imported leaves every class with pydantic's lookup (a
switch for an interpreter build this module has not met; the same values,
read more slowly).
"""

from __future__ import annotations

import ctypes
import os
import sys
from typing import Any, TypeVar

from pydantic import BaseModel

__all__ = ["KEEP_PYDANTIC_LOOKUP", "FastReads", "read_fast", "reads_fast"]

KEEP_PYDANTIC_LOOKUP = "PREFRONTAL_PYDANTIC_LOOKUP"
"""The environment variable that, set to ``1``, keeps pydantic's lookup on every class."""

M = TypeVar("M", bound=type[BaseModel])


class _TypeHead(ctypes.Structure):
    """The start of CPython's ``PyTypeObject``, up to its attribute lookup (``tp_getattro``)."""

    _fields_ = [
        ("ob_refcnt", ctypes.c_ssize_t),
        ("ob_type", ctypes.c_void_p),
        ("ob_size", ctypes.c_ssize_t),
        ("tp_name", ctypes.c_void_p),
        ("tp_basicsize", ctypes.c_ssize_t),
        ("tp_itemsize", ctypes.c_ssize_t),
        ("tp_dealloc", ctypes.c_void_p),
        ("tp_vectorcall_offset", ctypes.c_ssize_t),
        ("tp_getattr", ctypes.c_void_p),
        ("tp_setattr", ctypes.c_void_p),
        ("tp_as_async", ctypes.c_void_p),
        ("tp_repr", ctypes.c_void_p),
        ("tp_as_number", ctypes.c_void_p),
        ("tp_as_sequence", ctypes.c_void_p),
        ("tp_as_mapping", ctypes.c_void_p),
        ("tp_hash", ctypes.c_void_p),
        ("tp_call", ctypes.c_void_p),
        ("tp_str", ctypes.c_void_p),
        ("tp_getattro", ctypes.c_void_p),
    ]


def _slot(cls: type) -> ctypes.c_void_p:
    """``cls``'s attribute lookup slot, in place (CPython: a type's id is its address)."""
    return ctypes.c_void_p.from_address(id(cls) + _TypeHead.tp_getattro.offset)


def _generic_lookup() -> int | None:
    """The address of ``PyObject_GenericGetAttr``, when this interpreter's types are laid out
    as this module expects (``object``'s slot holds it); else ``None``."""
    if sys.implementation.name != "cpython" or os.environ.get(KEEP_PYDANTIC_LOOKUP) == "1":
        return None
    try:
        generic = ctypes.cast(ctypes.pythonapi.PyObject_GenericGetAttr, ctypes.c_void_p).value
    except (AttributeError, ValueError):  # an interpreter that does not export it
        return None
    if generic is None or _slot(object).value != generic:
        return None
    return generic


_GENERIC = _generic_lookup()
_PYDANTIC = _slot(BaseModel).value if _GENERIC is not None else None
"""The lookup pydantic's ``__getattr__`` gives a model class (``slot_tp_getattr_hook``)."""


def _served_by_getattr(cls: type[BaseModel]) -> bool:
    """Whether ``cls``'s ``__getattr__`` could serve a read: private attributes, extra
    fields, or a lookup of a class of its MRO other than ``BaseModel`` and ``object``."""
    if cls.__private_attributes__ or cls.model_config.get("extra") == "allow":
        return True
    for klass in cls.__mro__:
        if klass is BaseModel or klass is object:
            continue
        own = vars(klass)
        if "__getattr__" in own or "__getattribute__" in own:
            return True
    return False


def read_fast(cls: M) -> M:
    """``cls``, with the generic attribute lookup when nothing needs pydantic's (module doc)."""
    if _GENERIC is None or _served_by_getattr(cls):
        return cls
    slot = _slot(cls)
    if slot.value == _PYDANTIC:
        slot.value = _GENERIC
    return cls


def reads_fast(cls: type) -> bool:
    """Whether ``cls`` has the generic attribute lookup (the one the interpreter specialises)."""
    return _GENERIC is not None and _slot(cls).value == _GENERIC


class FastReads(BaseModel):
    """A base whose every subclass is passed to :func:`read_fast` once pydantic has built it."""

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: Any) -> None:
        super().__pydantic_init_subclass__(**kwargs)
        read_fast(cls)

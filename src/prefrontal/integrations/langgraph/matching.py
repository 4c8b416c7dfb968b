"""LangGraph's namespace conditions and value filters, evaluated on stored items.

The same semantics as LangGraph's own stores: ``"*"`` in a condition's path
matches exactly one label; a prefix or suffix aligns to whole labels; a
filter maps a field (a dotted path reaches into nested objects) to a value
compared for equality (lists and objects as wholes) or to operators
``$eq``, ``$ne``, ``$gt``, ``$gte``, ``$lt``, ``$lte``. A filter is data:
nothing of it is ever interpreted as a query language.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from langgraph.store.base import MatchCondition

_MISSING = object()


def matches(condition: MatchCondition, namespace: tuple[str, ...]) -> bool:
    """Whether ``namespace`` meets ``condition`` (prefix or suffix, ``*`` for one label)."""
    path = tuple(condition.path)
    if len(namespace) < len(path):
        return False
    if condition.match_type == "prefix":
        pairs = zip(namespace, path, strict=False)
    elif condition.match_type == "suffix":
        pairs = zip(reversed(namespace), reversed(path), strict=False)
    else:
        raise ValueError(f"unsupported match type: {condition.match_type!r}")
    return all(want == "*" or label == want for label, want in pairs)


def under(namespace: tuple[str, ...], prefix: tuple[str, ...]) -> bool:
    """Whether ``namespace`` starts with the labels of ``prefix`` (no wildcards)."""
    return namespace[: len(prefix)] == prefix


def field(value: Mapping[str, Any], path: str) -> Any:
    """The field ``path`` names: the key itself, else a dotted path into nested objects."""
    if path in value:
        return value[path]
    found: Any = value
    for part in path.split("."):
        if not isinstance(found, Mapping) or part not in found:
            return _MISSING
        found = found[part]
    return found


def passes(value: Mapping[str, Any], wanted: Mapping[str, Any] | None) -> bool:
    """Whether ``value`` meets every condition of the filter ``wanted``."""
    if not wanted:
        return True
    return all(_compare(field(value, key), want) for key, want in wanted.items())


def _compare(found: Any, want: Any) -> bool:
    if isinstance(want, Mapping):
        if any(str(key).startswith("$") for key in want):
            return all(_operator(found, op, operand) for op, operand in want.items())
        if not isinstance(found, Mapping):
            return False
        return all(_compare(found.get(key, _MISSING), sub) for key, sub in want.items())
    if isinstance(want, (list, tuple)):
        return (
            isinstance(found, (list, tuple))
            and len(found) == len(want)
            and all(_compare(a, b) for a, b in zip(found, want, strict=True))
        )
    return found is not _MISSING and bool(found == want)


_ORDERED = {
    "$gt": lambda a, b: a > b,
    "$gte": lambda a, b: a >= b,
    "$lt": lambda a, b: a < b,
    "$lte": lambda a, b: a <= b,
}


def _operator(found: Any, op: str, operand: Any) -> bool:
    if op == "$eq":
        return found is not _MISSING and bool(found == operand)
    if op == "$ne":
        return bool(found != operand)
    compare = _ORDERED.get(op)
    if compare is None:
        raise ValueError(f"unsupported filter operator: {op!r}")
    number = _number(found)
    bound = _number(operand)
    return number is not None and bound is not None and compare(number, bound)


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    number = float(value)
    return None if math.isnan(number) else number

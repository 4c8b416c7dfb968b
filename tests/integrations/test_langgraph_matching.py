"""LangGraph's filter operators and namespace conditions, as ``PrefrontalStore`` evaluates them."""

from __future__ import annotations

import sys

import pytest

pytest.importorskip("langgraph")

from langgraph.store.base import MatchCondition

from prefrontal.integrations import extras
from prefrontal.integrations.langgraph.matching import matches, passes

VALUE = {"price": 20, "name": "lamp", "user": {"tier": "gold", "age": 41}, "tags": ["a", "b"]}


@pytest.mark.parametrize(
    ("wanted", "expected"),
    [
        ({"price": {"$gte": 20}}, True),
        ({"price": {"$lte": 19}}, False),
        ({"price": {"$ne": 20}}, False),
        ({"name": {"$ne": "desk"}}, True),
        ({"name": {"$gt": 1}}, False),  # a string is no number: never ordered
        ({"missing": {"$eq": None}}, False),
        ({"user": {"tier": "gold"}}, True),
        ({"user": {"tier": "silver"}}, False),
        ({"name": {"tier": "gold"}}, False),
        ({"user.age": {"$gt": 40, "$lt": 50}}, True),
        ({"user.tier.deeper": "x"}, False),
        ({"tags": ["a", "b"]}, True),
        ({"tags": ["a"]}, False),
        ({"price": True}, False),
        (None, True),
    ],
)
def test_filters(wanted: dict[str, object] | None, expected: bool) -> None:
    assert passes(VALUE, wanted) is expected


def test_an_unknown_operator_is_refused() -> None:
    with pytest.raises(ValueError, match="unsupported filter operator"):
        passes(VALUE, {"price": {"$in": [20]}})


def test_conditions_align_to_labels_and_wildcards_take_one() -> None:
    namespace = ("users", "maya", "notes")
    assert matches(MatchCondition("suffix", ("*", "notes")), namespace)
    assert not matches(MatchCondition("suffix", ("users", "maya", "notes", "x")), namespace)
    assert not matches(MatchCondition("prefix", ("users", "ana")), namespace)
    with pytest.raises(ValueError, match="unsupported match type"):
        matches(MatchCondition("infix", ("maya",)), namespace)  # type: ignore[arg-type]


def test_a_blocked_module_counts_as_missing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "prefrontal_blocked_framework", None)
    with pytest.raises(ImportError, match=r"prefrontal\[blocked\]"):
        extras.require("prefrontal_blocked_framework", "blocked")

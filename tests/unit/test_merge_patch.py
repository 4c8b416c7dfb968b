"""JSON merge patch (RFC 7396), as the profile's PATCH applies it."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from prefrontal.agents.merge_patch import merge_patch

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3)
    ),
    max_leaves=10,
)


@pytest.mark.parametrize(
    ("target", "patch", "result"),
    [
        ({"a": "b"}, {"a": "c"}, {"a": "c"}),
        ({"a": "b"}, {"b": "c"}, {"a": "b", "b": "c"}),
        ({"a": "b"}, {"a": None}, {}),
        ({"a": "b", "b": "c"}, {"a": None}, {"b": "c"}),
        ({"a": ["b"]}, {"a": "c"}, {"a": "c"}),
        ({"a": "c"}, {"a": ["b"]}, {"a": ["b"]}),
        ({"a": {"b": "c"}}, {"a": {"b": "d", "c": None}}, {"a": {"b": "d"}}),
        ({"a": [{"b": "c"}]}, {"a": [1]}, {"a": [1]}),
        (["a", "b"], ["c", "d"], ["c", "d"]),
        ({"a": "b"}, ["c"], ["c"]),
        ({"a": "foo"}, None, None),
        ({"e": None}, {"a": 1}, {"e": None, "a": 1}),
        ([1, 2], {"a": "b", "c": None}, {"a": "b"}),
        ({}, {"a": {"bb": {"ccc": None}}}, {"a": {"bb": {}}}),
    ],
)
def test_the_examples_of_rfc_7396(target: Any, patch: Any, result: Any) -> None:
    """Every example of RFC 7396's appendix A gives the RFC's result."""
    assert merge_patch(target, patch) == result


@given(JSON, st.dictionaries(st.text(max_size=3), JSON, max_size=3))
def test_a_patch_changes_only_the_members_it_names(target: Any, patch: dict[str, Any]) -> None:
    """Members the patch does not name keep their value; the arguments are not changed."""
    before = repr((target, patch))
    merged = merge_patch(target, patch)
    assert repr((target, patch)) == before
    if isinstance(target, dict):
        for key, value in target.items():
            if key not in patch:
                assert merged[key] == value

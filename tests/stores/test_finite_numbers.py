"""No record holds ``NaN`` or an infinity: JSON cannot carry them, so one would poison its row."""

from __future__ import annotations

import math

import pytest
from pydantic import ValidationError

from prefrontal.stores.conversation import ConversationTurn, Role
from prefrontal.stores.long_term import MemoryItem
from tests.conftest import FIXED_NOW

NOT_NUMBERS = [math.nan, math.inf, -math.inf]


def memory(**fields: object) -> MemoryItem:
    return MemoryItem.model_validate(
        {"item_id": "m", "agent_id": "a", "user_id": "u", "content": "c", "created_at": FIXED_NOW}
        | fields
    )


@pytest.mark.parametrize("value", NOT_NUMBERS)
def test_memory_metadata_refuses_values_that_are_not_numbers(value: float) -> None:
    """A memory item whose metadata holds NaN or an infinity fails validation, naming the key."""
    with pytest.raises(ValidationError, match=r"metadata\.score"):
        memory(metadata={"score": value})


@pytest.mark.parametrize("value", NOT_NUMBERS)
def test_embeddings_refuse_values_that_are_not_numbers(value: float) -> None:
    """An embedding with NaN or an infinity in it fails validation."""
    with pytest.raises(ValidationError, match="embedding"):
        memory(embedding=(0.5, value, 0.25))


@pytest.mark.parametrize("value", NOT_NUMBERS)
def test_conversation_metadata_refuses_values_that_are_not_numbers(value: float) -> None:
    """A conversation turn whose metadata holds NaN or an infinity fails validation."""
    with pytest.raises(ValidationError, match=r"metadata\.weight"):
        ConversationTurn(
            item_id="t",
            agent_id="a",
            user_id="u",
            session_id="s",
            role=Role.USER,
            content="hello",
            metadata={"weight": value},
        )


def test_finite_numbers_strings_and_booleans_are_kept_as_given() -> None:
    """Finite floats, integers, booleans and strings pass through with their types."""
    item = memory(metadata={"f": 1.5, "i": 3, "b": True, "s": "NaN"}, embedding=(0.0, -1.0))
    assert item.metadata == {"f": 1.5, "i": 3, "b": True, "s": "NaN"}
    assert [type(v) for v in item.metadata.values()] == [float, int, bool, str]
    assert item.embedding == (0.0, -1.0)

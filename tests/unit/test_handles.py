"""Handles: short, stable names of the items the context shows."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from prefrontal.errors import NotFoundError
from prefrontal.handles import as_handle, handle_of, pick


@dataclass(frozen=True)
class Item:
    """The two fields a handle is worked out from."""

    user_id: str
    item_id: str


def test_a_handle_is_six_digits_and_the_same_every_time() -> None:
    """The handle of one item is ``#`` and six digits, equal on every call."""
    item = Item("maya", "01M8FXGXP31JKN04N7HT2EY3V5")
    assert handle_of(item) == handle_of(Item("maya", "01M8FXGXP31JKN04N7HT2EY3V5"))
    assert len(handle_of(item)) == 7 and handle_of(item)[1:].isdigit()


def test_the_holder_is_part_of_the_handle() -> None:
    """Two holders' items of one id have different handles."""
    assert handle_of(Item("maya", "launch")) != handle_of(Item("sam", "launch"))


@pytest.mark.parametrize(
    ("written", "read"),
    [("#482913", "#482913"), ("482913", "#482913"), (" #482913 ", "#482913"), ("launch", None),
     ("#48291", None), ("#4829130", None)],
)  # fmt: skip
def test_a_reference_is_read_as_a_handle_only_when_it_is_one(
    written: str, read: str | None
) -> None:
    """``#482913`` and ``482913`` are handles; ids and other digit counts are not."""
    assert as_handle(written) == read


def test_pick_finds_the_one_item_and_refuses_a_shared_handle() -> None:
    """``pick`` returns the item of a handle; none, or two sharing it, is NotFoundError."""
    items = [Item("maya", f"goal-{n}") for n in range(50)]
    wanted = items[17]
    assert pick(items, handle_of(wanted), "goal") is wanted
    with pytest.raises(NotFoundError, match="no goal"):
        pick(items[:3], handle_of(wanted), "goal")
    with pytest.raises(NotFoundError, match="item_id instead"):
        pick([wanted, Item(wanted.user_id, wanted.item_id)], handle_of(wanted), "goal")

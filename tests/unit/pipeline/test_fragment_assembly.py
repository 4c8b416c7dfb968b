"""A loading phase's fragment is assembled unchecked, equal to the validated one."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import cast

import pytest
from pydantic import ValidationError

from prefrontal.bundle.fragments import Fragment, Section
from prefrontal.phases.fragments import _validated, fragment
from prefrontal.phases.state import TurnState

AT = datetime(2025, 1, 6, 9, 0, tzinfo=UTC)


class Counting:
    """What ``fragment`` uses of a turn: its token count (one per character here)."""

    def count(self, text: str) -> int:
        return len(text)


TURN = cast(TurnState, Counting())

CASES = [
    {"rank": 3, "position": 7, "score": 1},
    {"rank": 0, "position": 1.5, "score": None, "created_at": AT, "heading": "Monday"},
    {"rank": 2, "position": -1.0, "score": 0.25, "role": "user", "volatile": True},
    {"rank": 1, "updated_at": AT, "version": "v2"},
]


@pytest.mark.parametrize("extra", CASES)
def test_an_assembled_fragment_equals_the_validated_one_and_dumps_alike(
    extra: dict[str, object],
) -> None:
    """Integers given for the float fields become floats, as validation makes them."""
    args = {"store": "episodic", "item_ids": ("m1", "m2"), "phase": "episodic", **extra}
    made = fragment(TURN, Section.EPISODIC, "Lena signs it off.", **args)  # type: ignore[arg-type]
    checked = _validated(
        TURN,
        Section.EPISODIC,
        "Lena signs it off.",
        "episodic",
        ("m1", "m2"),
        "episodic",
        int(extra["rank"]),  # type: ignore[call-overload]
        extra.get("position", 0.0),  # type: ignore[arg-type]
        extra.get("score"),  # type: ignore[arg-type]
        extra.get("created_at"),  # type: ignore[arg-type]
        extra.get("updated_at"),  # type: ignore[arg-type]
        extra.get("version"),  # type: ignore[arg-type]
        extra.get("heading"),  # type: ignore[arg-type]
        extra.get("role"),  # type: ignore[arg-type]
        bool(extra.get("volatile", False)),
    )
    assert made == checked
    assert made.model_dump_json() == checked.model_dump_json()
    assert Fragment.model_validate(made.model_dump()) == made


@pytest.mark.parametrize(
    ("text", "store", "item_ids", "phase"),
    [
        ("", "episodic", ("m1",), "episodic"),
        ("x", "", ("m1",), "episodic"),
        ("x", "episodic", (), "episodic"),
        ("x", "episodic", ("m1",), ""),
    ],
)
def test_what_the_fields_refuse_is_still_refused(
    text: str, store: str, item_ids: tuple[str, ...], phase: str
) -> None:
    """An empty text, store or phase, or no item ids, raises as validation does."""
    with pytest.raises(ValidationError):
        fragment(TURN, Section.EPISODIC, text, store=store, item_ids=item_ids, phase=phase, rank=0)

"""Refusing a turn whose caller chose a budget below the floor of the owner's pinned section."""

from __future__ import annotations

from prefrontal.errors import BudgetBelowFloorError
from prefrontal.phases.state import TurnState

__all__ = ["refuse_below_floor"]


def refuse_below_floor(turn: TurnState) -> None:
    """Raise :class:`~prefrontal.errors.BudgetBelowFloorError` when the request's own
    ``token_budget`` cannot hold the owner's pinned section (phase 8 measured it).

    A turn on the configured budget is not refused: its caller did not choose
    the budget, so it delivers no data and is not ready for the router instead.
    """
    pinned, asked = turn.pin, turn.request.token_budget
    if pinned is None or pinned.fits or asked is None:
        return
    floor = pinned.floor if pinned.floor is not None else asked + 1
    raise BudgetBelowFloorError(budget=asked, floor=floor)

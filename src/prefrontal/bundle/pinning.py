"""The owner's pinned section: what a turn places before any data, whole, or delivers no data.

The pinned section is what the agent's owner wrote (its identity, values and
mandates, its rules, its current mode with that mode's constraints, its
capabilities), prefrontal's clock line, and the agent's open *blocking*
goals that the turn shows. It is placed before any data section is
allocated, is never deduplicated against data (a stored twin of it is the
copy dropped) and never shrinks to make room for data.

Its size, rendered and counted with the turn's tokenizer, sets the turn's
*floor*. A budget that cannot hold it whole is below the floor: a caller who
chose that budget is refused
(:class:`~prefrontal.errors.BudgetBelowFloorError`); otherwise the turn
delivers no data, only the owner's parts that fit whole in their order, and
is not ready for the router.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from prefrontal.bundle.fragments import Fragment
from prefrontal.bundle.render import render_sections

__all__ = ["Pin", "owner_parts_that_fit", "pin_of"]


@dataclass(frozen=True, slots=True)
class Pin:
    """A turn's pinned fragments, what they take rendered, and whether the budget holds them.

    ``owner`` are the owner's fragments in rank order, ``goals`` the pinned
    goals; ``tokens`` is the rendered size of both together (0 when there
    are none); ``available`` is what the turn's policy leaves for context;
    ``floor`` is the smallest total budget that holds them, worked out only
    when the turn's does not.
    """

    owner: tuple[Fragment, ...]
    goals: tuple[Fragment, ...]
    tokens: int
    available: int
    floor: int | None = None

    @property
    def fragments(self) -> tuple[Fragment, ...]:
        """Every pinned fragment: the owner's, then the pinned goals."""
        return self.owner + self.goals

    @property
    def fits(self) -> bool:
        """Whether the turn's budget holds the pinned section whole."""
        return self.tokens <= self.available

    def shortfall(self) -> str | None:
        """Why no data was delivered when the budget is below the floor; ``None`` when it is not."""
        if self.fits:
            return None
        floor = f" (a total budget of at least {self.floor})" if self.floor is not None else ""
        return (
            f"the budget leaves {self.available} tokens for context, below the {self.tokens} "
            f"the owner's pinned section needs{floor}: no data was delivered"
        )


def pin_of(
    owner: Sequence[Fragment],
    goals: Sequence[Fragment],
    available: int,
    count: Callable[[str], int],
) -> Pin:
    """The pin of ``owner`` (in rank order) and ``goals``, measured rendered with ``count``."""
    pinned = [*owner, *goals]
    tokens = count(render_sections(pinned)) if pinned else 0
    return Pin(owner=tuple(owner), goals=tuple(goals), tokens=tokens, available=available)


def owner_parts_that_fit(
    owner: Sequence[Fragment], limit: int, count: Callable[[str], int]
) -> list[Fragment]:
    """The longest run of ``owner``'s parts, from the first, whose rendering fits ``limit``.

    Each part whole or not at all: a rule cut short can say the opposite of
    the rule. Used below the floor, where no data is delivered.
    """
    kept: list[Fragment] = []
    for part in owner:
        if count(render_sections([*kept, part])) > limit:
            break
        kept.append(part)
    return kept

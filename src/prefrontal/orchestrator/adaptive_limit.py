"""How many turns may run at once, learnt from how long admitted turns take.

An additive-increase, multiplicative-decrease limit, as TCP's congestion
window: a turn that ran within its target (a share of its deadline) raises
the limit by ``1 / limit`` (so by about one per limit's worth of fast
turns), and a turn that ran past it cuts the limit by ``decrease``. A
burst of slow turns that were all admitted before the last cut cuts once,
not once each: only a turn that started after the last cut can cut again,
since only it ran at the lowered limit.

The limit stays within ``[floor, ceiling]``. The arithmetic is pure (times
are passed in), so that it can be tested without a clock.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

DECREASE = 0.75
"""What a slow turn multiplies the limit by."""


@dataclass(slots=True)
class AdaptiveLimit:
    """The number of turns that may run at once, between ``floor`` and ``ceiling``."""

    ceiling: int
    floor: int = 1
    decrease: float = DECREASE
    _value: float = field(init=False)
    _cut_at: float = field(init=False, default=-math.inf)
    cuts: int = field(init=False, default=0)
    """How many times a slow turn has cut the limit."""

    def __post_init__(self) -> None:
        if not 1 <= self.floor <= self.ceiling:
            raise ValueError(f"need 1 <= floor <= ceiling, not {self.floor} and {self.ceiling}")
        if not 0 < self.decrease < 1:
            raise ValueError(f"decrease must be in (0, 1), not {self.decrease}")
        self._value = float(self.ceiling)

    @property
    def value(self) -> int:
        """Turns that may run at once now (at least ``floor``)."""
        return max(self.floor, int(self._value))

    def record(self, *, started: float, ended: float, target_s: float) -> None:
        """Learn from one admitted turn that held its slot from ``started`` to ``ended``."""
        if ended - started <= target_s:
            self._value = min(float(self.ceiling), self._value + 1 / max(self._value, 1.0))
        elif started >= self._cut_at:
            self._value = max(float(self.floor), self._value * self.decrease)
            self._cut_at = ended
            self.cuts += 1

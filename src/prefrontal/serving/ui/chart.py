"""The list's chart: each turn's latency and status over time, as geometry for inline SVG.

Pure functions, no HTML. The chart is drawn in a fixed view box of
:data:`WIDTH` by :data:`HEIGHT` units that the page scales to its width (at
most 600 pixels), so its labels stay legible on a 390-pixel screen. Every
turn is a mark at its start time and duration; a turn that was not ``ok``
is a triangle, not a dot, so colour is never the only signal; each mark
names its turn, time and duration (an SVG ``<title>``; the table below
links to the turns). No script draws it.
"""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from prefrontal.traces.models import TurnStatus, TurnTrace

WIDTH = 400
HEIGHT = 190
LEFT, RIGHT, TOP, BOTTOM = 44, 10, 12, 34
"""The plot's margins in view-box units: room for the axes' labels."""


@dataclass(frozen=True)
class Mark:
    """One turn on the chart."""

    turn_id: str
    x: float
    y: float
    status: str
    label: str
    """What the mark says when pointed at: when, how long, how it ended."""

    @property
    def triangle(self) -> str:
        """The points of the triangle drawn for a turn that was not ``ok``."""
        x, y = self.x, self.y
        return f"{x:.1f},{y - 5:.1f} {x - 5:.1f},{y + 4:.1f} {x + 5:.1f},{y + 4:.1f}"


@dataclass(frozen=True)
class Chart:
    """The marks, the axes' ticks and the deadline line, in view-box units."""

    marks: tuple[Mark, ...]
    y_ticks: tuple[tuple[float, str], ...]
    x_ticks: tuple[tuple[float, str, str], ...]
    """``(x, label, anchor)`` under the time axis."""
    deadline_y: float | None
    deadline_label: str
    summary: str
    """The chart in one sentence, for a screen reader."""
    width: int = WIDTH
    height: int = HEIGHT
    left: int = LEFT
    right_x: int = WIDTH - RIGHT
    top: int = TOP
    base_y: int = HEIGHT - BOTTOM


def _nice(top: float) -> float:
    """A round axis maximum at or above ``top``: one of a few round multiples of a power of ten."""
    scale = 1.0
    while scale * 10 < top:
        scale *= 10
    while scale > top and scale > 0.1:
        scale /= 10
    for factor in (1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10):
        if scale * factor >= top:
            return scale * factor
    return scale * 10


def _ms(value: float) -> str:
    return f"{value:g} ms" if value < 10_000 else f"{value / 1000:g} s"


def latency_chart(traces: Sequence[TurnTrace]) -> Chart | None:
    """The chart of ``traces`` (any order), oldest left; ``None`` when there are none.

    The duration axis reaches the slowest turn, and the turns' deadline (the
    most common one) when it is at most twice that; a deadline further up
    is named above the plot instead of drawn.
    """
    if not traces:
        return None
    ordered = sorted(traces, key=lambda t: (t.started_at, t.turn_id))
    first, last = ordered[0].started_at, ordered[-1].started_at
    span = (last - first).total_seconds()
    deadline = Counter(t.deadline_ms for t in ordered).most_common(1)[0][0]
    slowest = max([*(t.duration_ms for t in ordered), 1.0])
    # A deadline far above every turn would flatten them all at the bottom: left off the scale.
    top = _nice(max(slowest, deadline if deadline <= 2 * slowest else 0.0) * 1.05)
    plot_w, plot_h = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM

    def y_of(ms: float) -> float:
        return TOP + plot_h * (1 - min(ms, top) / top)

    def x_of(trace: TurnTrace, index: int) -> float:
        if span > 0:
            share = (trace.started_at - first).total_seconds() / span
        else:
            share = index / (len(ordered) - 1) if len(ordered) > 1 else 0.5
        return LEFT + 6 + (plot_w - 12) * share

    same_day = first.date() == last.date()
    stamp = "%H:%M:%S" if same_day else "%m-%d %H:%M"
    marks = tuple(
        Mark(
            turn_id=t.turn_id,
            x=x_of(t, n),
            y=y_of(t.duration_ms),
            status=t.status.value,
            label=(
                f"{t.started_at.strftime('%Y-%m-%d %H:%M:%S')} · {t.duration_ms:.1f} ms "
                f"of {t.deadline_ms:g} · {t.status.value} · {t.turn_id}"
            ),
        )
        for n, t in enumerate(ordered)
    )
    y_ticks = tuple((y_of(top * k / 4), _ms(top * k / 4)) for k in range(5))
    x_ticks = (
        (float(LEFT), first.strftime(stamp), "start"),
        (float(WIDTH - RIGHT), last.strftime(stamp), "end"),
    )
    durations = [t.duration_ms for t in ordered]
    not_ok = sum(1 for t in ordered if t.status is not TurnStatus.OK)
    summary = (
        f"{len(ordered)} turns from {first.strftime('%Y-%m-%d %H:%M:%S')} to "
        f"{last.strftime('%Y-%m-%d %H:%M:%S')} UTC: median {statistics.median(durations):.1f} ms, "
        f"slowest {max(durations):.1f} ms, {not_ok} not ok."
    )
    return Chart(
        marks=marks,
        y_ticks=y_ticks,
        x_ticks=x_ticks,
        deadline_y=y_of(deadline) if deadline <= top else None,
        deadline_label=f"deadline {_ms(deadline)}" + ("" if deadline <= top else ", above"),
        summary=summary,
    )

"""A turn's phases drawn on a time axis: one bar per phase, where and how long it ran.

Concurrent phases overlap on the axis, and the slow one is the long bar. A
pure function of a :class:`~prefrontal.traces.models.TurnTrace` and a width,
so that a test can pin the drawing at a fixed width (here 80 columns)::

     2 consciousness        ███                                     9.0 ms ok
     3 frontal_cortex       █████████                              30.0 ms ok
     5 episodic                     ████████████████████████       80.0 ms ok !
     6 semantic                     █████████████████              55.0 ms degraded
     8 budget_allocation                                   █        0.3 ms ok
                            ┬───────┬───────┬────────┬───────┬
                            0      30      60       90     120 ms

``!`` marks a phase over its time budget; in a terminal, colour gives the status.
"""

from __future__ import annotations

import math

from rich.text import Text

from prefrontal.traces.models import PhaseRecord, PhaseStatus, TurnTrace

BAR = "█"
LABEL_WIDTH = 24
"""Two digits of index, a space, the phase name, a space."""
STATS_WIDTH = 22
"""Duration, unit, status and the over-budget mark."""
MIN_BAR_WIDTH = 10
TICKS = 4
STYLES = {
    PhaseStatus.OK: "green",
    PhaseStatus.DEGRADED: "yellow",
    PhaseStatus.FAILED: "red",
    PhaseStatus.TIMEOUT: "red",
    PhaseStatus.CANCELLED: "magenta",
    PhaseStatus.SKIPPED: "dim",
}


def span_ms(trace: TurnTrace) -> float:
    """The length of the axis: the turn, or the latest phase end if later."""
    ends = [p.started_ms + p.duration_ms for p in trace.phases]
    return max([trace.duration_ms, *ends, 1e-3])


def bar_cells(record: PhaseRecord, span: float, cells: int) -> tuple[int, int]:
    """The ``[first, last)`` cells the phase covers on an axis of ``cells`` cells."""
    first = min(int(record.started_ms / span * cells), cells - 1)
    last = math.ceil((record.started_ms + record.duration_ms) / span * cells)
    return first, min(max(last, first + 1), cells)


def _label(record: PhaseRecord) -> str:
    name = record.name[: LABEL_WIDTH - 4]
    return f"{record.index:>2} {name:<{LABEL_WIDTH - 3}}"


def _stats(record: PhaseRecord) -> str:
    mark = " !" if record.over_budget else ""
    return f" {record.duration_ms:>8.1f} ms {record.status.value}{mark}"


def phase_line(record: PhaseRecord, span: float, cells: int) -> Text:
    """One phase: its label, its bar on the axis, its duration and status."""
    first, last = bar_cells(record, span, cells)
    line = Text(_label(record))
    line.append(" " * first)
    line.append(BAR * (last - first), style=STYLES[record.status])
    line.append(" " * (cells - last))
    line.append(_stats(record), style="bold red" if record.over_budget else "")
    return line


def _number(value: float, span: float) -> str:
    return f"{value:.0f}" if span >= 100 else f"{value:.1f}"


def axis_lines(span: float, cells: int) -> tuple[Text, Text]:
    """The axis under the bars: ticks, then their values in milliseconds."""
    positions = [round(i * (cells - 1) / TICKS) for i in range(TICKS + 1)]
    ticks = ["─"] * cells
    for position in positions:
        ticks[position] = "┬"
    labels = [" "] * (cells + 3)
    free = 0
    for i, position in enumerate(positions):
        text = _number(span * i / TICKS, span)
        at = max(position - len(text) + 1, 0) if i else 0
        if at >= free:
            labels[at : at + len(text)] = text
            free = at + len(text) + 1
    pad = " " * LABEL_WIDTH
    return Text(pad + "".join(ticks)), Text(pad + "".join(labels).rstrip() + " ms")


def timeline(trace: TurnTrace, width: int = 100) -> Text:
    """The phases of ``trace`` as bars on a time axis, ``width`` characters wide."""
    cells = max(width - LABEL_WIDTH - STATS_WIDTH, MIN_BAR_WIDTH)
    span = span_ms(trace)
    lines = [phase_line(r, span, cells) for r in sorted(trace.phases, key=lambda r: r.index)]
    lines.extend(axis_lines(span, cells))
    return Text("\n").join(lines)

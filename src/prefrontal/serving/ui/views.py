"""What the pages show, computed from traces: pure functions, no HTML.

Geometry is in per-mille of the drawn width (the templates draw it as SVG
attributes, which a strict Content-Security-Policy allows where inline
styles are not). Every status is given as text beside its colour.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from prefrontal.bundle.fence import BREAK_MARK
from prefrontal.traces.models import PhaseRecord, PhaseStatus, TurnTrace

SYMBOLS = {
    "ok": "✓",
    "degraded": "▲",
    "failed": "✕",
    "timeout": "✂",
    "cancelled": "⊘",
    "skipped": "–",
}
"""A shape for each status, so colour is never the only signal."""


def symbol(status: str) -> str:
    """The shape drawn beside ``status``."""
    return SYMBOLS.get(status, "?")


@dataclass(frozen=True)
class Bar:
    """One phase on the turn's time axis, with what marks it."""

    record: PhaseRecord
    x: int
    width: int
    budget_width: int
    marks: tuple[str, ...]
    """Why the phase is marked: cut, degraded, retried, failed, over budget (text)."""
    alongside: tuple[str, ...]
    """The phases that ran at the same time."""


@dataclass(frozen=True)
class Waterfall:
    """The phases of a turn on one axis of ``scale_ms``, with the deadline at ``deadline_x``."""

    bars: tuple[Bar, ...]
    scale_ms: float
    deadline_x: int
    ticks: tuple[tuple[int, str], ...]


def _permille(ms: float, scale: float) -> int:
    return max(0, min(1000, round(1000 * ms / scale))) if scale > 0 else 0


BARE = {"TimeoutError", "CancelledError", ""}
"""Error messages that only repeat the error's type: they say nothing a person can use."""


def cut_reason(record: PhaseRecord, deadline_ms: float) -> str:
    """Which deadline cut ``record`` (the turn's or the phase's own budget), when, what was lost.

    A phase the runner marked ``DeadlineExceeded``, or that ended at or past
    the turn's deadline, was cut by that deadline; one that ran
    past its own time budget, by that budget; otherwise by a time limit
    inside it (a store call's). The turn's own words (``DeadlineExceeded``)
    are kept; a bare ``TimeoutError`` is replaced by this account.
    """
    ended = record.started_ms + record.duration_ms
    by_turn = any(e.type == "DeadlineExceeded" for e in record.errors)
    if by_turn or (deadline_ms > 0 and ended >= deadline_ms - 0.5):
        which = f"the turn's {deadline_ms:g} ms deadline"
    elif record.duration_ms >= record.budget_ms:
        which = f"its own {record.budget_ms:g} ms time budget"
    else:
        which = "a time limit inside it (a store call's)"
    lost = (
        "nothing it was loading reached the context"
        if record.items_loaded == 0
        else f"{record.items_loaded} item(s) it loaded before the cut were kept"
    )
    return f"cut by {which} at {ended:.1f} ms, after running {record.duration_ms:.1f} ms; {lost}"


UNSAID_DEGRADED = "a phase it needs did not finish, or a store call was retried or partial"
"""What a degraded phase that recorded no reason of its own may have met (the runner's causes)."""


def _reasons(record: PhaseRecord) -> list[str]:
    said = {e.message for e in record.errors}
    reasons = [
        f"{e.type}: {e.message}"
        for e in record.errors
        if e.message not in BARE and e.message != e.type and e.type != "DeadlineExceeded"
    ]
    reasons += [w for w in record.warnings if w not in said]
    return reasons


def _marks(record: PhaseRecord, deadline_ms: float = 0.0) -> tuple[str, ...]:
    marks: list[str] = []
    reason = "; ".join(_reasons(record))
    if record.status is PhaseStatus.TIMEOUT:
        cut = cut_reason(record, deadline_ms)
        marks.append(f"{cut}{' (' + reason + ')' if reason else ''}")
    elif record.status is PhaseStatus.CANCELLED:
        marks.append(f"cancelled{': ' + reason if reason else ''}")
    elif record.status is PhaseStatus.FAILED:
        marks.append(f"failed{': ' + reason if reason else ''}")
    elif record.status is PhaseStatus.DEGRADED:
        why = (
            reason
            or "a phase it needs did not finish, a store call was retried, or its store was slow"
        )
        marks.append(f"degraded: {why}")
    elif reason:
        marks.append(reason)
    if record.attempts > 1:
        marks.append(f"retried: {record.attempts} attempts")
    if record.over_budget:
        over = record.duration_ms - record.budget_ms
        marks.append(f"over its {record.budget_ms:g} ms budget by {over:.1f} ms")
    return tuple(marks)


def overrun(trace: TurnTrace) -> str | None:
    """Why a turn took longer than its deadline, in words; ``None`` when it did not."""
    if trace.duration_ms <= trace.deadline_ms:
        return None
    late = [p for p in trace.phases if p.started_ms + p.duration_ms > trace.deadline_ms]
    cut = [p.name for p in late if p.status is PhaseStatus.TIMEOUT]
    after = [p.name for p in late if p.status is not PhaseStatus.TIMEOUT]
    parts = [f"{trace.duration_ms - trace.deadline_ms:.1f} ms past the deadline"]
    if cut:
        parts.append(f"the deadline cut {', '.join(cut)}")
    if after:
        parts.append(
            f"then {', '.join(after)} still ran to assemble what had arrived "
            "(the phases after loading always run, within their own budgets)"
        )
    return "; ".join(parts) + "."


def _overlaps(a: PhaseRecord, b: PhaseRecord) -> bool:
    a_end, b_end = a.started_ms + a.duration_ms, b.started_ms + b.duration_ms
    return a.started_ms < b_end and b.started_ms < a_end


def waterfall(phases: tuple[PhaseRecord, ...], deadline_ms: float) -> Waterfall:
    """The waterfall of ``phases``: bars, budgets and the deadline on one axis."""
    ends = [p.started_ms + max(p.duration_ms, p.budget_ms) for p in phases]
    scale = max([deadline_ms, *ends, 1.0])
    bars = tuple(
        Bar(
            record=p,
            x=_permille(p.started_ms, scale),
            width=max(2, _permille(p.duration_ms, scale)),
            budget_width=_permille(p.budget_ms, scale),
            marks=_marks(p, deadline_ms),
            alongside=tuple(o.name for o in phases if o is not p and _overlaps(p, o)),
        )
        for p in phases
    )
    step = scale / 4
    ticks = tuple((_permille(step * i, scale), f"{step * i:.0f}") for i in range(5))
    return Waterfall(bars, scale, _permille(deadline_ms, scale), ticks)


@dataclass(frozen=True)
class SectionBar:
    """A section's tokens: requested, allocated and used, against the largest of the turn."""

    section: str
    requested: int
    allocated: int
    used: int
    requested_w: int
    allocated_w: int
    used_w: int


def sections(trace: TurnTrace) -> list[SectionBar]:
    """Each section's budget, scaled to the largest figure of the turn."""
    top = max([1, *(max(s.requested, s.allocated, s.used) for s in trace.sections)])
    return [
        SectionBar(
            s.section,
            s.requested,
            s.allocated,
            s.used,
            _permille(s.requested, top),
            _permille(s.allocated, top),
            _permille(s.used, top),
        )
        for s in trace.sections
    ]


def _detail(trace: TurnTrace, phase: str) -> dict[str, Any]:
    try:
        return trace.phase(phase).detail
    except KeyError:
        return {}


def fragments(trace: TurnTrace) -> list[dict[str, Any]]:
    """The bundle's fragments with their provenance, as ``context_assembly`` recorded them."""
    found = _detail(trace, "context_assembly").get("fragments", [])
    return [f for f in found if isinstance(f, dict)]


@dataclass(frozen=True)
class BufferView:
    """The working-memory buffer before and after the turn, as ``working_memory_init`` says."""

    recorded: bool
    base_version: Any = None
    items_after: Any = None
    admitted: Any = 0
    refreshed: Any = 0
    refused: list[dict[str, Any]] = field(default_factory=list)
    evicted: dict[str, Any] = field(default_factory=dict)
    evictions: list[dict[str, Any]] = field(default_factory=list)
    themes: list[Any] = field(default_factory=list)
    coherence: Any = None


def buffer(trace: TurnTrace) -> BufferView:
    """What the buffer admitted, refused and evicted (faded, folded, ...) this turn, with why."""
    d = _detail(trace, "working_memory_init")
    if not d:
        return BufferView(recorded=False)
    return BufferView(
        recorded=True,
        base_version=d.get("base_version"),
        items_after=d.get("items"),
        admitted=d.get("admitted", 0),
        refreshed=d.get("refreshed", 0),
        refused=[r for r in d.get("refused", []) if isinstance(r, dict)],
        evicted=dict(d.get("evicted", {})),
        evictions=[e for e in d.get("evictions", []) if isinstance(e, dict)],
        themes=list(d.get("themes", [])),
        coherence=d.get("coherence"),
    )


def shown(value: Any, limit: int = 300) -> str:
    """A detail value as one line of text, cut to ``limit`` characters."""
    text = value if isinstance(value, str) else repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


@dataclass(frozen=True)
class PhaseDiff:
    """One phase in two turns."""

    name: str
    a: PhaseRecord | None
    b: PhaseRecord | None

    @property
    def delta_ms(self) -> float | None:
        """B's duration minus A's (``None`` when one turn lacks the phase)."""
        if self.a is None or self.b is None:
            return None
        return self.b.duration_ms - self.a.duration_ms


def _names(a: TurnTrace, b: TurnTrace) -> list[str]:
    names = [p.name for p in a.phases]
    return names + [p.name for p in b.phases if p.name not in names]


def _find(trace: TurnTrace, name: str) -> PhaseRecord | None:
    try:
        return trace.phase(name)
    except KeyError:
        return None


def phase_diffs(a: TurnTrace, b: TurnTrace) -> list[PhaseDiff]:
    """Every phase of either turn, A's and B's side by side."""
    return [PhaseDiff(n, _find(a, n), _find(b, n)) for n in _names(a, b)]


def section_diffs(a: TurnTrace, b: TurnTrace) -> list[tuple[str, int | None, int | None]]:
    """Each section's used tokens in A and in B."""
    used_a = {s.section: s.used for s in a.sections}
    used_b = {s.section: s.used for s in b.sections}
    names = list(used_a) + [n for n in used_b if n not in used_a]
    return [(n, used_a.get(n), used_b.get(n)) for n in names]


@dataclass(frozen=True)
class SentView:
    """One message of the context as sent, cut where untrusted text had a line break."""

    index: int
    role: str
    parts: tuple[tuple[str, bool], ...]
    """The content in order: ``(text, False)``, or ``(BREAK_MARK, True)`` for a fence mark."""

    @property
    def text(self) -> str:
        """The content exactly as sent."""
        return "".join(part for part, _ in self.parts)


def sent(trace: TurnTrace) -> list[SentView]:
    """The trace's messages as sent, each with the fence's break marks found in it."""
    views = []
    for index, message in enumerate(trace.sent, start=1):
        pieces = message.content.split(BREAK_MARK)
        parts: list[tuple[str, bool]] = []
        for n, piece in enumerate(pieces):
            if n:
                parts.append((BREAK_MARK, True))
            if piece:
                parts.append((piece, False))
        views.append(SentView(index, message.role, tuple(parts)))
    return views

"""Terminal views of bundles and traces, as rich renderables (no printing here).

Every view is a function of data (a bundle, a trace, a list of traces), so
the commands stay thin and the views can be tested on their own.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from rich import box
from rich.console import Group, JustifyMethod, RenderableType
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from prefrontal.bundle.models import SECTION_ORDER, ContextBundle, Fragment
from prefrontal.cli.timeline import timeline
from prefrontal.traces.models import PhaseStatus, SectionUsage, TurnStatus, TurnTrace

STATUS_STYLES = {TurnStatus.OK: "green", TurnStatus.DEGRADED: "yellow"}
L: JustifyMethod = "left"
R: JustifyMethod = "right"
PHASE_COLUMNS: tuple[tuple[str, JustifyMethod], ...] = (
    ("#", R),
    ("phase", L),
    ("status", L),
    ("start ms", R),
    ("ms", R),
    ("budget ms", R),
    ("items", R),
    ("tokens", R),
    ("dropped", R),
)
LIST_COLUMNS: tuple[tuple[str, JustifyMethod], ...] = (
    ("started UTC", L),
    ("status", L),
    ("ms", R),
    ("tokens", R),
    ("issues", R),
    ("session", L),
    ("parent", L),
)
SQUEEZABLE = frozenset({"session", "parent"})
"""Columns cut (with an ellipsis) when the terminal is narrow; the others are never cut."""
ID_WIDTH = 26
"""A ULID's length: turn ids are never cut."""


def source(fragment: Fragment) -> str:
    """Where a fragment came from: ``store:item, item``."""
    return f"{fragment.provenance.store}:{', '.join(fragment.provenance.item_ids)}"


def _usage(trace: TurnTrace | None, section: str) -> SectionUsage | None:
    if trace is None:
        return None
    return next((s for s in trace.sections if s.section == section), None)


def section_table(bundle: ContextBundle, section: str, usage: SectionUsage | None) -> Table:
    """One section of the bundle: each fragment with its source and tokens."""
    fragments = bundle.section(section)
    spent = sum(f.tokens for f in fragments)
    share = f"{spent} tokens" if usage is None else f"{usage.used} of {usage.allocated} tokens"
    table = Table(
        title=f"{fragments[0].section.heading} ({section}): {share}",
        title_justify="left",
        expand=True,
    )
    table.add_column("source", style="cyan", no_wrap=True, max_width=36)
    table.add_column("tokens", justify="right", width=6)
    table.add_column("text", overflow="fold", ratio=1)
    for fragment in fragments:
        table.add_row(source(fragment), str(fragment.tokens), Text(fragment.text))
    return table


def bundle_view(bundle: ContextBundle, trace: TurnTrace | None = None) -> Group:
    """The bundle section by section, in rendering order, with a budget line."""
    parts: list[RenderableType] = [
        section_table(bundle, s.value, _usage(trace, s.value))
        for s in SECTION_ORDER
        if bundle.section(s)
    ]
    parts.append(
        Text(
            f"{bundle.total_tokens} of {bundle.budget} tokens in {len(bundle.fragments)} "
            f"fragments; checksum {bundle.checksum[:16]}"
        )
    )
    return Group(*parts)


def header(trace: TurnTrace) -> Panel:
    """Who the turn was for, when, how it ended and what it spent."""
    style = STATUS_STYLES.get(trace.status, "")
    lines = Text()
    rows = (
        ("turn", trace.turn_id),
        ("parent", trace.parent_turn_id or "-"),
        ("agent / user / session", f"{trace.agent_id} / {trace.user_id} / {trace.session_id}"),
        ("started", trace.started_at.isoformat()),
        ("duration", f"{trace.duration_ms:.1f} ms of a {trace.deadline_ms:.0f} ms deadline"),
        ("tokens", f"{trace.total_tokens} of {trace.total_budget}"),
        ("ready for router", str(trace.ready_for_router).lower()),
        ("checksum", trace.checksum[:16] or "-"),
    )
    for label, value in rows:
        lines.append(f"{label:<23}", style="bold")
        lines.append(f"{value}\n")
    lines.append(f"{'status':<23}", style="bold")
    lines.append(trace.status.value, style=style)
    return Panel(lines, title="Turn trace", title_align="left")


def phase_table(trace: TurnTrace) -> Table:
    """One row per phase: status, start, duration against budget, items, tokens, notes."""
    table = Table(title="Phases", title_justify="left", expand=True)
    for column, justify in PHASE_COLUMNS:
        table.add_column(column, justify=justify, no_wrap=column == "phase")
    for p in trace.phases:
        style = "" if p.status is PhaseStatus.OK else "yellow"
        table.add_row(
            str(p.index),
            p.name,
            Text(p.status.value, style=style),
            f"{p.started_ms:.1f}",
            Text(f"{p.duration_ms:.1f}", style="bold red" if p.over_budget else ""),
            f"{p.budget_ms:.0f}",
            str(p.items_loaded),
            str(p.tokens_loaded),
            str(p.items_dropped),
        )
    return table


def ending_view(trace: TurnTrace) -> Group:
    """What ``end_turn`` recorded: the reply, outcome and tools, then one row per step."""
    ending = trace.ending
    if ending is None:
        return Group(Text("Not ended: end_turn has not recorded a reply for this turn."))
    reply = ending.reply if len(ending.reply) <= 200 else ending.reply[:200] + " …"
    lines = Text(f"Ended at {ending.ended_at:%Y-%m-%d %H:%M:%S} in {ending.duration_ms:.1f} ms\n")
    lines.append(f"reply: {reply}\n")
    if ending.outcome:
        lines.append(f"outcome: {ending.outcome}\n")
    if ending.tool_calls:
        lines.append(f"tools: {', '.join(ending.tool_calls)}\n")
    table = Table(title="End of turn", title_justify="left", expand=True)
    for column in ("#", "step", "status", "start ms", "ms", "budget", "notes"):
        table.add_column(column, justify="left" if column in ("step", "notes") else "right")
    for step in ending.steps:
        style = "" if step.status is PhaseStatus.OK else "yellow"
        notes = "; ".join(e.message for e in step.errors) or _notes(step.detail)
        table.add_row(
            str(step.index),
            step.name,
            Text(step.status.value, style=style),
            f"{step.started_ms:.1f}",
            f"{step.duration_ms:.1f}",
            f"{step.budget_ms:.0f}",
            notes,
        )
    return Group(lines, table)


def _notes(detail: dict[str, object]) -> str:
    return ", ".join(f"{k}={v}" for k, v in detail.items() if not isinstance(v, (list, dict)))


def budget_table(trace: TurnTrace) -> Table:
    """The budget per section: requested, allocated, used."""
    table = Table(
        title=f"Budget: {trace.total_tokens} of {trace.total_budget} tokens",
        title_justify="left",
    )
    for column in ("section", "requested", "allocated", "used"):
        table.add_column(column, justify="left" if column == "section" else "right")
    for s in trace.sections:
        table.add_row(s.section, str(s.requested), str(s.allocated), str(s.used))
    return table


def dropped_table(trace: TurnTrace) -> Table:
    """What was loaded but left out of the context, and why."""
    table = Table(title=f"Dropped: {len(trace.dropped)}", title_justify="left", expand=True)
    table.add_column("section")
    table.add_column("items", overflow="fold")
    table.add_column("tokens", justify="right")
    table.add_column("reason", overflow="fold")
    for d in trace.dropped:
        table.add_row(d.section, ", ".join(d.item_ids), str(d.tokens), d.reason)
    return table


DETAIL_CHARS = 160
"""A phase detail's value is cut to this many characters (``--json`` has it whole)."""


def detail_value(value: object) -> str:
    """``value`` as compact JSON, cut to :data:`DETAIL_CHARS` with an ellipsis."""
    shown = json.dumps(value, ensure_ascii=False, separators=(", ", ": "), default=str)
    return shown if len(shown) <= DETAIL_CHARS else shown[: DETAIL_CHARS - 1] + "…"


def detail_table(trace: TurnTrace) -> Table:
    """What each phase recorded about its work (its ``detail``), one row per key."""
    table = Table(title="Phase details", title_justify="left", expand=True)
    table.add_column("phase", no_wrap=True)
    table.add_column("key", no_wrap=True)
    table.add_column("value", overflow="fold")
    for p in trace.phases:
        for key, value in p.detail.items():
            table.add_row(p.name, key, detail_value(value))
    return table


def problems(trace: TurnTrace) -> Text:
    """The warnings and errors of the turn, one per line (or a line saying there are none)."""
    text = Text()
    for warning in trace.warnings:
        text.append("warning ", style="yellow")
        text.append(f"{warning}\n")
    for error in trace.errors:
        store = f" [{error.store}]" if error.store else ""
        text.append("error ", style="red")
        text.append(f"{error.type}{store}: {error.message} (attempts: {error.attempts})\n")
    return text if text.plain else Text("no warnings, no errors")


def trace_view(
    trace: TurnTrace,
    width: int = 100,
    followed_by: Sequence[str] = (),
    *,
    details: bool = False,
) -> Group:
    """Everything a trace says: header, timeline, phases, budget, drops, problems.

    With ``details``, each phase's ``detail`` follows the phase table.
    """
    parts: list[RenderableType] = [
        header(trace),
        Text("Timeline", style="bold"),
        timeline(trace, width),
        phase_table(trace),
        *([detail_table(trace)] if details else []),
        budget_table(trace),
    ]
    if trace.dropped:
        parts.append(dropped_table(trace))
    parts.append(problems(trace))
    parts.append(ending_view(trace))
    if followed_by:
        parts.append(Text(f"followed by: {', '.join(followed_by)}"))
    return Group(*parts)


def _short(turn_id: str | None) -> str:
    return "-" if turn_id is None else f"…{turn_id[-8:]}"


def trace_list_table(traces: Sequence[TurnTrace]) -> Table:
    """One row per trace, newest first as given (filter by agent and user to see whose).

    ``issues`` is phases that did not end ``ok`` / warnings; the parent is
    shortened to its last characters (``trace show`` gives it in full).
    Turn ids and the figures are never cut: in a narrow terminal only the
    session and parent columns give way.
    """
    rows = [_list_row(t) for t in traces]
    table = Table(
        title="Turn traces",
        title_justify="left",
        box=box.SIMPLE_HEAD,
        pad_edge=False,
        collapse_padding=True,
    )
    table.add_column("turn", no_wrap=True, min_width=ID_WIDTH)
    for index, (column, justify) in enumerate(LIST_COLUMNS, start=1):
        widest = max((len(row[index]) for row in rows), default=0)
        if column in SQUEEZABLE:
            table.add_column(column, justify=justify, overflow="ellipsis")
        else:
            table.add_column(
                column, justify=justify, no_wrap=True, min_width=max(len(column), widest)
            )
    for t, row in zip(traces, rows, strict=True):
        status = Text(row[2], style=STATUS_STYLES.get(t.status, ""))
        table.add_row(*row[:2], status, *row[3:])
    return table


def _list_row(trace: TurnTrace) -> tuple[str, ...]:
    """The cells of one ``trace list`` row, as text."""
    not_ok = sum(p.status is not PhaseStatus.OK for p in trace.phases)
    return (
        trace.turn_id,
        trace.started_at.strftime("%m-%d %H:%M"),
        trace.status.value,
        f"{trace.duration_ms:.0f}",
        f"{trace.total_tokens}/{trace.total_budget}",
        f"{not_ok}/{len(trace.warnings)}",
        trace.session_id,
        _short(trace.parent_turn_id),
    )

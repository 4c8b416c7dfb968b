"""``PrometheusObserver``: counters and histograms of turns (extra: ``prefrontal[prometheus]``).

::

    from prometheus_client import start_http_server
    from prefrontal.traces.prometheus import PrometheusObserver

    start_http_server(9100)
    orchestrator = Orchestrator(stores, observers=[PrometheusObserver()])

Metrics (prefix ``prefrontal_``; labels in brackets):

=============================================  ==========================================
``turns_total`` [status]                       turns ended, ok or degraded
``turns_cancelled_total``                      turns cancelled by the caller
``turn_duration_seconds``                      histogram of turn wall time
``phases_total`` [phase, status]               phases ended, by how they ended
``phase_duration_seconds`` [phase]             histogram of phase wall time
``section_tokens`` [section, kind]             tokens per section, ``allocated`` / ``used``
``context_tokens``                             tokens in the rendered context
``dropped_total`` [section, reason]            fragments left out of the context
``working_memory_items``                       items in the session's buffer after a turn
``working_memory_admissions_total``            items admitted into buffers
``working_memory_evictions_total`` [reason]    items evicted from buffers
``session_coherence``                          histogram of the buffer's coherence (0-1)
``memory_recalls_total`` [phase, mode]         memory phases that searched or reused the buffer
=============================================  ==========================================

``memory_recalls_total`` comes from phases 5 and 6's ``detail["recall"]``
(``search`` or ``reuse``, the recall gate's decision): the share of
``reuse`` is the share of searches the gate saved.

The working-memory figures come from phase 10's record: ``items_loaded``
(items held) and, when the buffer reports them, ``detail["admitted"]``
(int), ``detail["evicted"]`` (reason to count) and ``detail["coherence"]``
(0-1). Label values are bounded: phase and section names, statuses, and a
drop reason cut before any item id.

Metrics are registered on ``registry`` (default: prometheus_client's global
one), so build one observer per registry and share it between orchestrators.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TYPE_CHECKING

try:
    from prometheus_client import REGISTRY, CollectorRegistry, Counter, Histogram
except ImportError as error:  # pragma: no cover - exercised only without the extra
    raise ImportError(
        "prefrontal.traces.prometheus needs prometheus-client: pip install 'prefrontal[prometheus]'"
    ) from error

from prefrontal.traces.models import PhaseRecord, RecallMode, TurnTrace
from prefrontal.traces.observe import TurnIdentity

if TYPE_CHECKING:
    from prefrontal.bundle.models import ContextBundle

WORKING_MEMORY_PHASE = "working_memory_init"
RECALL_MODES = frozenset(mode.value for mode in RecallMode)
"""The recall gate's decisions, as phases 5 and 6 record them (a bounded label)."""
SECONDS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.25, 0.5, 1.0, 2.5, 5.0)
TOKENS = (0, 50, 100, 250, 500, 1_000, 2_000, 4_000, 8_000, 16_000, 32_000)
ITEMS = (0, 4, 8, 16, 32, 48, 64, 128, 256)
RATIO = (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)


def reason_label(reason: str) -> str:
    """A drop reason as a bounded label: ``"duplicate of ep-3"`` becomes ``"duplicate"``,
    ``"trimmed to 45 tokens"`` becomes ``"trimmed"``."""
    if re.fullmatch(r"trimmed to \d+ tokens", reason):
        return "trimmed"
    return reason.split(" of ", 1)[0].strip() or "unknown"


class PrometheusObserver:
    """Counts turns, phases, tokens and buffer changes (see the module's docstring)."""

    def __init__(
        self, registry: CollectorRegistry | None = None, *, namespace: str = "prefrontal"
    ) -> None:
        self.registry = registry if registry is not None else REGISTRY
        self.namespace = namespace
        self.turns = self._counter("turns", "Turns ended.", "status")
        self.cancelled = self._counter("turns_cancelled", "Turns cancelled by the caller.")
        self.turn_seconds = self._histogram("turn_duration_seconds", "Turn wall time.", SECONDS)
        self.phases = self._counter("phases", "Phases ended.", "phase", "status")
        self.phase_seconds = self._histogram(
            "phase_duration_seconds", "Phase wall time.", SECONDS, "phase"
        )
        self.section_tokens = self._histogram(
            "section_tokens", "Tokens per section.", TOKENS, "section", "kind"
        )
        self.context_tokens = self._histogram("context_tokens", "Tokens in the context.", TOKENS)
        self.dropped = self._counter("dropped", "Fragments left out.", "section", "reason")
        self.wm_items = self._histogram(
            "working_memory_items", "Items in the buffer after a turn.", ITEMS
        )
        self.admissions = self._counter("working_memory_admissions", "Items admitted.")
        self.evictions = self._counter("working_memory_evictions", "Items evicted.", "reason")
        self.coherence = self._histogram("session_coherence", "Buffer coherence.", RATIO)
        self.recalls = self._counter(
            "memory_recalls", "Memory phases by how they recalled.", "phase", "mode"
        )

    def _counter(self, name: str, doc: str, *labels: str) -> Counter:
        return Counter(name, doc, labels, namespace=self.namespace, registry=self.registry)

    def _histogram(
        self, name: str, doc: str, buckets: tuple[float, ...], *labels: str
    ) -> Histogram:
        return Histogram(
            name, doc, labels, namespace=self.namespace, registry=self.registry, buckets=buckets
        )

    def turn_started(self, turn: TurnIdentity, user_input: str) -> None:
        """Nothing to count until something ends."""

    def phase_ended(self, turn: TurnIdentity, record: PhaseRecord) -> None:
        self.phases.labels(record.name, record.status.value).inc()
        self.phase_seconds.labels(record.name).observe(record.duration_ms / 1_000)
        if record.name == WORKING_MEMORY_PHASE:
            self._buffer(record)
        mode = record.detail.get("recall")
        if mode in RECALL_MODES:
            self.recalls.labels(record.name, mode).inc()

    def _buffer(self, record: PhaseRecord) -> None:
        self.wm_items.observe(record.items_loaded)
        detail = record.detail
        admitted = detail.get("admitted")
        if isinstance(admitted, int):
            self.admissions.inc(admitted)
        evicted = detail.get("evicted")
        if isinstance(evicted, Mapping):
            for reason, count in evicted.items():
                self.evictions.labels(reason_label(str(reason))).inc(count)
        coherence = detail.get("coherence")
        if isinstance(coherence, int | float):
            self.coherence.observe(coherence)

    def turn_ended(self, trace: TurnTrace, bundle: ContextBundle) -> None:
        self.turns.labels(trace.status.value).inc()
        self.turn_seconds.observe(trace.duration_ms / 1_000)
        self.context_tokens.observe(trace.total_tokens)
        for usage in trace.sections:
            self.section_tokens.labels(usage.section, "allocated").observe(usage.allocated)
            self.section_tokens.labels(usage.section, "used").observe(usage.used)
        for dropped in trace.dropped:
            self.dropped.labels(dropped.section, reason_label(dropped.reason)).inc()

    def turn_cancelled(self, turn: TurnIdentity) -> None:
        self.cancelled.inc()

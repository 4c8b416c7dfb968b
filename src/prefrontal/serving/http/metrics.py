"""``/metrics``: the turn metrics in Prometheus text format (extra: ``prefrontal[prometheus]``).

:func:`installed_metrics` returns ``None`` without ``prometheus-client``;
the server then has no ``/metrics`` route. Each server has its own registry,
fed by a :class:`~prefrontal.traces.prometheus.PrometheusObserver` on its
orchestrator.
"""

from __future__ import annotations

import importlib.util

from prefrontal.traces.observe import Observer


class Metrics:
    """A registry, the observer that feeds it, and its rendering."""

    def __init__(self) -> None:
        from prometheus_client import CollectorRegistry

        from prefrontal.traces.prometheus import PrometheusObserver

        self.registry = CollectorRegistry()
        self.observer: Observer = PrometheusObserver(self.registry)

    def render(self) -> tuple[bytes, str]:
        """The exposition text and its content type."""
        from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

        return generate_latest(self.registry), CONTENT_TYPE_LATEST


def installed_metrics() -> Metrics | None:
    """Metrics when ``prometheus-client`` is installed, else ``None``."""
    if importlib.util.find_spec("prometheus_client") is None:
        return None
    return Metrics()

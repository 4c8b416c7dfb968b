"""Turn traces and the live views of turns.

- :mod:`prefrontal.traces.models`: ``TurnTrace`` and its records, the data.
- :mod:`prefrontal.traces.observe`: the ``Observer`` Protocol that sees
  turns as they run, the do-nothing default and the composite.
- :mod:`prefrontal.traces.log`: ``LogObserver``, structlog events.
- :mod:`prefrontal.traces.otel`: ``OpenTelemetryObserver`` (extra ``otel``).
- :mod:`prefrontal.traces.prometheus`: ``PrometheusObserver`` (extra
  ``prometheus``).

The two extras are imported only from their own modules, never from here.
"""

from prefrontal.traces.log import LogObserver
from prefrontal.traces.models import (
    DroppedRecord,
    ErrorRecord,
    PhaseRecord,
    PhaseStatus,
    SectionUsage,
    SentMessage,
    TurnStatus,
    TurnTrace,
)
from prefrontal.traces.observe import (
    CompositeObserver,
    NullObserver,
    Observer,
    TurnIdentity,
    combine,
)

__all__ = [
    "CompositeObserver",
    "DroppedRecord",
    "ErrorRecord",
    "LogObserver",
    "NullObserver",
    "Observer",
    "PhaseRecord",
    "PhaseStatus",
    "SectionUsage",
    "SentMessage",
    "TurnIdentity",
    "TurnStatus",
    "TurnTrace",
    "combine",
]

"""The core never imports the optional extras: OpenTelemetry and Prometheus load only when asked."""

from __future__ import annotations

import subprocess
import sys

PROBE = """
import sys
import prefrontal, prefrontal.cli, prefrontal.traces.observe, prefrontal.traces.log
loaded = sorted(m for m in sys.modules if m.startswith(("opentelemetry", "prometheus_client")))
print(",".join(loaded))
"""


def test_importing_prefrontal_and_its_command_loads_no_extra() -> None:
    """``import prefrontal`` and the command line load neither extra."""
    out = subprocess.run(
        [sys.executable, "-c", PROBE], capture_output=True, text=True, check=True, timeout=60
    )
    assert out.stdout.strip() == ""

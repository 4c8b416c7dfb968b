"""A small, realistic agent to run turns on: ``seed(stores)`` fills every store.

Used by ``make demo``, ``prefrontal demo``, the examples and the benchmarks.
"""

from prefrontal.demo.seed import DEMO_AGENT, DEMO_SESSION, DEMO_USER, SAMPLE_INPUT, seed

__all__ = ["DEMO_AGENT", "DEMO_SESSION", "DEMO_USER", "SAMPLE_INPUT", "seed"]

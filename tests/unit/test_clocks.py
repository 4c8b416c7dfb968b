"""Tests own their clocks: no test module, and no conformance check, reads the wall clock.

A test that mixes a fixed instant with the wall clock passes for a day and
then fails on every machine. Durations (``time.monotonic``,
``time.perf_counter``) are fine; the day (``datetime.now``, ``utc_now``,
``time.time``, ``date.today``) is not, outside the short allow-list below.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CHECKED = (ROOT / "tests", ROOT / "src" / "prefrontal" / "testing")

WALL_CLOCK_CALLS = frozenset(
    {
        ("utc_now",),
        ("datetime", "now"),
        ("datetime", "utcnow"),
        ("datetime", "today"),
        ("date", "today"),
        ("time", "time"),
        ("time", "time_ns"),
        ("datetime", "datetime", "now"),
        ("datetime", "datetime", "utcnow"),
        ("datetime", "date", "today"),
    }
)
"""Calls, as dotted name parts, that read the day from the machine."""

MOMENT_KEYWORDS: dict[str, str] = {
    "MemoryQuery": "now",
    "around": "now",
    "Orchestrator": "clock",
    "MemoryAPI": "clock",
    "AgentStateAPI": "clock",
}
"""Calls whose moment defaults to the wall clock: a test passes it (``name`` -> keyword)."""

ALLOWED: dict[str, str] = {
    "tests/upstream/prefrontal_upstream.py": "runs the frameworks' own suites, unmodified, whose "
    "TTL and session tests sleep in real time and expect the store to see that time pass",
}
"""``path relative to the root`` -> why that module may read the wall clock (none today)."""


def dotted(node: ast.expr) -> tuple[str, ...] | None:
    """``a.b.c`` as ``("a", "b", "c")``; ``None`` for anything that is not a plain name chain."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(node.id)
    return tuple(reversed(parts))


def defaults_to_the_wall_clock(call: ast.Call, name: tuple[str, ...]) -> bool:
    """A call of ``MOMENT_KEYWORDS`` that neither names its moment nor passes ``**fields``."""
    keyword = MOMENT_KEYWORDS.get(name[-1])
    if keyword is None:
        return False
    given = {k.arg for k in call.keywords}
    return keyword not in given and None not in given


def wall_clock_calls(source: str) -> list[tuple[int, str]]:
    """``(line, name)`` for every call in ``source`` that reads the wall clock, or lets one."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call):
            name = dotted(node.func)
            if name is not None and (
                name in WALL_CLOCK_CALLS or defaults_to_the_wall_clock(node, name)
            ):
                found.append((node.lineno, ".".join(name)))
    return found


def checked_modules() -> list[Path]:
    """Every Python module of the test suite and of ``prefrontal.testing``."""
    return sorted(p for root in CHECKED for p in root.rglob("*.py"))


@pytest.mark.parametrize(
    "path", checked_modules(), ids=lambda p: str(p.relative_to(ROOT)).replace("/", ".")
)
def test_no_module_reads_the_wall_clock(path: Path) -> None:
    """A test module (or conformance check) takes its time from a clock it controls."""
    relative = str(path.relative_to(ROOT))
    if relative in ALLOWED:
        pytest.skip(ALLOWED[relative])
    calls = wall_clock_calls(path.read_text(encoding="utf-8"))
    assert calls == [], f"{relative} reads the wall clock at {calls}: inject a fixed clock"


def test_the_check_finds_each_way_of_reading_the_day() -> None:
    """The detector itself: every banned spelling is found, durations are not."""
    source = "\n".join(
        [
            "utc_now()",
            "datetime.now(UTC)",
            "datetime.datetime.now()",
            "date.today()",
            "time.time()",
            "time.monotonic()",
            "time.perf_counter()",
            "clock.now()",
            "MemoryQuery(text='a')",
            "MemoryQuery(text='a', now=T0)",
            "MemoryQuery(text='a', **fields)",
            "store.around(tenant, ids, radius=1)",
            "store.around(tenant, ids, radius=1, now=T0)",
            "Orchestrator(stores)",
            "Orchestrator(stores, clock=fixed_clock)",
        ]
    )
    names = [name for _, name in wall_clock_calls(source)]
    assert names == [
        "utc_now",
        "datetime.now",
        "datetime.datetime.now",
        "date.today",
        "time.time",
        "MemoryQuery",
        "store.around",
        "Orchestrator",
    ]

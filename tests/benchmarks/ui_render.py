"""Time to first render of the trace viewer's pages over a SQLite store of 100,000 traces.

    python -m tests.benchmarks.ui_render --db /tmp/ui-100k.db            # builds it once
    python -m tests.benchmarks.ui_render --db /tmp/ui-100k.db --rounds 9

The store holds real traces: five turns the orchestrator ran
(:mod:`tests.ui.turns`: three ended turns, another agent's, one degraded),
copied under new ids into ``--traces`` traces (two agents, 90% and 10%; 500
users; sessions of 20 turns; 5% degraded; one turn every 6 seconds), written
through the store. ``prefrontal ui --db`` serves it in a subprocess on
127.0.0.1. For each page the script times, ``--rounds`` times, the whole
HTTP answer (request sent to body read, with httpx), then opens the page in
Debian's Chromium (Playwright) and reads the browser's own
``first-contentful-paint``. Prints JSON (medians and maxima in
milliseconds); it measures and never fails on a figure.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from datetime import timedelta
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import anyio
import httpx

from prefrontal.stores import sqlite
from prefrontal.stores.traces import TraceQuery
from prefrontal.traces.models import TurnStatus, TurnTrace
from tests.servers.harness import free_port, running, server_env
from tests.ui.turns import write_turns

AGENTS = ("atlas", "orion")
USERS = 500
SESSION_TURNS = 20
STEP = timedelta(seconds=6)


async def _templates() -> list[TurnTrace]:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "turns.db"
        await write_turns(path)
        stores = sqlite.open_stores(path)
        try:
            return await stores.traces.list(TraceQuery(limit=100))
        finally:
            await stores.aclose()


def _copy(template: TurnTrace, n: int, start: Any) -> TurnTrace:
    session = n // SESSION_TURNS
    agent = AGENTS[1] if session % 10 == 9 else AGENTS[0]
    degraded = n % 20 == 7
    return template.model_copy(
        update={
            "turn_id": f"T{n:09d}",
            "parent_turn_id": f"T{n - 1:09d}" if n % SESSION_TURNS else None,
            "agent_id": agent,
            "user_id": f"user-{session % USERS}",
            "session_id": f"session-{session}",
            "started_at": start + n * STEP,
            "status": TurnStatus.DEGRADED if degraded else TurnStatus.OK,
        }
    )


async def build(path: Path, count: int) -> float:
    """Write ``count`` traces into a new SQLite store at ``path``; the seconds it took."""
    templates = await _templates()
    start = min(t.started_at for t in templates) - count * STEP
    began = time.perf_counter()
    stores = sqlite.open_stores(path)
    try:
        store = stores.traces
        for first in range(0, count, 2_000):
            batch = [
                _copy(templates[n % len(templates)], n, start)
                for n in range(first, min(count, first + 2_000))
            ]

            def write(connection: Any, batch: list[TurnTrace] = batch) -> None:
                for trace in batch:
                    store.put_in(connection, trace)  # type: ignore[attr-defined]

            await store.database.write(write, store="traces")  # type: ignore[attr-defined]
    finally:
        await stores.aclose()
    return time.perf_counter() - began


def _pages(count: int) -> dict[str, str]:
    middle = count // 2
    session = middle // SESSION_TURNS
    return {
        "list: newest": "/ui",
        "list: one agent": "/ui?agent=atlas",
        "list: one session": "/ui?"
        + urlencode({"agent": "atlas", "session": f"session-{session}"}),
        "list: one user": "/ui?" + urlencode({"agent": "atlas", "user": f"user-{session % USERS}"}),
        "list: degraded": "/ui?" + urlencode({"agent": "atlas", "status": "degraded"}),
        "turn": f"/ui/turns/T{middle:09d}",
        "compare": f"/ui/compare?a=T{middle:09d}&b=T{middle + 1:09d}",
    }


def _deep_page(client: httpx.Client) -> str:
    """The list's page after 50,000 turns, by its keyset link (``before=``)."""
    with_cursor = client.get("/ui").text.split('href="/ui?', 1)[1].split('"', 1)[0]
    return "/ui?" + with_cursor.replace("&amp;", "&")


def _http(base: str, pages: dict[str, str], rounds: int) -> dict[str, dict[str, float]]:
    figures: dict[str, dict[str, float]] = {}
    with httpx.Client(base_url=base, timeout=60) as client:
        pages = {**pages, "list: next page": _deep_page(client)}
        for name, path in pages.items():
            client.get(path)  # one warm-up: the file's pages in the OS cache
            times = []
            for _ in range(rounds):
                began = time.perf_counter()
                answer = client.get(path)
                times.append((time.perf_counter() - began) * 1000)
                assert answer.status_code == 200, (path, answer.status_code)
            figures[name] = {"median_ms": statistics.median(times), "max_ms": max(times)}
    return figures


def _browser(base: str, pages: dict[str, str], rounds: int) -> dict[str, dict[str, float]]:
    from playwright.sync_api import sync_playwright

    from tests.ui.test_browser import CHROMIUM, FLAGS

    figures: dict[str, dict[str, float]] = {}
    script = "performance.getEntriesByName('first-contentful-paint')[0].startTime"
    with tempfile.TemporaryDirectory() as profile, sync_playwright() as playwright:
        browser = playwright.chromium.launch_persistent_context(
            # The pages forbid every script; the measuring one is let through.
            profile,
            executable_path=CHROMIUM,
            headless=True,
            args=FLAGS,
            bypass_csp=True,
        )
        for name in ("list: newest", "list: one session", "turn"):
            paints = []
            for _ in range(rounds):
                tab = browser.new_page()
                tab.goto(base + pages[name], wait_until="load")
                tab.wait_for_function(
                    "performance.getEntriesByName('first-contentful-paint').length"
                )
                paints.append(float(tab.evaluate(script)))
                tab.close()
            figures[name] = {"median_ms": statistics.median(paints), "max_ms": max(paints)}
        browser.close()
    return figures


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--db", type=Path, required=True, help="The store (built if missing).")
    parser.add_argument("--traces", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args(argv)
    report: dict[str, Any] = {"traces": args.traces}
    if not args.db.exists():
        report["build_s"] = round(anyio.run(build, args.db, args.traces), 1)
    report["db_mb"] = round(args.db.stat().st_size / 1e6)
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    command = ["ui", "--db", str(args.db), "--port", str(port)]
    with running(command, server_env(test_clock=False), f"{base}/ui"):
        pages = _pages(args.traces)
        report["http_answer"] = _http(base, pages, args.rounds)
        report["first_contentful_paint"] = _browser(base, pages, args.rounds)
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()

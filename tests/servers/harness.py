"""Servers in subprocesses on 127.0.0.1, their keys, and one scripted session to run through each.

:func:`http_server` starts ``prefrontal serve http`` (``mcp_http_server``:
``prefrontal serve mcp --transport http``) on a free loopback port with the
test clock set (``PREFRONTAL_SERVE_TEST_CLOCK``), waits until it answers, and
stops it with SIGTERM at exit. :func:`run_session` drives one ten-turn
session through any :class:`Session` (HTTP, MCP, or in-process) and returns
what a caller sees, so that two sessions can be compared.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any, Protocol

import httpx

from prefrontal.demo import DEMO_AGENT, DEMO_USER
from prefrontal.serving.determinism import TEST_CLOCK_ENV
from prefrontal.serving.keys import KeyGrant, Right, hash_key

START = datetime(2026, 11, 22, 10, 0, tzinfo=UTC)
"""Where the servers' test clock starts (each operation moves it 30 s on)."""

DEADLINE_MS = 60_000
"""The test servers' turn deadline: long, so that a busy machine slows turns without cutting them."""
DEADLINE = ("--deadline-ms", str(DEADLINE_MS))

AGENT_KEY = "pf_test_atlas_maya_and_sam"
OTHER_AGENT_KEY = "pf_test_other_agent"
MAYA_ONLY_KEY = "pf_test_atlas_maya_only"
SAM_ONLY_KEY = "pf_test_atlas_sam_only"
CURATOR_KEY = "pf_test_atlas_curator"
"""Every user of the agent; may read, write and write shared memory (not erase)."""
READ_ONLY_KEY = "pf_test_atlas_read_only"


def keys_document() -> str:
    """The test keys as the server reads them (hashes only)."""
    grants = [
        KeyGrant(
            name="atlas", sha256=hash_key(AGENT_KEY), agent_id=DEMO_AGENT, users=(DEMO_USER, "sam")
        ),
        KeyGrant(name="other", sha256=hash_key(OTHER_AGENT_KEY), agent_id="orion", users=("*",)),
        KeyGrant(
            name="maya", sha256=hash_key(MAYA_ONLY_KEY), agent_id=DEMO_AGENT, users=(DEMO_USER,)
        ),
        KeyGrant(name="sam", sha256=hash_key(SAM_ONLY_KEY), agent_id=DEMO_AGENT, users=("sam",)),
        KeyGrant(
            name="curator",
            sha256=hash_key(CURATOR_KEY),
            agent_id=DEMO_AGENT,
            users=("*",),
            rights=(Right.READ, Right.WRITE, Right.WRITE_SHARED),
        ),
        KeyGrant(
            name="reader",
            sha256=hash_key(READ_ONLY_KEY),
            agent_id=DEMO_AGENT,
            users=(DEMO_USER,),
            rights=(Right.READ,),
        ),
    ]
    return '{"keys": [' + ", ".join(g.model_dump_json() for g in grants) + "]}"


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def server_env(*, test_clock: bool = True, **extra: str) -> dict[str, str]:
    """The environment of a test server: ours, the test clock, no inherited keys."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PREFRONTAL_")}
    clock = {TEST_CLOCK_ENV: START.isoformat()} if test_clock else {}
    return env | clock | {"NO_COLOR": "1"} | extra


@contextmanager
def running(
    args: list[str], env: dict[str, str], ready_url: str
) -> Iterator[subprocess.Popen[str]]:
    """``python -m prefrontal ARGS`` until the block ends; ready once ``ready_url`` answers.

    Its output goes to a temporary file (a pipe nobody reads could fill and stall it).
    """
    with tempfile.TemporaryFile("w+") as log:
        process = subprocess.Popen(
            [sys.executable, "-m", "prefrontal", *args],
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            text=True,
        )
        try:
            _wait_until_answering(process, ready_url, log)
            yield process
        finally:
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:  # pragma: no cover - a hung server fails the test
                process.kill()
                process.wait()


def _wait_until_answering(
    process: subprocess.Popen[str], url: str, log: IO[str], timeout_s: float = 30
) -> None:
    limit = time.monotonic() + timeout_s
    while time.monotonic() < limit:
        if process.poll() is not None:
            log.seek(0)
            raise AssertionError(f"the server exited with {process.returncode}: {log.read()}")
        try:
            httpx.get(url, timeout=1.0)
            return
        except httpx.TransportError:
            time.sleep(0.1)
    raise AssertionError(f"the server did not answer {url} within {timeout_s} s")


@contextmanager
def http_server(
    db: Path | str, *options: str, test_clock: bool = True, **extra_env: str
) -> Iterator[tuple[str, subprocess.Popen[str]]]:
    """``prefrontal serve http`` on ``db`` with the test keys: its base URL and process."""
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    env = server_env(test_clock=test_clock, PREFRONTAL_API_KEYS=keys_document(), **extra_env)
    args = ["serve", "http", "--host", "127.0.0.1", "--port", str(port), "--db", str(db)]
    args.extend(options or DEADLINE)
    with running(args, env, f"{base}/healthz") as process:
        yield base, process


@contextmanager
def mcp_http_server(db: Path) -> Iterator[str]:
    """``prefrontal serve mcp --transport http`` on ``db`` with the test keys: its MCP URL."""
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    env = server_env(PREFRONTAL_API_KEYS=keys_document())
    args = ["serve", "mcp", "--transport", "http", "--port", str(port), "--db", str(db), *DEADLINE]
    with running(args, env, f"{base}/mcp"):
        yield f"{base}/mcp"


class Session(Protocol):
    """The six operations, as one transport offers them; results as plain JSON-like dicts."""

    async def start(self, message: str, session_id: str) -> dict[str, Any]: ...

    async def end(self, turn_id: str, reply: str) -> dict[str, Any]: ...

    async def recall(self, query: str, session_id: str) -> dict[str, Any]: ...

    async def remember(self, content: str) -> dict[str, Any]: ...

    async def forget(self, item_id: str) -> dict[str, Any]: ...

    async def trace(self, turn_id: str) -> dict[str, Any]: ...


PHASE_STATUSES = {"ok", "degraded", "failed", "timeout", "cancelled", "skipped"}

MESSAGES = (
    "Can we still make the December 3 launch?",
    "What is blocking the payments migration?",
    "Remind me what Priya said about the vendor contract.",
    "And the December 3 launch checklist, where are we?",
    "Let's plan the Lisbon offsite agenda.",
    "Who is joining the Lisbon offsite?",
    "Back to payments: is the rollback plan written?",
    "Summarise my open goals for this week.",
    "What did we decide about the launch date?",
    "Thanks, anything else I should know before Friday?",
)


async def run_session(session: Session, session_id: str = "s-remote") -> list[dict[str, Any]]:
    """Ten turns: start, trace, end and recall each; remember on even turns, forget on some.

    Returns, in order, what each call gave back, without timings or the statuses that
    follow from them (which differ run to run).
    """
    seen: list[dict[str, Any]] = []
    remembered: list[str] = []
    for n, message in enumerate(MESSAGES):
        turn = await session.start(message, session_id)
        seen.append({"start": _turn_view(turn)})
        trace = await session.trace(turn["turn_id"])
        assert {p["status"] for p in trace["phases"]} <= PHASE_STATUSES
        # Names only: a phase over its time budget on a busy machine is timing, not content.
        seen.append({"trace": [p["name"] for p in trace["phases"]]})
        ended = await session.end(turn["turn_id"], f"Reply {n}: noted, here is what I know.")
        seen.append({"end": {k: ended[k] for k in ("turn_id", "written")}})
        recalled = await session.recall(message, session_id)
        seen.append({"recall": _recall_view(recalled)})
        if n % 2 == 0:
            memory = await session.remember(f"Maya mentioned item {n} while asking: {message}")
            remembered.append(memory["item_id"])
            seen.append({"remember": {k: memory[k] for k in ("item_id", "content")}})
        if n in (5, 9):
            forgotten = await session.forget(remembered.pop(0))
            seen.append({"forget": forgotten})
    return seen


def _turn_view(turn: dict[str, Any]) -> dict[str, Any]:
    """What a turn gave, less its status: ``degraded`` on a slow machine is timing, not content."""
    return {k: turn[k] for k in ("turn_id", "text", "total_tokens", "budget")}


def _recall_view(recalled: dict[str, Any]) -> dict[str, Any]:
    return {
        "mode": recalled["mode"],
        "reason": recalled["reason"],
        "ids": [m["item_id"] for m in recalled["memories"]],
    }


DEFAULT_USER = DEMO_USER

"""A server over a PostgreSQL that does not answer: it starts, not ready, and refuses turns with a wait.

The convention of a pod under Kubernetes: the process starts and answers
``/healthz`` (it is alive, so it is not restarted in a loop), ``/readyz``
answers 503 (it is taken out of rotation), one line on standard error
names the database (password masked) and why, and a turn that still
reaches it is refused with 503 and ``Retry-After`` instead of running on
stores that cannot answer.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import time

import httpx

from tests.servers.harness import AGENT_KEY, free_port, keys_document, server_env

TURN = {"user_id": "maya", "session_id": "s1", "user_input": "What is on this week?"}


def test_an_unreachable_postgres_starts_not_ready_and_turns_get_503_with_retry_after() -> None:
    closed = free_port()  # nothing listens there
    port = free_port()
    dsn = f"postgresql://prefrontal:hunter2@127.0.0.1:{closed}/memory"
    env = server_env(test_clock=False, PREFRONTAL_API_KEYS=keys_document())
    args = ["serve", "http", "--port", str(port), "--db", dsn]
    process = subprocess.Popen(
        [sys.executable, "-m", "prefrontal", *args],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    assert process.stderr is not None
    base = f"http://127.0.0.1:{port}"
    try:
        warning = process.stderr.readline()
        started = process.stderr.readline()
        limit = time.monotonic() + 60
        while True:
            try:
                alive = httpx.get(f"{base}/healthz", timeout=5)
                break
            except httpx.TransportError:
                assert time.monotonic() < limit, "the server never answered"
                time.sleep(0.1)
        ready = httpx.get(f"{base}/readyz", timeout=10)
        headers = {"Authorization": f"Bearer {AGENT_KEY}"}
        turn = httpx.post(f"{base}/v1/turns", json=TURN, headers=headers, timeout=10)
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=30)
        rest = process.stderr.read()
        process.stderr.close()

    assert warning.startswith("warning: the stores at ")
    assert f"postgresql://prefrontal:***@127.0.0.1:{closed}/memory" in warning
    assert "do not answer (" in warning and "not ready" in warning
    assert "hunter2" not in warning + started + rest
    assert started.startswith(f"prefrontal HTTP API on {base}")
    assert alive.status_code == 200
    assert ready.status_code == 503
    assert turn.status_code == 503, turn.text
    assert turn.headers["Retry-After"] == "1"
    assert turn.headers["Content-Type"] == "application/problem+json"
    assert "warning: the stores" not in rest  # said once

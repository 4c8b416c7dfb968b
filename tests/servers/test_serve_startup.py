"""Starting a server: the bound address, one-line errors, masked passwords, keys files, workers."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from prefrontal.serving.keys import KeyRing
from tests.servers.harness import AGENT_KEY, keys_document, server_env
from tests.servers.test_serve_command import prefrontal

KEYS = keys_document()


def _started(args: list[str], env: dict[str, str]) -> tuple[subprocess.Popen[str], str]:
    """``prefrontal ARGS`` in the background, and its first line on standard error."""
    process = subprocess.Popen(
        [sys.executable, "-m", "prefrontal", *args],
        stderr=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        text=True,
        env=env,
    )
    assert process.stderr is not None
    return process, process.stderr.readline()


def _stopped(process: subprocess.Popen[str]) -> None:
    process.send_signal(signal.SIGTERM)
    process.wait(timeout=30)
    if process.stderr is not None:
        process.stderr.close()


def test_port_zero_prints_the_bound_port_once_it_answers(tmp_path: Path) -> None:
    env = server_env(test_clock=False, PREFRONTAL_API_KEYS=KEYS)
    args = ["serve", "http", "--port", "0", "--db", str(tmp_path / "x.db")]
    process, line = _started(args, env)
    try:
        url = line.split(" on ")[1].split()[0]
        assert not url.endswith(":0")
        assert httpx.get(f"{url}/healthz", timeout=10).status_code == 200
    finally:
        _stopped(process)


def test_a_port_in_use_is_one_line(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = str(taken.getsockname()[1])
        env = server_env(test_clock=False, PREFRONTAL_API_KEYS=KEYS)
        db = str(tmp_path / "x.db")
        http = prefrontal("serve", "http", "--port", port, "--db", db, env=env)
        mcp = prefrontal("serve", "mcp", "--transport", "http", "--port", port, "--db", db)
    for done in (http, mcp):
        assert done.returncode == 2
        assert done.stderr.strip().splitlines() == [
            f"error: cannot listen on 127.0.0.1:{port}: the address is in use"
        ]


def test_a_file_that_is_not_a_database_is_one_line(tmp_path: Path) -> None:
    text = tmp_path / "notes.txt"
    text.write_text("root:x:0:0:root:/root:/bin/bash\n", encoding="utf-8")
    mcp = prefrontal("serve", "mcp", "--db", str(text))
    http = prefrontal("serve", "http", "--db", str(text), env=server_env(PREFRONTAL_API_KEYS=KEYS))
    for done in (mcp, http):
        assert done.returncode == 2
        assert done.stderr.strip() == f"error: --db {text}: not a SQLite database"


def test_a_bad_option_is_named(tmp_path: Path) -> None:
    done = prefrontal(
        "serve", "http", "--budget", "-5", env=server_env(COLUMNS="200", PREFRONTAL_API_KEYS=KEYS)
    )
    assert done.returncode == 2
    assert "--budget" in done.stderr and "Traceback" not in done.stderr


def test_the_password_of_a_database_url_is_masked(tmp_path: Path) -> None:
    env = server_env(test_clock=False, PREFRONTAL_API_KEYS=KEYS)
    url = "postgresql://prefrontal:hunter2@127.0.0.1:1/prefrontal"
    process, line = _started(["serve", "http", "--port", "0", "--db", url], env)
    _stopped(process)
    assert "hunter2" not in line and "prefrontal:***@127.0.0.1:1" in line


def test_new_key_appends_a_valid_entry_to_a_keys_file(tmp_path: Path) -> None:
    path = tmp_path / "keys.json"
    env = server_env(test_clock=False)
    made = [
        prefrontal("serve", "new-key", "--agent", "atlas", "--user", user, "--keys-file", str(path))
        for user in ("maya", "sam")
    ]
    keys = [done.stdout.split()[1] for done in made]
    ring = KeyRing.load(path, environ=env)
    assert len(json.loads(path.read_text(encoding="utf-8"))["keys"]) == 2
    assert [ring.authenticate(key) is not None for key in keys] == [True, True]
    assert oct(path.stat().st_mode & 0o777) == "0o600"


def test_two_workers_serve_one_port_and_stop_together(tmp_path: Path) -> None:
    env = server_env(test_clock=False, PREFRONTAL_API_KEYS=KEYS)
    db = str(tmp_path / "x.db")
    args = ["serve", "http", "--port", "0", "--db", db, "--workers", "2"]
    process, line = _started(args, env)
    url = line.split(" on ")[1].split()[0]
    port = url.rsplit(":", 1)[1]
    try:
        auth = {"Authorization": f"Bearer {AGENT_KEY}"}
        body = {"user_id": "maya", "content": "Maya cycles to work"}
        statuses = set()
        for _ in range(20):
            with httpx.Client(base_url=url, headers=auth, timeout=30) as client:
                statuses.add(client.post("/v1/memories", json=body).status_code)
        assert statuses == {201}
        deadline = time.monotonic() + 30
        while len(_listeners(port)) < 2 and time.monotonic() < deadline:
            time.sleep(0.1)
        assert len(_listeners(port)) == 2
    finally:
        _stopped(process)
    deadline = time.monotonic() + 15
    while _listeners(port) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _listeners(port) == []


def _listeners(port: str) -> list[str]:
    """The processes listening on ``port`` on this machine (from /proc)."""
    wanted = f":{int(port):04X}"
    with open("/proc/net/tcp", encoding="ascii") as table:
        rows = [line.split() for line in table.readlines()[1:]]
    return [row[9] for row in rows if row[1].endswith(wanted) and row[3] == "0A"]


pytestmark = pytest.mark.skipif(os.name != "posix", reason="signals and /proc")

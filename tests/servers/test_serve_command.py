"""``prefrontal serve``: keys made and refused on the command line, before any server starts."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from prefrontal.serving.keys import KeyRing, hash_key
from tests.servers.harness import server_env


def prefrontal(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """``python -m prefrontal ARGS`` with no keys in its environment unless given."""
    return subprocess.run(
        [sys.executable, "-m", "prefrontal", *args],
        capture_output=True,
        text=True,
        env=env or server_env(test_clock=False, COLUMNS="200"),
        timeout=60,
        check=False,
    )


def test_new_key_prints_a_key_and_an_entry_holding_only_its_hash(tmp_path: Path) -> None:
    """The entry names the agent and users, carries the key's SHA-256, and loads as a keys file."""
    done = prefrontal("serve", "new-key", "--agent", "atlas", "--user", "maya", "--user", "sam")
    assert done.returncode == 0, done.stderr
    lines = dict(line.split(":", 1) for line in done.stdout.splitlines())
    key, entry = lines["key"].strip(), json.loads(lines["entry"])
    assert key.startswith("pf_") and key not in lines["entry"]
    assert entry["sha256"] == hash_key(key)
    assert (entry["agent_id"], entry["users"]) == ("atlas", ["maya", "sam"])
    path = tmp_path / "keys.json"
    path.write_text(json.dumps({"keys": [entry]}), encoding="utf-8")
    assert KeyRing.load(path, environ={}).authenticate(key) is not None


def test_new_key_names_the_modes_and_refuses_a_reserved_name() -> None:
    """``--mode`` lands in the entry; a key named like the agent is refused with status 2."""
    done = prefrontal(
        "serve", "new-key", "--agent", "atlas", "--user", "maya", "--right", "read",
        "--mode", "training", "--name", "trainer",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    entry = json.loads(dict(line.split(":", 1) for line in done.stdout.splitlines())["entry"])
    assert (entry["rights"], entry["modes"]) == (["read"], ["training"])
    refused = prefrontal(
        "serve", "new-key", "--agent", "atlas", "--user", "maya", "--name", "Agent"
    )
    assert refused.returncode == 2
    assert "reserved" in refused.stderr and "Traceback" not in refused.stderr


def test_serve_http_without_keys_refuses_to_start(tmp_path: Path) -> None:
    """With no keys configured the HTTP server exits with status 2 and says how to make one."""
    done = prefrontal("serve", "http", "--port", "1", "--db", str(tmp_path / "x.db"))
    assert done.returncode == 2
    assert "no API keys" in done.stderr and "prefrontal serve new-key" in done.stderr


def test_a_bad_keys_file_is_named(tmp_path: Path) -> None:
    """A keys file that is not a keys document stops the server with the file's name."""
    path = tmp_path / "keys.json"
    path.write_text('{"keys": [{"key": "plain text"}]}', encoding="utf-8")
    done = prefrontal("serve", "http", "--keys-file", str(path), "--db", str(tmp_path / "x.db"))
    assert done.returncode == 2
    assert f"{path} is not a keys document" in done.stderr.replace("\n", "")

"""Install the built wheel into a clean virtual environment outside the checkout and use it.

``python -m tests.packaging.install_check DIST`` takes the wheel in ``DIST``
(what ``make dist`` built), makes a new virtual environment in a temporary
directory, installs ``prefrontal[server,mcp]`` from the wheel there (its
dependencies from the package registry, as a user's ``pip install`` would;
with ``uv`` when it is beside the interpreter),
and from a temporary working directory, with nothing of the checkout on the
path:

1. checks that ``prefrontal`` imports from the new environment;
2. runs ``prefrontal demo`` and checks its turn is ready for the router;
3. applies an agent file, serves it with ``prefrontal serve http`` on
   127.0.0.1 and asks for a turn over HTTP, checking the answer.

It prints the wheel's size and each step's time, and exits non-zero on the
first failure. ``make install-check`` runs it; ``make test`` runs that.
"""

from __future__ import annotations

import argparse
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx

from prefrontal.serving.keys import KeyGrant, hash_key

EXTRAS = "server,mcp"
KEY = "pf_install_check_key"
AGENT_FILE = """\
[agent]
id = "atlas"
name = "Atlas"
description = "A launch-planning assistant."
current_mode = "plan"

[rules]
safety_policies = ["Never share credentials."]

[[modes]]
name = "plan"

[[goals]]
id = "launch"
title = "Ship the December 3 launch"
priority = 0.8
"""


def clean_env() -> dict[str, str]:
    """This process's environment without anything that would put the checkout on the path."""
    dropped = ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")
    env = {
        k: v for k, v in os.environ.items() if k not in dropped and not k.startswith("PREFRONTAL_")
    }
    return env | {"NO_COLOR": "1"}


def run(args: list[str], cwd: Path, env: dict[str, str] | None = None) -> str:
    """``args`` in ``cwd``; its output, or ``SystemExit`` with it on failure."""
    done = subprocess.run(
        args, cwd=cwd, env=env or clean_env(), capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        raise SystemExit(
            f"{' '.join(args)} failed ({done.returncode}):\n{done.stdout}{done.stderr}"
        )
    return done.stdout


def timed(label: str, started: float) -> None:
    """Print how long ``label`` took since ``started``."""
    print(f"{label}: {time.perf_counter() - started:.1f} s", flush=True)


def the_wheel(dist: Path) -> Path:
    """The one wheel in ``dist``."""
    wheels = sorted(dist.glob("prefrontal-*.whl"))
    if len(wheels) != 1:
        raise SystemExit(f"expected one prefrontal wheel in {dist}, found {len(wheels)}")
    return wheels[0]


def installer() -> str | None:
    """The ``uv`` beside this interpreter (``make`` installs it in ``.venv``), or None."""
    return shutil.which("uv", path=str(Path(sys.executable).parent))


def install(wheel: Path, root: Path) -> Path:
    """A new virtual environment under ``root`` with ``wheel[EXTRAS]`` installed: its bin dir.

    With :func:`installer`'s ``uv`` the environment is made without pip and ``uv``
    installs into it (the same wheel and the same requirements, resolved from the
    same registry, in a small share of pip's CPU time, which ``make test`` spends
    beside the suite); without it, the environment's own pip installs.
    """
    started = time.perf_counter()
    venv = root / "venv"
    bin_dir = venv / "bin"
    target = f"{wheel}[{EXTRAS}]"
    uv = installer()
    if uv is None:
        run([sys.executable, "-m", "venv", str(venv)], cwd=root)
        run([str(bin_dir / "pip"), "install", "--quiet", target], cwd=root)
    else:
        run([sys.executable, "-m", "venv", "--without-pip", str(venv)], cwd=root)
        run([uv, "pip", "install", "--quiet", "--python", str(bin_dir / "python"), target], root)
    timed(f"install ({'pip' if uv is None else 'uv'})", started)
    return bin_dir


def check_import(bin_dir: Path, work: Path) -> None:
    """``prefrontal`` imports from the new environment, not from the checkout."""
    where = run(
        [str(bin_dir / "python"), "-c", "import prefrontal; print(prefrontal.__file__)"], work
    )
    if not where.strip().startswith(str(bin_dir.parent)):
        raise SystemExit(f"prefrontal imported from {where.strip()}, not the new environment")
    print(f"imports from: {where.strip()}")


def check_demo(bin_dir: Path, work: Path) -> None:
    """``prefrontal demo`` runs a turn that is ready for the router."""
    started = time.perf_counter()
    shown = run([str(bin_dir / "prefrontal"), "demo"], work)
    if "ready_for_router=True" not in shown or "You are Atlas" not in shown:
        raise SystemExit(f"the demo turn is not ready for the router:\n{shown}")
    timed("prefrontal demo", started)


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@contextmanager
def serving(bin_dir: Path, work: Path, db: Path) -> Iterator[str]:
    """``prefrontal serve http`` on ``db`` with one key for ``atlas``: its base URL."""
    grant = KeyGrant(name="check", sha256=hash_key(KEY), agent_id="atlas", users=("maya",))
    env = clean_env() | {"PREFRONTAL_API_KEYS": '{"keys": [' + grant.model_dump_json() + "]}"}
    port = free_port()
    args = [str(bin_dir / "prefrontal"), "serve", "http", "--host", "127.0.0.1"]
    args += ["--port", str(port), "--db", str(db)]
    with (work / "server.log").open("w") as log:
        server = subprocess.Popen(args, cwd=work, env=env, stdout=log, stderr=subprocess.STDOUT)
        try:
            yield _answering(f"http://127.0.0.1:{port}", server, work / "server.log")
        finally:
            server.terminate()
            server.wait(timeout=30)


def _answering(base: str, server: subprocess.Popen[bytes], log: Path) -> str:
    limit = time.monotonic() + 60
    while time.monotonic() < limit:
        if server.poll() is not None:
            raise SystemExit(f"the server exited with {server.returncode}:\n{log.read_text()}")
        try:
            httpx.get(f"{base}/healthz", timeout=1.0)
            return base
        except httpx.TransportError:
            time.sleep(0.2)
    raise SystemExit(f"the server did not answer within 60 s:\n{log.read_text()}")


def check_served_turn(bin_dir: Path, work: Path) -> None:
    """An agent file applied, served over HTTP, and one turn asked for: ready, with its rules."""
    started = time.perf_counter()
    (work / "agent.toml").write_text(AGENT_FILE)
    db = work / "agent.db"
    run([str(bin_dir / "prefrontal"), "agent", "apply", "agent.toml", "--db", str(db)], work)
    with serving(bin_dir, work, db) as base:
        body = {"user_id": "maya", "session_id": "s-1", "user_input": "Where is the launch?"}
        answer = httpx.post(
            f"{base}/v1/turns", json=body, headers={"Authorization": f"Bearer {KEY}"}, timeout=30
        )
    if answer.status_code != 200:
        raise SystemExit(f"POST /v1/turns answered {answer.status_code}: {answer.text[:400]}")
    turn = answer.json()
    if turn.get("ready_for_router") is not True or "Never share credentials" not in answer.text:
        raise SystemExit(
            f"the served turn lacks the agent's rules or is not ready: {answer.text[:400]}"
        )
    timed("served turn (apply, start the server, one turn)", started)


def main(argv: list[str] | None = None) -> None:
    """Install the wheel in ``DIST`` into a clean environment and run the demo and a served turn."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dist", type=Path, help="The folder holding the built wheel.")
    options = parser.parse_args(argv)
    wheel = the_wheel(options.dist.resolve())
    print(f"wheel: {wheel.name}, {wheel.stat().st_size / 1024:.0f} KiB")
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="prefrontal-install-") as scratch:
        root = Path(scratch)
        work = root / "work"
        work.mkdir()
        bin_dir = install(wheel, root)
        check_import(bin_dir, work)
        check_demo(bin_dir, work)
        check_served_turn(bin_dir, work)
    timed("install check, in all", started)


if __name__ == "__main__":
    main()

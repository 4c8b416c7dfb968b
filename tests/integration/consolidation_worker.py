"""A fork server for the consolidation crash test: one import, one forked child per run.

Run as a script. It imports prefrontal once, then reads one JSON request per
line on stdin: ``{"db": path, "now": iso time, "call": k, "mode": m, "delay": s}``.
For each it forks a child that runs :func:`prefrontal.formation.consolidate`
on that SQLite file, with its working-memory and episodic stores wrapped so
that the child SIGKILLs itself at store call ``k`` (counting from 1):
``before`` the call starts, ``after`` it returned, or ``during`` it (a timer
thread fires ``delay`` seconds after the call starts). ``k = 0`` kills
nothing. The server answers each request with one JSON line:
``{"status": exit code or -signal, "calls": store calls made}`` (the calls
are known only for a child that was not killed).
"""

from __future__ import annotations

import json
import os
import signal
import sys
import tempfile
import threading
import traceback
from datetime import UTC, datetime
from typing import Any

import anyio

from prefrontal.buffer.tokens import count_tokens
from prefrontal.formation import consolidate
from prefrontal.stores import SessionKey, sqlite

KEY = SessionKey(agent_id="assistant", user_id="ada", session_id="s-1")


def die() -> None:
    os.kill(os.getpid(), signal.SIGKILL)


class Killer:
    """Counts store calls and kills the process at the chosen one."""

    def __init__(self, call: int, mode: str, delay: float) -> None:
        self.call, self.mode, self.delay = call, mode, delay
        self.calls = 0

    def wrap(self, store: Any, methods: tuple[str, ...]) -> Any:
        killer = self

        class Wrapped:
            def __getattr__(self, name: str) -> Any:
                attribute = getattr(store, name)
                if name not in methods:
                    return attribute

                async def call(*args: Any, **kwargs: Any) -> Any:
                    killer.calls += 1
                    here = killer.calls == killer.call
                    if here and killer.mode == "before":
                        die()
                    if here and killer.mode == "during":
                        threading.Timer(killer.delay, die).start()
                    result = await attribute(*args, **kwargs)
                    if here and killer.mode == "after":
                        die()
                    return result

                return call

        return Wrapped()


async def run(request: dict[str, Any]) -> int:
    killer = Killer(request["call"], request["mode"], request["delay"])
    stores = sqlite.open_stores(request["db"])
    wrapped = stores.replace(
        working_memory=killer.wrap(stores.working_memory, ("load", "save")),
        episodic=killer.wrap(stores.episodic, ("get", "put", "put_many")),
    )
    try:
        await consolidate(wrapped, KEY, now=datetime.fromisoformat(request["now"]))
    finally:
        await stores.aclose()
    return killer.calls


def child(request: dict[str, Any], pipe: int) -> None:
    try:
        calls = anyio.run(run, request)
        os.write(pipe, str(calls).encode())
        code = 0
    except BaseException:
        traceback.print_exc()
        code = 1
    os._exit(code)


async def warm_up() -> None:
    """Open a scratch file once, so that children fork with every module loaded."""
    with tempfile.TemporaryDirectory() as scratch:
        stores = sqlite.open_stores(f"{scratch}/warm.db")
        try:
            await consolidate(stores, KEY, now=datetime(2026, 1, 1, tzinfo=UTC))
        finally:
            await stores.aclose()


def main() -> None:
    count_tokens("loaded once, before the children fork")
    anyio.run(warm_up)
    for line in sys.stdin:
        request = json.loads(line)
        read, write = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(read)
            child(request, write)
        os.close(write)
        _, status = os.waitpid(pid, 0)
        calls = os.read(read, 64).decode() or "-1"
        os.close(read)
        code = -os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)
        print(json.dumps({"status": code, "calls": int(calls)}), flush=True)


if __name__ == "__main__":
    main()

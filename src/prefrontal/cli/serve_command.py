"""``prefrontal serve``: the HTTP API (``serve http``) and the MCP server (``serve mcp``).

API keys are read from a file (``--keys-file`` or ``PREFRONTAL_API_KEYS_FILE``)
or from ``PREFRONTAL_API_KEYS``, never from the command line;
``serve new-key`` makes one and prints the entry to put in the keys file.
The servers need their extras (``pip install 'prefrontal[server]'`` and
``'prefrontal[mcp]'``).
"""

from __future__ import annotations

import ctypes
import gc
import importlib.util
import os
import signal
import subprocess
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import anyio
import typer
from rich.console import Console
from typer.core import TyperCommand

from prefrontal.agents.api import AGENT_HOLDER
from prefrontal.agents.file import AgentFile
from prefrontal.cli.agent_command import AgentFileOption, applied_then, checked_file
from prefrontal.cli.stores import DbOption, build, shown
from prefrontal.config import MAX_TOKEN_BUDGET, MIN_TOKEN_BUDGET, AdmissionConfig
from prefrontal.demo.seed import DEMO_AGENT, DEMO_USER
from prefrontal.errors import ConfigurationError
from prefrontal.gc_tuning import freeze_start_up
from prefrontal.serving.keys import (
    DEFAULT_RIGHTS,
    KeyRing,
    Right,
    append_entry,
    key_entry,
    new_key,
)
from prefrontal.serving.service import Service
from prefrontal.stores.tenancy import Tenant
from prefrontal.traces.observe import Observer
from prefrontal.turn import OrchestratorConfig

serve_app = typer.Typer(no_args_is_help=True, help="Serve prefrontal over HTTP or MCP.")

KeysFileOption = typer.Option(
    None,
    "--keys-file",
    help="JSON file of API keys (their SHA-256 hashes); default: PREFRONTAL_API_KEYS_FILE, "
    "then PREFRONTAL_API_KEYS.",
)
BudgetOption = typer.Option(
    4_000,
    "--budget",
    min=MIN_TOKEN_BUDGET,
    max=MAX_TOKEN_BUDGET,
    help="Token budget of a turn.",
)
DeadlineOption = typer.Option(
    1_000.0, "--deadline-ms", min=1.0, max=600_000.0, help="Deadline of a turn's phases."
)
InFlightOption = typer.Option(
    32,
    "--max-turns-in-flight",
    min=1,
    max=100_000,
    help="Turns one process runs at once; more wait briefly, then get 503 with Retry-After.",
)
PR_SET_PDEATHSIG = 1
SQLITE_HEADER = b"SQLite format 3\x00"
GcOption = typer.Option(
    50_000,
    "--gc-threshold",
    min=0,
    help="The collector's first-generation threshold; the objects of the start-up are "
    "frozen once serving (0: Python's default collector); see docs/production.md.",
)
NewKeyFileOption = typer.Option(
    None,
    "--keys-file",
    help="Add the entry to this keys file (created if missing) instead of printing it.",
)
UsersOption = typer.Option(
    ..., "--user", help="A user the key may act for (repeat; '*' for every user)."
)
RightsOption = typer.Option(
    [],
    "--right",
    help="A right of the key (repeat): read, write, write_shared, erase, administer "
    "(default: read, write, erase).",
)
ModesOption = typer.Option(
    [],
    "--mode",
    help="A mode the key may pick for a turn without the administer right (repeat).",
)


def _need(module: str, extra: str, err: Console) -> None:
    if importlib.util.find_spec(module) is None:
        err.print(
            f"error: this needs the {extra!r} extra: pip install 'prefrontal[{extra}]'",
            markup=False,
            highlight=False,
            soft_wrap=True,
        )
        raise typer.Exit(2)


def _collect_less_often(threshold: int) -> None:
    """Raise the collector's first threshold: many turns at once allocate many small objects."""
    if threshold:
        gc.set_threshold(threshold, 20, 20)


def _started_up(threshold: int) -> None:
    """Once the server accepts connections: with a ``--gc-threshold``, the start-up's objects
    frozen (:func:`~prefrontal.gc_tuning.freeze_start_up`); ``0`` leaves the collector as
    Python sets it."""
    if threshold:
        freeze_start_up()


def _keys(path: Path | None, err: Console) -> KeyRing:
    try:
        return KeyRing.load(path)
    except ConfigurationError as error:
        err.print(f"error: {error}", markup=False, highlight=False)
        raise typer.Exit(2) from None


def _fail(error: ConfigurationError, err: Console) -> typer.Exit:
    err.print(f"error: {error}", markup=False, highlight=False, soft_wrap=True)
    return typer.Exit(2)


def _check_database_file(db: str) -> None:
    """A file that exists must be a SQLite database (or empty), said before the server starts."""
    path = Path(db)
    if "://" in db or db == ":memory:" or not path.exists():
        return
    try:
        with path.open("rb") as file:
            header = file.read(len(SQLITE_HEADER))
    except OSError as error:
        raise ConfigurationError(f"--db {db}: cannot read it: {error.strerror}") from None
    if header and header != SQLITE_HEADER:
        raise ConfigurationError(f"--db {db}: not a SQLite database")


def _service(
    db: str,
    budget: int,
    deadline_ms: float,
    err: Console,
    observers: Sequence[Observer] = (),
    max_turns_in_flight: int = 32,
    record_context: bool = False,
) -> Service:
    config = OrchestratorConfig(
        total_token_budget=budget,
        deadline_ms=deadline_ms,
        admission=AdmissionConfig(max_turns_in_flight=max_turns_in_flight),
        record_context=record_context,
    )
    try:
        _check_database_file(db)
        stores = build(db)
    except ConfigurationError as error:
        raise _fail(error, err) from None
    return Service.build(stores, config, observers=observers, environ=os.environ)


def _die_with_parent() -> None:
    """In a worker: receive SIGTERM when the first process ends, however it ends (Linux)."""
    if sys.platform == "linux":
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM)


@contextmanager
def _workers(count: int, port: int) -> Iterator[None]:
    """``count - 1`` more processes of this command on ``port``, stopped with this one.

    uvicorn ends the first process by re-raising the signal that stopped it,
    so the workers are also told to stop when it dies (``PR_SET_PDEATHSIG``).
    """
    args = [*sys.argv[1:], "--port", str(port), "--workers", "1", "--reuse-port"]
    children = [
        subprocess.Popen(
            [sys.executable, "-m", "prefrontal", *args],
            preexec_fn=_die_with_parent,
        )
        for _ in range(count - 1)
    ]
    try:
        yield
    finally:
        for child in children:
            child.terminate()
        for child in children:
            child.wait()


@serve_app.command("http")
def serve_http(
    host: str = typer.Option("127.0.0.1", "--host", help="Address to listen on."),
    port: int = typer.Option(8080, "--port", min=0, max=65_535, help="Port to listen on."),
    db: str = DbOption,
    keys_file: Path | None = KeysFileOption,
    max_body_bytes: int = typer.Option(
        1_048_576, "--max-body-bytes", min=1_024, help="Largest request body accepted."
    ),
    budget: int = BudgetOption,
    deadline_ms: float = DeadlineOption,
    gc_threshold: int = GcOption,
    max_turns_in_flight: int = InFlightOption,
    workers: int = typer.Option(
        1,
        "--workers",
        min=1,
        max=64,
        help="Server processes on the one port (over PostgreSQL, or SQLite on one machine).",
    ),
    reuse_port: bool = typer.Option(False, "--reuse-port", hidden=True),
    agent_file: Path | None = AgentFileOption,
    record_context: bool = typer.Option(
        False,
        "--record-context",
        help="Keep each turn's context as sent in its trace, for the viewer (see docs/traces.md).",
    ),
) -> None:
    """Serve the HTTP API (OpenAPI at /openapi.json); every /v1/ call needs an API key."""
    err = Console(stderr=True)
    _collect_less_often(gc_threshold)
    _need("fastapi", "server", err)
    agent = checked_file(agent_file)
    from prefrontal.serving.http import create_app, installed_metrics
    from prefrontal.serving.runner import bind, serve

    keys = _keys(keys_file, err)
    if not len(keys):
        err.print(
            "error: no API keys: set --keys-file, PREFRONTAL_API_KEYS_FILE or "
            "PREFRONTAL_API_KEYS (make one with `prefrontal serve new-key`)"
        )
        raise typer.Exit(2)
    if agent is not None and not any(g.agent_id == agent.agent.id for g in keys.grants):
        err.print(
            f"error: --agent-file declares agent {agent.agent.id!r} but no API key acts for it "
            f"(keys act for: {', '.join(sorted({g.agent_id for g in keys.grants}))})",
            markup=False,
            highlight=False,
            soft_wrap=True,
        )
        raise typer.Exit(2)
    metrics = installed_metrics()
    observers = [metrics.observer] if metrics is not None else []
    service = _service(db, budget, deadline_ms, err, observers, max_turns_in_flight, record_context)
    app = create_app(service, keys, max_body_bytes=max_body_bytes, metrics=metrics)
    try:
        sock = bind(host, port, reuse_port=reuse_port or workers > 1)
    except ConfigurationError as error:
        raise _fail(error, err) from None
    every = f", {workers} worker processes" if workers > 1 else ""

    def ready(url: str) -> None:
        _started_up(gc_threshold)
        if not reuse_port:
            err.print(
                f"prefrontal HTTP API on {url} ({len(keys)} key(s), db {shown(db)}{every})",
                markup=False,
                highlight=False,
                soft_wrap=True,
            )

    async def checked_then_served() -> None:
        reason = await service.readiness.check()
        if reason is not None and not reuse_port:
            err.print(_unreachable(db, reason), markup=False, highlight=False, soft_wrap=True)
        await serve(app, host=host, port=port, sock=sock, on_ready=ready)

    with _workers(workers, sock.getsockname()[1]):
        anyio.run(applied_then, service, agent, checked_then_served)


def _unreachable(db: str, reason: str) -> str:
    """The one line saying the server starts on stores that do not answer (password masked)."""
    password = urlsplit(db).password if "://" in db else None
    said = reason.replace(password, "***") if password else reason
    return (
        f"warning: the stores at {shown(db)} do not answer ({said}); serving anyway, "
        "not ready (/readyz and turns answer 503 with Retry-After) until they do"
    )


class ToolsHelp(TyperCommand):
    """``serve mcp --help``: the command's help, then every tool the server lists."""

    def format_help(self, ctx: Any, formatter: Any) -> None:
        """The usual help, followed by the tools, each with its first sentence.

        (``Any``: the context and formatter are those of typer's own copy of click.)
        """
        super().format_help(ctx, formatter)
        tools = tool_summaries()
        if not tools:
            return
        with formatter.section(f"Tools ({len(tools)})"):
            formatter.write_dl(tools)


def tool_summaries() -> list[tuple[str, str]]:
    """``(name, first sentence)`` of every MCP tool, read from the tools themselves.

    Empty when the ``mcp`` extra is not installed.
    """
    if importlib.util.find_spec("mcp") is None:
        return []
    from prefrontal.serving.mcp_tools import listed_tools

    return [(name, summary) for name, summary in listed_tools()]


@serve_app.command("mcp", cls=ToolsHelp)
def serve_mcp(
    transport: str = typer.Option(
        "stdio", "--transport", help="'stdio' (a desktop client starts it) or 'http'."
    ),
    agent: str | None = typer.Option(
        None,
        "--agent",
        help=f"The agent the tools act for (default: the --agent-file's, else {DEMO_AGENT}).",
    ),
    user: str = typer.Option(DEMO_USER, "--user", help="The user the tools act for."),
    db: str = DbOption,
    host: str = typer.Option("127.0.0.1", "--host", help="With --transport http: address."),
    port: int = typer.Option(8765, "--port", min=0, max=65_535, help="With --transport http."),
    keys_file: Path | None = KeysFileOption,
    budget: int = BudgetOption,
    deadline_ms: float = DeadlineOption,
    agent_file: Path | None = AgentFileOption,
) -> None:
    """Serve the MCP tools (listed below) for one agent and one user."""
    err = Console(stderr=True)
    _need("mcp", "mcp", err)
    from prefrontal.serving.mcp_run import run_http, run_stdio

    if transport not in ("stdio", "http"):
        err.print(f"error: --transport must be 'stdio' or 'http', not {transport!r}")
        raise typer.Exit(2)
    declared = checked_file(agent_file)
    agent = served_agent(agent, declared, err)
    try:
        tenant = Tenant(agent_id=agent, user_id=user)
    except ValueError:
        err.print("error: --agent and --user must be ids: not blank, no control characters")
        raise typer.Exit(2) from None
    if user == AGENT_HOLDER:
        err.print(f"error: --user {user!r} is reserved; name a user of the agent")
        raise typer.Exit(2)
    service = _service(db, budget, deadline_ms, err)
    if transport == "stdio":
        anyio.run(applied_then, service, declared, lambda: run_stdio(service, tenant))
        return
    keys = _keys(keys_file, err)

    def ready(url: str) -> None:
        line = f"prefrontal MCP on {url}/mcp for {agent}/{user}"
        err.print(line, markup=False, highlight=False, soft_wrap=True)

    try:
        anyio.run(
            applied_then,
            service,
            declared,
            lambda: run_http(service, tenant, host=host, port=port, keys=keys, on_ready=ready),
        )
    except ConfigurationError as error:
        raise _fail(error, err) from None


def served_agent(agent: str | None, declared: AgentFile | None, err: Console) -> str:
    """The agent to serve: ``--agent``, else the agent file's, else the demo agent.

    Exit status 2 when ``--agent`` names another agent than the file declares.
    """
    if declared is None:
        return agent or DEMO_AGENT
    if agent is not None and agent != declared.agent.id:
        err.print(
            f"error: --agent {agent!r} but --agent-file declares {declared.agent.id!r}: "
            "drop --agent, or name the file's agent",
            markup=False,
            highlight=False,
        )
        raise typer.Exit(2)
    return declared.agent.id


@serve_app.command("new-key")
def serve_new_key(
    agent: str = typer.Option(..., "--agent", help="The agent the key acts for."),
    users: list[str] = UsersOption,
    name: str = typer.Option("key", "--name", help="A label for the key in logs."),
    rights: list[Right] = RightsOption,
    modes: list[str] = ModesOption,
    keys_file: Path | None = NewKeyFileOption,
) -> None:
    """Make an API key: prints the key (give it to the client) and its keys-file entry."""
    err = Console(stderr=True)
    key = new_key()
    granted = tuple(rights) or DEFAULT_RIGHTS
    try:
        entry = key_entry(key, name=name, agent_id=agent, users=users, rights=granted, modes=modes)
    except ConfigurationError as error:
        raise _fail(error, err) from None
    typer.echo(f"key:   {key}")
    if keys_file is None:
        typer.echo(f"entry: {entry}")
        return
    try:
        append_entry(keys_file, entry)
    except ConfigurationError as error:
        raise _fail(error, err) from None
    typer.echo(f"entry added to {keys_file}")

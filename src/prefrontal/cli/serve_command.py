"""``prefrontal serve``: the HTTP API (``serve http``) and the MCP server (``serve mcp``).

API keys are read from a file (``--keys-file`` or ``PREFRONTAL_API_KEYS_FILE``)
or from ``PREFRONTAL_API_KEYS``, never from the command line;
``serve new-key`` makes one and prints the entry to put in the keys file.
The servers need their extras: ``prefrontal[server]`` and ``prefrontal[mcp]``.
"""

from __future__ import annotations

import gc
import importlib.util
import os
from collections.abc import Sequence
from pathlib import Path

import anyio
import typer
from rich.console import Console

from prefrontal.cli.stores import DbOption, build
from prefrontal.demo.seed import DEMO_AGENT, DEMO_USER
from prefrontal.errors import ConfigurationError
from prefrontal.serving.keys import DEFAULT_RIGHTS, KeyRing, Right, key_entry, new_key
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
BudgetOption = typer.Option(4_000, "--budget", help="Token budget of a turn.")
DeadlineOption = typer.Option(1_000.0, "--deadline-ms", help="Deadline of a turn's phases.")
GcOption = typer.Option(
    50_000,
    "--gc-threshold",
    min=0,
    help="The collector's first-generation threshold (0: Python's default); see "
    "docs/production.md.",
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


def _need(module: str, extra: str, err: Console) -> None:
    if importlib.util.find_spec(module) is None:
        err.print(f"error: this needs the {extra!r} extra: pip install 'prefrontal[{extra}]'")
        raise typer.Exit(2)


def _collect_less_often(threshold: int) -> None:
    """Raise the collector's first threshold: many turns at once allocate many small objects."""
    if threshold:
        gc.set_threshold(threshold, 20, 20)


def _keys(path: Path | None, err: Console) -> KeyRing:
    try:
        return KeyRing.load(path)
    except ConfigurationError as error:
        err.print(f"error: {error}", markup=False, highlight=False)
        raise typer.Exit(2) from None


def _service(
    db: str, budget: int, deadline_ms: float, err: Console, observers: Sequence[Observer] = ()
) -> Service:
    config = OrchestratorConfig(total_token_budget=budget, deadline_ms=deadline_ms)
    try:
        stores = build(db)
    except ConfigurationError as error:
        err.print(f"error: {error}", markup=False, highlight=False)
        raise typer.Exit(2) from None
    return Service.build(stores, config, observers=observers, environ=os.environ)


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
) -> None:
    """Serve the HTTP API (OpenAPI at /openapi.json); every /v1/ call needs an API key."""
    err = Console(stderr=True)
    _collect_less_often(gc_threshold)
    _need("fastapi", "server", err)
    from prefrontal.serving.http import create_app, installed_metrics
    from prefrontal.serving.runner import serve

    keys = _keys(keys_file, err)
    if not len(keys):
        err.print(
            "error: no API keys: set --keys-file, PREFRONTAL_API_KEYS_FILE or "
            "PREFRONTAL_API_KEYS (make one with `prefrontal serve new-key`)"
        )
        raise typer.Exit(2)
    metrics = installed_metrics()
    observers = [metrics.observer] if metrics is not None else []
    service = _service(db, budget, deadline_ms, err, observers)
    app = create_app(service, keys, max_body_bytes=max_body_bytes, metrics=metrics)
    err.print(f"prefrontal HTTP API on http://{host}:{port} ({len(keys)} key(s), db {db})")
    anyio.run(lambda: serve(app, host=host, port=port))


@serve_app.command("mcp")
def serve_mcp(
    transport: str = typer.Option(
        "stdio", "--transport", help="'stdio' (a desktop client starts it) or 'http'."
    ),
    agent: str = typer.Option(DEMO_AGENT, "--agent", help="The agent the tools act for."),
    user: str = typer.Option(DEMO_USER, "--user", help="The user the tools act for."),
    db: str = DbOption,
    host: str = typer.Option("127.0.0.1", "--host", help="With --transport http: address."),
    port: int = typer.Option(8765, "--port", min=0, max=65_535, help="With --transport http."),
    keys_file: Path | None = KeysFileOption,
    budget: int = BudgetOption,
    deadline_ms: float = DeadlineOption,
) -> None:
    """Serve the MCP tools (start_turn, end_turn, recall, remember, forget, trace)."""
    err = Console(stderr=True)
    _need("mcp", "mcp", err)
    from prefrontal.serving.mcp_run import run_http, run_stdio

    if transport not in ("stdio", "http"):
        err.print(f"error: --transport must be 'stdio' or 'http', not {transport!r}")
        raise typer.Exit(2)
    tenant = Tenant(agent_id=agent, user_id=user)
    service = _service(db, budget, deadline_ms, err)
    if transport == "stdio":
        anyio.run(run_stdio, service, tenant)
        return
    keys = _keys(keys_file, err)
    err.print(f"prefrontal MCP on http://{host}:{port}/mcp for {agent}/{user}")
    try:
        anyio.run(lambda: run_http(service, tenant, host=host, port=port, keys=keys))
    except ConfigurationError as error:
        err.print(f"error: {error}", markup=False, highlight=False)
        raise typer.Exit(2) from None


@serve_app.command("new-key")
def serve_new_key(
    agent: str = typer.Option(..., "--agent", help="The agent the key acts for."),
    users: list[str] = UsersOption,
    name: str = typer.Option("key", "--name", help="A label for the key in logs."),
    rights: list[Right] = RightsOption,
) -> None:
    """Make an API key: prints the key (give it to the client) and its keys-file entry."""
    key = new_key()
    granted = tuple(rights) or DEFAULT_RIGHTS
    typer.echo(f"key:   {key}")
    typer.echo(f"entry: {key_entry(key, name=name, agent_id=agent, users=users, rights=granted)}")

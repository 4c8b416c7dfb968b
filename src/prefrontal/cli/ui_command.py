"""``prefrontal ui``: the trace viewer alone, on loopback, over one database."""

from __future__ import annotations

import importlib.util
from functools import partial
from pathlib import Path

import anyio
import typer
from rich.console import Console

from prefrontal.cli.stores import MEMORY, SCHEME, DbOption, opened, shown

LOOPBACK = "127.0.0.1"


def ui(
    db: str = DbOption,
    port: int = typer.Option(8765, "--port", min=0, max=65_535, help="Port to listen on."),
) -> None:
    """Serve the trace viewer on http://127.0.0.1:PORT/ui (loopback only, no key needed)."""
    err = Console(stderr=True)
    if importlib.util.find_spec("fastapi") is None or importlib.util.find_spec("jinja2") is None:
        err.print(
            "error: the viewer needs the server extra: pip install 'prefrontal[server]'",
            markup=False,
            highlight=False,
        )
        raise typer.Exit(2)
    if db != MEMORY and not SCHEME.match(db) and not Path(db).is_file():
        err.print(f"error: --db: no database at {db}", markup=False, highlight=False)
        raise typer.Exit(2)
    from prefrontal.serving.runner import serve
    from prefrontal.serving.ui.local import local_app

    app = local_app(partial(opened, db, create=False))
    err.print(f"prefrontal trace viewer on http://{LOOPBACK}:{port}/ui (db {shown(db)})")
    anyio.run(lambda: serve(app, host=LOOPBACK, port=port))

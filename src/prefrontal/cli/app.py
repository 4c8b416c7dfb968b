"""The ``prefrontal`` command line: ``demo`` (more commands join it here)."""

from __future__ import annotations

import anyio
import typer

from prefrontal.demo.run import run_demo
from prefrontal.demo.seed import SAMPLE_INPUT
from prefrontal.stores.set import Stores

app = typer.Typer(no_args_is_help=True, add_completion=False, help=__doc__)


@app.callback()
def _root() -> None:
    """prefrontal: an LLM agent's working memory, assembled at the start of every turn."""


@app.command()
def demo(
    message: str = typer.Argument(SAMPLE_INPUT, help="The user's message for the turn."),
) -> None:
    """Seed the demo agent, run one real turn, and show the bundle and its phases."""

    async def go() -> None:
        stores = Stores.in_memory()
        try:
            await run_demo(stores, message)
        finally:
            await stores.aclose()

    anyio.run(go)


def main() -> None:
    """Entry point of the ``prefrontal`` script."""
    app()

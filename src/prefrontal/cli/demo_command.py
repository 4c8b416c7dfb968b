"""``prefrontal demo``: seed the demo agent in memory, run one turn, show it."""

from __future__ import annotations

import anyio
import typer

from prefrontal.demo.run import run_demo
from prefrontal.demo.seed import SAMPLE_INPUT
from prefrontal.stores.set import Stores


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

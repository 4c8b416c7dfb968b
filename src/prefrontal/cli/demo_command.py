"""``prefrontal demo``: seed the demo agent in memory, run one turn, show it and its timeline."""

from __future__ import annotations

import anyio
import typer
from rich.console import Console

from prefrontal.cli.timeline import timeline
from prefrontal.demo.run import run_demo
from prefrontal.demo.seed import SAMPLE_INPUT
from prefrontal.stores.set import Stores
from prefrontal.turn import TurnResult


def demo(
    message: str = typer.Argument(SAMPLE_INPUT, help="The user's message for the turn."),
) -> None:
    """Seed the demo agent, run one real turn, and show the bundle and its phases."""

    console = Console()

    async def go() -> TurnResult:
        stores = Stores.in_memory()
        try:
            return await run_demo(stores, message, console=console)
        finally:
            await stores.aclose()

    result = anyio.run(go)
    console.rule("Timeline")
    console.print(timeline(result.trace, console.width))

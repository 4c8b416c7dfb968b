"""The viewer alone, over one database: what ``prefrontal ui`` serves on loopback.

No key is asked for: the server listens on ``127.0.0.1`` only, so the
viewer is whoever can already read the database file.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager

from fastapi import FastAPI
from starlette.responses import RedirectResponse

from prefrontal.agents import AgentStateAPI
from prefrontal.memory.api import MemoryAPI
from prefrontal.serving.ui.agent_pages import AgentSource
from prefrontal.serving.ui.router import ui_router
from prefrontal.stores.set import Stores
from prefrontal.stores.traces import TraceStore


def local_app(open_stores: Callable[[], AbstractAsyncContextManager[Stores]]) -> FastAPI:
    """The viewer over the stores ``open_stores()`` opens for the application's lifetime,
    with the agent pages (a memory forgotten there leaves these stores)."""
    held: list[Stores] = []

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        async with open_stores() as stores:
            held.append(stores)
            try:
                yield
            finally:
                held.clear()

    def traces() -> TraceStore:
        return held[0].traces

    def memory() -> MemoryAPI:
        return MemoryAPI(held[0])

    def agents() -> AgentStateAPI:
        return AgentStateAPI(held[0])

    app = FastAPI(lifespan=lifespan, openapi_url=None, docs_url=None, redoc_url=None)
    app.include_router(ui_router(traces, None, agents=AgentSource(memory, agents)))

    @app.get("/", include_in_schema=False)
    async def root() -> RedirectResponse:
        return RedirectResponse("/ui", status_code=307)

    return app

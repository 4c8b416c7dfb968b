"""``GET /v1/memories`` (a user's memories, a keyset page at a time) and a memory's history.

Both need the ``read`` right, as recall does; a key bound to some users
acts for those only (:func:`~prefrontal.serving.http.auth.tenant_for`), and
every page is read under the tenancy rules of the user asked for: its own
memories and the agent's shared ones, never another user's private ones.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal

from fastapi import Depends, FastAPI, HTTPException, Path, Query, Request
from pydantic import Field

from prefrontal.ids import Id
from prefrontal.memory.listing import CURSOR_PATTERN, MemoryVersion
from prefrontal.serving.http.auth import grant_of, require, tenant_for
from prefrontal.serving.http.responses import CALLER, INVALID_PARAMS, answers, not_found
from prefrontal.serving.keys import KeyGrant, KeyRing
from prefrontal.serving.models import MemoryOut, Out
from prefrontal.serving.rights import Operation, needed
from prefrontal.serving.service import Service
from prefrontal.stores.long_term import MemoryKind
from prefrontal.stores.memory_pages import MAX_PAGE
from prefrontal.stores.tenancy import Scope

UserQuery = Annotated[Id, Query(description="The user whose memories are listed.")]
AgentQuery = Annotated[Id | None, Query(description="Optional: the API key's agent.")]
ItemPath = Annotated[Id, Path(description="The memory's `item_id`.")]
NO_MEMORY = not_found("No memory by that id for this user")


class ListedMemoryOut(MemoryOut):
    """A memory of a page, with the store that holds it."""

    store: Literal["episodic", "semantic"]


class MemoryPageOut(Out):
    """A page of memories, newest first."""

    memories: list[ListedMemoryOut]
    next_cursor: str | None = Field(
        description="Pass as `cursor` (with the same filters) for the next page; "
        "`null` on the last page."
    )


class VersionOut(Out):
    """One version of a memory."""

    version: int = Field(description="1 for the first version.")
    content: str
    importance: float
    scope: str
    kind: str
    tags: tuple[str, ...]
    author: str | None = Field(description="Who wrote this version (an API key's name).")
    at: datetime = Field(description="When this version was written.")
    changed: tuple[str, ...] = Field(
        description="The fields that differ from the version before; empty for the first."
    )
    current: bool

    @classmethod
    def of(cls, version: MemoryVersion) -> VersionOut:
        """The view of ``version``."""
        return cls(
            version=version.version,
            content=version.content,
            importance=version.importance,
            scope=version.scope.value,
            kind=version.kind.value,
            tags=version.tags,
            author=version.author,
            at=version.at,
            changed=version.changed,
            current=version.current,
        )


class HistoryOut(Out):
    """A memory's versions, oldest first, the current one last."""

    item_id: str
    store: Literal["episodic", "semantic"]
    versions: list[VersionOut]


def _caller(request: Request) -> KeyGrant:
    keys: KeyRing = request.app.state.keys
    return grant_of(request, keys)


Caller = Annotated[KeyGrant, Depends(_caller)]


def add_memory_pages(app: FastAPI, service: Service) -> None:
    """Add the two read routes over ``service``'s memory API to ``app``.

    On the application itself, not through an included router: ``GET`` and
    ``POST /v1/memories`` are then two routes of one router, and a 405's
    ``Allow`` names both (:func:`~prefrontal.serving.http.problems.allowed_methods`).
    """
    router = app
    memory = service.orchestrator.memory

    @router.get(
        "/v1/memories",
        tags=["memories"],
        responses=answers(
            200, "A page of the user's memories, newest first", INVALID_PARAMS, CALLER
        ),
    )
    async def list_memories(
        grant: Caller,
        user_id: UserQuery,
        agent_id: AgentQuery = None,
        limit: Annotated[int, Query(ge=1, le=MAX_PAGE, description="At most this many.")] = 50,
        cursor: Annotated[
            str | None,
            Query(
                max_length=2_000,
                pattern=CURSOR_PATTERN,
                description="The `next_cursor` of the page before.",
            ),
        ] = None,
        kind: Annotated[
            list[MemoryKind] | None, Query(description="Only these kinds (repeatable).")
        ] = None,
        store: Annotated[
            Literal["episodic", "semantic"] | None, Query(description="Only this store.")
        ] = None,
        scope: Annotated[Scope | None, Query(description="Only private or shared ones.")] = None,
    ) -> MemoryPageOut:
        """The memories the user may see (its own and the agent's shared ones), newest first.

        Live or not. Keyset paging: pass `next_cursor` back as `cursor`, with
        the same filters, for the next page; a page costs the same wherever it is."""
        tenant = tenant_for(grant, user_id, agent_id)
        require(grant, needed(Operation.LIST_MEMORIES))
        try:
            page = await memory.list(
                tenant, kinds=kind, store=store, scope=scope, limit=limit, after=cursor
            )
        except ValueError as error:
            raise HTTPException(422, str(error)) from None
        return MemoryPageOut(
            memories=[
                ListedMemoryOut(**MemoryOut.of(m.item).model_dump(), store=m.store)
                for m in page.memories
            ],
            next_cursor=page.next_cursor,
        )

    @router.get(
        "/v1/memories/{item_id}/history",
        tags=["memories"],
        responses=answers(
            200, "The memory's versions, oldest first", INVALID_PARAMS, CALLER, NO_MEMORY
        ),
    )
    async def history(
        item_id: ItemPath, grant: Caller, user_id: UserQuery, agent_id: AgentQuery = None
    ) -> HistoryOut:
        """Each version of a memory: what it said, who wrote it, when, and what changed.

        Of another user's shared memory, only the versions that were shared."""
        tenant = tenant_for(grant, user_id, agent_id)
        require(grant, needed(Operation.LIST_MEMORIES))
        versions = await memory.history(tenant, item_id)
        return HistoryOut(
            item_id=item_id,
            store=versions[-1].store,
            versions=[VersionOut.of(version) for version in versions],
        )

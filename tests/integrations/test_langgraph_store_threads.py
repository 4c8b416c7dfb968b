"""``PrefrontalStore``'s sync methods from many threads at once, on a fresh store each time.

The sync methods run on one blocking portal started by the first call;
threads that make that first call together must all get the same running
portal (never "This portal is not running"), directly and from parallel
sync nodes of a LangGraph graph.
"""

from __future__ import annotations

import operator
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Annotated, Any, TypedDict

import pytest

pytest.importorskip("langgraph")

from langgraph.graph import END, START, StateGraph
from langgraph.store.base import BaseStore

from prefrontal.integrations.langgraph import PrefrontalStore
from prefrontal.stores import Stores

THREADS = 12
ROUNDS = 15


def fresh_store() -> PrefrontalStore:
    return PrefrontalStore(Stores.in_memory(), agent_id="agent", user_id="user")


def test_first_sync_calls_from_many_threads_share_one_running_portal() -> None:
    """Twelve threads making a fresh store's first sync call together all succeed, round after round."""
    for _ in range(ROUNDS):
        store = fresh_store()
        start = threading.Barrier(THREADS)

        def write_and_read(
            n: int, store: PrefrontalStore = store, start: threading.Barrier = start
        ) -> Any:
            start.wait()
            store.put(("notes",), f"k{n}", {"text": f"note {n}"})
            return store.get(("notes",), f"k{n}")

        with ThreadPoolExecutor(THREADS) as pool:
            items = list(pool.map(write_and_read, range(THREADS)))
        assert [item.value for item in items] == [{"text": f"note {n}"} for n in range(THREADS)]
        assert len(store.search(("notes",), limit=100)) == THREADS
        store.close()


class Fan(TypedDict):
    done: Annotated[list[str], operator.add]


def test_parallel_sync_nodes_share_a_fresh_store() -> None:
    """Eight sync nodes of one graph step, each writing through the injected store, all succeed."""
    width = 8

    def writer(n: int) -> Any:
        def node(state: Fan, *, store: BaseStore) -> dict[str, list[str]]:
            store.put(("graph",), f"n{n}", {"n": n})
            return {"done": [str(n)]}

        return node

    for _ in range(ROUNDS):
        builder = StateGraph(Fan)
        for n in range(width):
            builder.add_node(f"w{n}", writer(n))
            builder.add_edge(START, f"w{n}")
            builder.add_edge(f"w{n}", END)
        store = fresh_store()
        graph = builder.compile(store=store)
        result = graph.invoke({"done": []})
        assert sorted(result["done"]) == [str(n) for n in range(width)]
        found = store.search(("graph",), limit=100)
        assert sorted(item.key for item in found) == [f"n{n}" for n in range(width)]
        store.close()

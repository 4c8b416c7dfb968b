"""One registry of in-process caches: every one is in it, and erase and forget empty them all.

The report found 339 entries in six ``functools.lru_cache`` functions still
holding an erased user's text after erase: only the text caches were
registered. Now every function whose results ``src`` remembers goes through
:func:`prefrontal.forgetting.remembered`, a test fails on any other cache,
and the caches are searched object by object for the erased text.
"""

from __future__ import annotations

import ast
import gc
import importlib
import pkgutil
import types
from datetime import UTC, datetime
from pathlib import Path

import pytest

import prefrontal
from prefrontal import Orchestrator, Stores, TurnRequest
from prefrontal.forgetting import registered
from prefrontal.stores import Tenant

pytestmark = pytest.mark.anyio
T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
AGENT = "atlas"
SRC = Path(prefrontal.__file__).parent
CACHING = {"lru_cache", "cache"}
"""The ``functools`` names that remember results across calls (process-wide)."""


def _caches_in(path: Path) -> tuple[list[str], int]:
    """Where ``path`` uses ``functools``' caches (``file:line``), and how many functions it
    decorates with ``remembered``."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: list[str] = []
    decorated = 0
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module == "functools":
            found += [f"{path}:{node.lineno}" for a in node.names if a.name in CACHING]
        elif isinstance(node, ast.Attribute) and node.attr in CACHING:
            value = node.value
            if isinstance(value, ast.Name) and value.id == "functools":
                found.append(f"{path}:{node.lineno}")
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            for decorator in node.decorator_list:
                call = decorator.func if isinstance(decorator, ast.Call) else decorator
                if isinstance(call, ast.Name) and call.id == "remembered":
                    decorated += 1
    return found, decorated


def test_no_cache_in_src_escapes_the_registry() -> None:
    """``functools``' caches appear only in the registry, and every ``remembered`` function
    of ``src`` is registered once its module is imported."""
    unregistered: list[str] = []
    decorated = 0
    for path in sorted(SRC.rglob("*.py")):
        found, count = _caches_in(path)
        decorated += count
        if path != SRC / "forgetting.py":
            unregistered += found
    assert unregistered == []
    for module in pkgutil.walk_packages([str(SRC)], prefix="prefrontal."):
        if module.name.endswith("__main__"):  # runs the command line when imported
            continue
        try:
            importlib.import_module(module.name)
        except ImportError:  # an optional extra that is not installed
            continue
    _, functions = registered()
    assert decorated >= 15
    assert len(functions) == decorated


def holds(root: object, text: str) -> bool:
    """Whether ``text`` is in a string reachable from ``root`` (not through modules, classes
    or functions: those reach the whole program)."""
    seen: set[int] = set()
    stack = [root]
    while stack:
        obj = stack.pop()
        if id(obj) in seen:
            continue
        seen.add(id(obj))
        if isinstance(obj, str):
            if text in obj:
                return True
            continue
        if isinstance(obj, bytes | int | float | type | types.ModuleType | types.FunctionType):
            continue
        stack.extend(gc.get_referents(obj))
    return False


def holding(text: str) -> list[str]:
    """The registered caches and remembered functions holding ``text``, by name."""
    caches, functions = registered()
    named: list[tuple[str, object]] = [(type(cache).__name__, cache) for cache in caches]
    named += [(f"{f.__module__}.{f.__qualname__}", f) for f in functions]
    return sorted(name for name, cache in named if holds(cache, text))


def ask(user: str, words: str) -> TurnRequest:
    return TurnRequest(agent_id=AGENT, user_id=user, session_id="s1", user_input=words)


async def busy_turns(orchestrator: Orchestrator, user: str, marker: str) -> None:
    """Turns that cache ``marker`` everywhere a turn caches text: memories, inputs, replies,
    buffers, fragments, token counts."""
    tenant = Tenant(agent_id=AGENT, user_id=user)
    await orchestrator.memory.remember(tenant, f"{marker} likes green tea")
    for n in range(4):
        result = await orchestrator.start_turn(ask(user, f"does {marker} want tea, round {n}?"))
        await orchestrator.end_turn(result, f"Yes, {marker} wants green tea (round {n}).")
        await orchestrator.wait_background()
    await orchestrator.memory.recall(tenant, f"{marker} tea")


async def test_erase_leaves_the_erased_text_in_no_cache() -> None:
    """After turns that cache a user's text (remembered functions among the holders), erase
    leaves it in no registered cache nor remembered function; a bystander's text may stay."""
    marker = "qz" + "erasedcachemark"
    async with Orchestrator(Stores.in_memory(), clock=lambda: T0) as orchestrator:
        await busy_turns(orchestrator, "erased", marker)
        before = holding(marker)
        assert any("." in name for name in before), before  # remembered functions hold it
        await orchestrator.memory.erase(AGENT, "erased")
        assert holding(marker) == []


async def test_forget_leaves_the_forgotten_text_in_no_cache() -> None:
    """A memory's text searched and shown in turns is in no cache after it is forgotten."""
    marker = "qz" + "forgottencachemark"
    tenant = Tenant(agent_id=AGENT, user_id="forgetful")
    async with Orchestrator(Stores.in_memory(), clock=lambda: T0) as orchestrator:
        item = await orchestrator.memory.remember(tenant, f"the door code is {marker}")
        result = await orchestrator.start_turn(ask("forgetful", "what is the door code?"))
        assert marker in result.bundle.text
        assert holding(marker) != []
        assert await orchestrator.memory.forget(tenant, item.item_id)
        assert holding(marker) == []

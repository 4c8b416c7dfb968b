"""Every Python block of the documentation site, and every shell block of its guides, runs."""

from __future__ import annotations

import ast
import inspect
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread
import pytest

from tests.docs.code_blocks import (
    ROOT,
    RUN_SECTIONS,
    CodeBlock,
    blocks_of,
    pages_to_run,
    site_pages,
)

SHELL_TIMEOUT_S = 120


def test_the_guides_have_code_to_run() -> None:
    """Every tutorial and how-to page of the site has a block that runs, so none is untested."""
    sections = site_pages()
    guides = [page for page, section in sections.items() if section in RUN_SECTIONS]
    assert guides
    assert set(guides) <= set(pages_to_run())


@pytest.mark.parametrize("page", pages_to_run())
def test_page_code_blocks_run(
    page: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest
) -> None:
    """The page's blocks run in order, each Python block alone unless it continues the one before.

    A page that reads ``PREFRONTAL_DB`` gets a database of the test PostgreSQL
    server there (and is skipped where none can start).
    """
    monkeypatch.chdir(tmp_path)
    shutil.copytree(ROOT / "examples", tmp_path / "examples")
    blocks = blocks_of(page)
    if any("PREFRONTAL_DB" in block.source for block in blocks if block.runs):
        monkeypatch.setenv("PREFRONTAL_DB", request.getfixturevalue("postgres_dsn"))
    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    for namespace, block in _with_namespaces(blocks):
        if block.directive == "file":
            (tmp_path / block.argument).write_text(block.source, encoding="utf-8")
        elif block.runs and block.language == "python":
            anyio.run(_run_python, block, namespace)
        elif block.runs:
            _run_shell(block, tmp_path)


def _with_namespaces(blocks: list[CodeBlock]) -> list[tuple[dict[str, Any], CodeBlock]]:
    """Each block with the namespace it runs in: a new one, or the last one if it continues."""
    paired = []
    namespace: dict[str, Any] = {"__name__": "__docs__"}
    for block in blocks:
        if block.language == "python" and not block.continues:
            namespace = {"__name__": "__docs__"}
        paired.append((namespace, block))
    return paired


async def _run_python(block: CodeBlock, namespace: dict[str, Any]) -> None:
    code = compile(block.source, block.label, "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
    if code.co_flags & inspect.CO_COROUTINE:
        await eval(code, namespace)
    else:
        # In a worker thread, where a block may start its own event loop (anyio.run).
        await anyio.to_thread.run_sync(exec, code, namespace)


def _run_shell(block: CodeBlock, cwd: Path) -> None:
    done = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", block.source],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=SHELL_TIMEOUT_S,
        check=False,
    )
    assert done.returncode == 0, f"{block.label} exited {done.returncode}:\n{done.stderr[-2000:]}"


def test_a_continuing_block_follows_a_python_block() -> None:
    """Every block marked ``continues`` is Python right after another Python block of its page."""
    marked = 0
    for page in site_pages():
        everything = blocks_of(page)
        for block in everything:
            if block.continues:
                marked += 1
                before = everything[everything.index(block) - 1]
                assert block.language == "python" and before.language == "python", block.label
    assert marked


def test_a_block_alone_does_not_see_the_names_of_the_block_before() -> None:
    """A Python block not marked ``continues`` runs in a fresh namespace, so earlier names fail."""
    first = CodeBlock(page="p.md", line=1, language="python", source="x = 1\n")
    alone = CodeBlock(page="p.md", line=5, language="python", source="assert x == 1\n")
    going_on = CodeBlock(
        page="p.md", line=9, language="python", source="assert x == 1\n", directive="continues"
    )
    assert _namespaces_hold([first, going_on])
    with pytest.raises(NameError):
        _namespaces_hold([first, alone])


def _namespaces_hold(blocks: list[CodeBlock]) -> bool:
    for namespace, block in _with_namespaces(blocks):
        anyio.run(_run_python, block, namespace)
    return True

"""Every ```python block in docs/ runs as it is written (```py blocks are shown, not run)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
import structlog

DOCS = Path(__file__).parents[2] / "docs"
BLOCK = re.compile(r"^```python\n(.*?)^```", re.MULTILINE | re.DOTALL)


def blocks() -> list[tuple[str, str]]:
    return [
        (f"{page.name}#{n}", code)
        for page in sorted(DOCS.glob("*.md"))
        for n, code in enumerate(BLOCK.findall(page.read_text(encoding="utf-8")), start=1)
    ]


@pytest.fixture(autouse=True)
def _reset_structlog() -> Iterator[None]:
    yield
    structlog.reset_defaults()


def test_the_docs_have_runnable_examples() -> None:
    """The pages that promise code show some."""
    pages = {name.split("#")[0] for name, _ in blocks()}
    assert {"getting-started.md", "traces.md", "production.md", "store-backends.md"} <= pages


@pytest.mark.parametrize(("where", "code"), blocks(), ids=[name for name, _ in blocks()])
def test_doc_example_runs(where: str, code: str, capsys: pytest.CaptureFixture[str]) -> None:
    """The example runs without error (its own asserts included)."""
    exec(compile(code, where, "exec"), {"__name__": "__docs__"})

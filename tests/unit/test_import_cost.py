"""Starting prefrontal is cheap: the package and its command load no heavy module until used."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import prefrontal

SOURCE = Path(prefrontal.__file__).parents[1]

HEAVY = (
    "numpy",
    "structlog",
    "pydantic",
    "tiktoken",
    "fastapi",
    "starlette",
    "uvicorn",
    "asyncpg",
    "sqlite3",
    "anyio",
    "mcp",
    "prefrontal.stores",
    "prefrontal.orchestrator",
    "prefrontal.buffer",
    "prefrontal.config",
    "prefrontal.serving",
    "prefrontal.cli.turn_command",
    "prefrontal.cli.serve_command",
)
"""Modules a bare import or ``prefrontal --help`` must not load."""

PROBE = """
import json, sys
{code}
heavy = {heavy!r}
print(json.dumps(sorted(m for m in sys.modules if m in heavy or m.startswith(tuple(h + "." for h in heavy)))))
"""


def loaded_heavy_modules(code: str) -> list[str]:
    """The heavy modules loaded in a fresh interpreter after running ``code``."""
    environment = {**os.environ, "PYTHONPATH": str(SOURCE)}
    probe = PROBE.format(code=code, heavy=HEAVY)
    completed = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, env=environment, check=True
    )
    loaded: list[str] = json.loads(completed.stdout.strip().splitlines()[-1])
    return loaded


@pytest.mark.parametrize(
    "code",
    ["import prefrontal", "import prefrontal.cli", "from prefrontal.cli import app, main"],
)
def test_a_top_level_import_loads_no_heavy_module(code: str) -> None:
    """Importing the package or its command loads none of the stores, servers, numpy or models."""
    assert loaded_heavy_modules(code) == []


def test_the_command_lists_its_commands_without_loading_them() -> None:
    """``prefrontal --help`` lists every command without importing the modules that run them."""
    code = (
        "from typer.testing import CliRunner\n"
        "from prefrontal.cli import app\n"
        "result = CliRunner().invoke(app, ['--help'])\n"
        "assert result.exit_code == 0, result.output\n"
        "assert all(name in result.output for name in ('turn', 'serve', 'eval', 'agent'))\n"
    )
    assert loaded_heavy_modules(code) == []


def test_a_name_from_the_package_is_imported_on_first_use() -> None:
    """``from prefrontal import Orchestrator`` still gives the orchestrator, loading it then."""
    code = "from prefrontal import Orchestrator\nassert Orchestrator.__name__ == 'Orchestrator'"
    assert "prefrontal.orchestrator" in loaded_heavy_modules(code)


def test_an_unknown_name_is_an_attribute_error() -> None:
    """A name the package does not export raises AttributeError, as for any module."""
    with pytest.raises(AttributeError, match="no_such_name"):
        _ = prefrontal.no_such_name  # type: ignore[attr-defined]


def test_every_exported_name_has_a_home() -> None:
    """Each name in ``__all__`` is imported lazily from a module, and ``dir`` lists it."""
    assert sorted(prefrontal._HOMES) == sorted(prefrontal.__all__)
    assert set(prefrontal.__all__) <= set(dir(prefrontal))

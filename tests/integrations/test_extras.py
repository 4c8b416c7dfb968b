"""An integration imported without its extra fails with a one-line hint naming the extra."""

from __future__ import annotations

import importlib
import importlib.util
import sys
from types import ModuleType

import pytest

from prefrontal.integrations import extras


def test_a_missing_module_names_the_extra() -> None:
    with pytest.raises(ImportError) as raised:
        extras.require("prefrontal_no_such_framework", "langgraph")
    message = str(raised.value)
    assert "\n" not in message
    assert "pip install 'prefrontal[langgraph]'" in message


@pytest.mark.parametrize(
    ("module", "framework", "extra"),
    [
        ("prefrontal.integrations.langgraph", "langgraph", "langgraph"),
        ("prefrontal.integrations.openai_agents", "agents", "openai-agents"),
        ("prefrontal.integrations.pydantic_ai", "pydantic_ai", "pydantic-ai"),
        ("prefrontal.integrations.langchain_agent", "langchain", "langchain"),
        ("prefrontal.integrations.openai_agents_tools", "agents", "openai-agents"),
    ],
)
def test_each_integration_names_its_extra(
    module: str, framework: str, extra: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = importlib.util.find_spec

    def without(name: str, package: str | None = None) -> object:
        return None if name == framework else real(name, package)

    monkeypatch.setattr(importlib.util, "find_spec", without)
    for loaded in [name for name in sys.modules if name.startswith(module)]:
        monkeypatch.delitem(sys.modules, loaded)
    with pytest.raises(ImportError, match=rf"pip install 'prefrontal\[{extra}\]'"):
        importlib.import_module(module)
    assert not isinstance(sys.modules.get(module), ModuleType)

"""The one-line hint an integration raises when its optional extra is missing."""

from __future__ import annotations

import importlib.util


def require(module: str, extra: str) -> None:
    """Raise ``ImportError`` naming the extra to install when ``module`` is not importable."""
    if importlib.util.find_spec(module) is None:
        raise ImportError(
            f"prefrontal.integrations needs {module!r}: pip install 'prefrontal[{extra}]'"
        )

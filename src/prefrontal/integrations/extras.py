"""The one-line hint an integration raises when its optional extra is missing."""

from __future__ import annotations

import importlib.util


def require(module: str, extra: str) -> None:
    """Raise ``ImportError`` naming the extra to install when ``module`` is not importable."""
    try:
        found = importlib.util.find_spec(module)
    except ValueError:  # a module set to None in sys.modules: blocked, as if not installed
        found = None
    if found is None:
        raise ImportError(
            f"prefrontal.integrations needs {module!r}: pip install 'prefrontal[{extra}]'"
        )

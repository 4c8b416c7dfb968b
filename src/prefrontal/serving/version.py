"""The installed prefrontal's version, as the servers announce it."""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version


def package_version() -> str:
    """The installed prefrontal's version (``0+unknown`` when run from a bare source tree)."""
    try:
        return version("prefrontal")
    except PackageNotFoundError:  # pragma: no cover - running from a source tree
        return "0+unknown"

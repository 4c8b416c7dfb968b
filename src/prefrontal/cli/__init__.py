"""The ``prefrontal`` command."""

from prefrontal.cli.app import app, main

__all__ = ["app", "main"]

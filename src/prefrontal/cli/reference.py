"""The ``prefrontal`` command as a Click command, for generated references.

Typer builds its Click command on demand; the documentation site's command
line reference (``mkdocs-click``) reads this one.
"""

from __future__ import annotations

import typer.main

from prefrontal.cli.app import app

command = typer.main.get_command(app)
"""The whole ``prefrontal`` command tree."""

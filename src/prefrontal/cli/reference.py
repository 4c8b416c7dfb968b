"""The ``prefrontal`` command as a Click command, for generated references.

Typer builds its Click command on demand; the documentation site's command
line reference (``mkdocs-click``) reads this one.
"""

from __future__ import annotations

import typer.main

from prefrontal.cli.app import COMMANDS, app, load_command

command = typer.main.get_command(app)
"""The whole ``prefrontal`` command tree, every command loaded (the command itself loads lazily)."""
command.commands.update((name, load_command(name)) for name in COMMANDS)  # type: ignore[attr-defined]

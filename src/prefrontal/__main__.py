"""``python -m prefrontal``: the ``prefrontal`` command."""

from prefrontal.cli import main

main()

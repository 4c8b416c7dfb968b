"""Logging set-up for applications and the ``prefrontal`` command.

prefrontal logs through structlog and never configures logging on import: a
library leaves that to the application. Call :func:`configure` once at
start-up (the command line does) to get JSON lines in production and
readable, coloured lines in a terminal::

    import prefrontal.logging

    prefrontal.logging.configure()            # JSON unless stderr is a terminal
    prefrontal.logging.configure(json=True)   # always JSON

Turns are logged by :class:`prefrontal.traces.log.LogObserver`.
"""

from __future__ import annotations

import logging
import sys
from typing import TextIO

import structlog

LEVELS = ("debug", "info", "warning", "error", "critical")


def configure(
    json: bool | None = None, *, level: str = "info", stream: TextIO | None = None
) -> None:
    """Configure structlog globally: JSON or console lines at ``level`` and above, to ``stream``.

    ``json=None`` picks JSON when ``stream`` (default: standard error) is not
    a terminal. Safe to call again; the last call wins.
    """
    if level not in LEVELS:
        raise ValueError(f"level must be one of {LEVELS}, got {level!r}")
    out = stream if stream is not None else sys.stderr
    tty = out.isatty()
    as_json = not tty if json is None else json
    renderer: structlog.typing.Processor = (
        structlog.processors.JSONRenderer()
        if as_json
        else structlog.dev.ConsoleRenderer(colors=tty)
    )
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            structlog.processors.format_exc_info,
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(logging.getLevelName(level.upper())),
        logger_factory=structlog.PrintLoggerFactory(out),
        cache_logger_on_first_use=False,
    )

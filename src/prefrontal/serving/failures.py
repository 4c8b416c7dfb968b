"""Logging a failure nobody anticipated: once, in one line, the traceback only at debug.

Both servers use it, so that an operator reads the same line whichever
transport failed: the exception's type, the start of its message and the
place it was raised, at ``error``; the traceback at ``debug``.
"""

from __future__ import annotations

import traceback

import structlog

_log = structlog.get_logger("prefrontal.serving")
MAX_MESSAGE_CHARS = 300


def log_unexpected(error: BaseException, **where: str) -> None:
    """Log ``error`` once: a line at ``error`` (with ``where``), its traceback at ``debug``."""
    frames = traceback.extract_tb(error.__traceback__)
    raised_at = f"{frames[-1].filename}:{frames[-1].lineno}" if frames else "unknown"
    message = " ".join(str(error).split())[:MAX_MESSAGE_CHARS]
    _log.error(
        "unexpected_error",
        **where,
        error=f"{type(error).__name__}: {message}",
        raised_at=raised_at,
    )
    _log.debug("unexpected_error_traceback", traceback="".join(traceback.format_exception(error)))

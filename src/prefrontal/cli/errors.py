"""Any error a command meets, said in one line."""

from __future__ import annotations

from pydantic import ValidationError

from prefrontal.errors import PrefrontalError, StoreError


def innermost(error: BaseException) -> BaseException:
    """The first leaf of an exception group (a task group's failure), or ``error`` itself."""
    while isinstance(error, BaseExceptionGroup) and error.exceptions:
        error = error.exceptions[0]
    return error


def one_line(error: BaseException) -> str:
    """``error`` as one line: its message, with the store it came from or its type.

    prefrontal's own errors are messages for users; any other error is named
    by its type, since its message may not say what failed.
    """
    error = innermost(error)
    if isinstance(error, ValidationError):
        return invalid_fields(error)
    message = " ".join(str(error).split()) or "no message"
    if isinstance(error, StoreError):
        return f"{error.store} store: {message}"
    if isinstance(error, PrefrontalError):
        return message
    return f"{type(error).__name__}: {message} (--debug shows the traceback)"


def invalid_fields(error: ValidationError) -> str:
    """Each invalid field and what is wrong with it, on one line (no links, no input echoed)."""
    problems = []
    for problem in error.errors(include_url=False, include_input=False):
        where = ".".join(str(part) for part in problem["loc"]) or "input"
        problems.append(f"{where}: {problem['msg']}")
    return "; ".join(problems)

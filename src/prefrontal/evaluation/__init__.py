"""Evaluations of the assembled context (LoCoMo evidence recall within a token budget).

Reached through the ``prefrontal eval`` command; its modules are not a
library surface, so the package exports nothing.
"""

__all__: list[str] = []

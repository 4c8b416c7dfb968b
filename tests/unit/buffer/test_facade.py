"""The public facade of ``prefrontal.buffer`` keeps its ``__all__`` honest."""

from __future__ import annotations

import prefrontal.buffer as facade


def test_every_public_name_is_exported_and_exists() -> None:
    """``__all__`` is sorted, has no duplicates, and every name in it resolves."""
    assert list(facade.__all__) == sorted(set(facade.__all__))
    for name in facade.__all__:
        assert getattr(facade, name) is not None


def test_nothing_public_is_left_out() -> None:
    """Every public class or function the facade imports is listed in ``__all__``."""
    imported = {n for n in vars(facade) if not n.startswith("_") and n[0].isupper()}
    assert imported <= set(facade.__all__)

"""``prefrontal.traces`` exports what exists, and the observers the docs use."""

from __future__ import annotations

import prefrontal.testing
import prefrontal.traces


def test_every_name_in_all_exists() -> None:
    """Each name ``prefrontal.traces`` exports can be imported from it."""
    for name in prefrontal.traces.__all__:
        assert hasattr(prefrontal.traces, name), name


def test_the_observer_names_are_exported() -> None:
    """The Protocol, its default, the composite and the log observer are public."""
    expected = {"Observer", "NullObserver", "CompositeObserver", "LogObserver", "TurnTrace"}
    assert expected <= set(prefrontal.traces.__all__)
    assert "RecordingObserver" in prefrontal.testing.__all__

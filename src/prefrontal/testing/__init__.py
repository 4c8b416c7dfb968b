"""Public test helpers: store doubles and the store conformance suite.

``DelayedStore`` and ``FailingStore`` wrap any store; ``RecordingObserver``
keeps what an orchestrator's observer hooks were told. The conformance suite
(``prefrontal.testing.conformance``) checks that a backend keeps every
contract of its Protocol; a backend author subclasses its test classes and
overrides one fixture.
"""

from prefrontal.testing.doubles import DelayedStore, FailingStore
from prefrontal.testing.observers import RecordingObserver

__all__ = ["DelayedStore", "FailingStore", "RecordingObserver"]

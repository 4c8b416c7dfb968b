"""Public test helpers: store doubles and the store conformance suite.

``DelayedStore`` and ``FailingStore`` wrap any store. The conformance suite
(``prefrontal.testing.conformance``) checks that a backend keeps every
contract of its Protocol; a backend author subclasses its test classes and
overrides one fixture.
"""

from prefrontal.testing.doubles import DelayedStore, FailingStore

__all__ = ["DelayedStore", "FailingStore"]

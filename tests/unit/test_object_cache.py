"""Values remembered by the identity of immutable objects: the very objects, a bounded number."""

from __future__ import annotations

import pytest

from prefrontal.object_cache import ObjectCache


class Box:
    """An object equal to every other box: only identity tells two apart."""

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Box)

    def __hash__(self) -> int:
        return 0


def test_the_same_objects_and_key_are_computed_once() -> None:
    """A second call for the very same objects and key is answered without computing."""
    cache: ObjectCache[int] = ObjectCache(8)
    box, calls = Box(), []

    def compute(value: int) -> int:
        calls.append(value)
        return value

    assert cache((box,), "k", lambda: compute(7)) == 7
    assert cache((box,), "k", lambda: compute(8)) == 7
    assert calls == [7]


def test_an_equal_object_is_not_the_same_object() -> None:
    """Equal but distinct objects each get their own value: identity is the key, not equality."""
    cache: ObjectCache[str] = ObjectCache(8)
    first, second = Box(), Box()
    assert cache((first,), None, lambda: "first") == "first"
    assert cache((second,), None, lambda: "second") == "second"


def test_the_key_and_every_object_tell_entries_apart() -> None:
    """Another key, or another second object, is another entry."""
    cache: ObjectCache[str] = ObjectCache(8)
    item, one, two = Box(), Box(), Box()
    assert cache((item, one), 1, lambda: "one at 1") == "one at 1"
    assert cache((item, one), 2, lambda: "one at 2") == "one at 2"
    assert cache((item, two), 1, lambda: "two at 1") == "two at 1"
    assert cache((item, one), 1, lambda: "again") == "one at 1"


def test_the_least_recently_used_entries_leave_first() -> None:
    """Past ``size`` entries the one used longest ago goes; one used since stays."""
    cache: ObjectCache[str] = ObjectCache(2)
    a, b, c = Box(), Box(), Box()
    cache((a,), None, lambda: "a")
    cache((b,), None, lambda: "b")
    cache((a,), None, lambda: "a again")
    cache((c,), None, lambda: "c")
    assert len(cache) == 2
    assert cache((a,), None, lambda: "a again") == "a"
    assert cache((b,), None, lambda: "b again") == "b again"


def test_an_entry_keeps_its_objects_alive() -> None:
    """An object named by an entry is held, so no other object can take its identity."""
    cache: ObjectCache[int] = ObjectCache(4)
    ids = set()
    for n in range(4):
        box = Box()
        ids.add(id(box))
        cache((box,), None, lambda: n)  # noqa: B023 - called at once, within this iteration
        del box
    assert len(ids) == 4


def test_a_cache_holds_at_least_one_entry() -> None:
    """A size below one is refused."""
    with pytest.raises(ValueError, match="at least 1"):
        ObjectCache(0)

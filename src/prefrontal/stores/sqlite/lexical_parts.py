"""The parts a memory table's lexical arrays are read into: one per segment (an agent's
shared items, or one user's private ones), as :func:`~.lexical_arrays.whole_table` reads
them and :func:`~.lexical_arrays.segments_of` installs them."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

Place = tuple[str, str]
"""An agent and the owner of a segment (``""``: the agent's shared items)."""


@dataclass
class Part:
    """The items of one segment as read from a whole table: per slot, its row id, whether
    superseded, its expiry (µs), kind code and length and how many distinct terms it holds;
    per term (``terms[i]``), the slots holding it and how often,
    ``slots[starts[i]:starts[i + 1]]`` and ``counts[...]``."""

    place: Place
    kinds: dict[str, int]
    rowids: np.ndarray
    dead: np.ndarray
    until: np.ndarray
    kind: np.ndarray
    length: np.ndarray
    distinct: np.ndarray
    terms: list[str]
    starts: np.ndarray
    slots: np.ndarray
    counts: np.ndarray

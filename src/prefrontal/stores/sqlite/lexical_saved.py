"""A table's lexical arrays saved beside the database: a fresh process loads them instead of
reading the table.

``<database>.lexical/<name>.npz`` (a directory readable by its owner only,
the file created ``0600``) holds the parts of a table read whole
(:func:`~prefrontal.stores.sqlite.lexical_arrays.whole_table`) and a header:
the format's :data:`VERSION`, the change count they were read at, the
database file's device and inode, and the machine's boot. A process opening
the store loads them when the header names this file and this boot and the
change log still covers that count: the changes since are then applied from
the log, as before every search (:mod:`.lexical_arrays`). Anything else
(no file, a copy of the database, another layout, a file cut short) is
ignored and the table is read again, in a thread of its own, and saved.

Written to a temporary file of its own, then renamed over the old one: a
reader sees a whole file or the old one. The file holds users' words as
the database does: it is removed when the arrays are emptied (an erase or a
forget, :mod:`prefrontal.forgetting`) and saved again from the table when a
process loading it finds rows deleted since it was written.
"""

from __future__ import annotations

import json
import os
import threading
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from prefrontal.files import PRIVATE_FILE_MODE, private_directory
from prefrontal.stores.sqlite.vector_file import BOOT

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


VERSION = 1
"""The layout of the file; another is ignored."""
ARRAYS = ("rowids", "dead", "until", "kind", "length", "distinct", "starts", "slots", "counts")
"""The arrays of each part, saved as ``<part>.<array>``."""


def saved_path(database: Path, name: str) -> Path:
    """Where the arrays of memory table ``name`` of ``database`` are saved."""
    return Path(f"{database}.lexical") / f"{name}.npz"


def identity(database: Path) -> tuple[int, int]:
    """The device and inode of ``database``: a copy or a restore is another file."""
    info = os.stat(database)
    return info.st_dev, info.st_ino


def save(path: Path, database: Path, changes: int, parts: Sequence[Part]) -> None:
    """Save ``parts``, read at change count ``changes`` of ``database``, to ``path``."""
    device, inode = identity(database)
    header = {
        "version": VERSION,
        "changes": changes,
        "device": device,
        "inode": inode,
        "boot": BOOT,
        "parts": [
            {"place": list(part.place), "kinds": part.kinds, "terms": part.terms} for part in parts
        ],
    }
    arrays: dict[str, Any] = {"header": np.frombuffer(json.dumps(header).encode(), dtype=np.uint8)}
    for number, part in enumerate(parts):
        for name in ARRAYS:
            arrays[f"{number}.{name}"] = getattr(part, name)
    private_directory(path.parent)
    temporary = path.with_name(f"{path.name}.{os.getpid()}-{threading.get_ident()}.tmp")
    temporary.unlink(missing_ok=True)
    descriptor = os.open(temporary, os.O_CREAT | os.O_EXCL | os.O_WRONLY, PRIVATE_FILE_MODE)
    try:
        with os.fdopen(descriptor, "wb") as file:
            np.savez(file, **arrays)
        temporary.replace(path)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise


def load(path: Path, database: Path, changes: int, pruned: int) -> tuple[int, list[Part]] | None:
    """The change count and parts saved at ``path`` for ``database``, when the log (holding
    what changed after ``pruned``, up to ``changes``) covers them; ``None`` otherwise."""
    try:
        with np.load(path, allow_pickle=False) as held:
            header: dict[str, Any] = json.loads(held["header"].tobytes())
            count = int(header["changes"])
            known = (header["device"], header["inode"]) == identity(database)
            if header["version"] != VERSION or header["boot"] != BOOT or not known:
                return None
            if not pruned <= count <= changes:
                return None
            parts = [
                Part(
                    place=(str(part["place"][0]), str(part["place"][1])),
                    kinds={str(k): int(v) for k, v in part["kinds"].items()},
                    terms=[str(term) for term in part["terms"]],
                    **{name: held[f"{number}.{name}"] for name in ARRAYS},
                )
                for number, part in enumerate(header["parts"])
            ]
    except (OSError, ValueError, KeyError, TypeError, IndexError, zipfile.BadZipFile):
        return None
    return count, parts


def remove(path: Path) -> None:
    """Remove the saved arrays at ``path``, if any."""
    path.unlink(missing_ok=True)

"""The bundle's checksum: what makes two turns' contexts comparable at a glance."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable

from prefrontal.bundle.fragments import Fragment, Section

__all__ = ["checksum"]

_SECTION_NAMES = {section: section.value for section in Section}
"""Each section's name, looked up once per fragment rather than read through the enum."""


def checksum(text: str, fragments: Iterable[Fragment]) -> str:
    """SHA-256 of the rendered text and every fragment's section and item ids."""
    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass"))
    digest.update(_fragment_records(fragments).encode())
    return digest.hexdigest()


def _fragment_records(fragments: Iterable[Fragment]) -> str:
    """Each fragment's section and item ids, one record after another, hashed in one update."""
    return "".join(
        [f"\x1e{_SECTION_NAMES[f.section]}\x1f{'|'.join(f.provenance.item_ids)}" for f in fragments]
    )

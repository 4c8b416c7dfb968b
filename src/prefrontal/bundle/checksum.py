"""The bundle's checksum: what makes two turns' contexts comparable at a glance."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable

from prefrontal.bundle.fragments import Fragment

__all__ = ["checksum"]


def checksum(text: str, fragments: Iterable[Fragment]) -> str:
    """SHA-256 of the rendered text and every fragment's section and item ids."""
    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass"))
    for f in fragments:
        digest.update(f"\x1e{f.section.value}\x1f{'|'.join(f.provenance.item_ids)}".encode())
    return digest.hexdigest()

"""The bundle's checksum: SHA-256 of the text, then each fragment's section and item ids."""

from __future__ import annotations

import hashlib

from prefrontal.bundle.checksum import checksum
from prefrontal.bundle.fragments import Fragment, Provenance, Section


def fragment(section: Section, *ids: str) -> Fragment:
    return Fragment(
        section=section,
        text="t",
        tokens=1,
        provenance=Provenance(store="s", item_ids=ids, phase="p"),
    )


def test_the_checksum_hashes_the_text_then_each_fragments_section_and_ids_in_order() -> None:
    """Records follow the text in the fragments' order; a text beyond UTF-8 is still hashed."""
    text = "## Relevant memories\nan \udc80 unpaired surrogate"
    fragments = [fragment(Section.EPISODIC, "m1", "m2"), fragment(Section.CONSCIOUSNESS, "a#id")]
    expected = hashlib.sha256(text.encode("utf-8", "surrogatepass"))
    expected.update(b"\x1eepisodic\x1fm1|m2")
    expected.update(b"\x1econsciousness\x1fa#id")
    assert checksum(text, fragments) == expected.hexdigest()
    assert checksum(text, fragments[::-1]) != expected.hexdigest()
    assert checksum("", []) == hashlib.sha256(b"").hexdigest()

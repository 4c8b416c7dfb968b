"""Fragments with provenance, sections, and the assembled ``ContextBundle``."""

from prefrontal.bundle.checksum import checksum
from prefrontal.bundle.messages import Message, to_messages
from prefrontal.bundle.models import SECTION_ORDER, ContextBundle, Fragment, Provenance, Section
from prefrontal.bundle.render import render_sections

__all__ = [
    "SECTION_ORDER",
    "ContextBundle",
    "Fragment",
    "Message",
    "Provenance",
    "Section",
    "checksum",
    "render_sections",
    "to_messages",
]

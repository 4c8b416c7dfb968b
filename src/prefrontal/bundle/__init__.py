"""Fragments with provenance, sections, and the assembled ``ContextBundle``."""

from prefrontal.bundle.messages import Message, to_messages
from prefrontal.bundle.models import ContextBundle, Fragment, Provenance, Section
from prefrontal.bundle.render import render_sections

__all__ = [
    "ContextBundle",
    "Fragment",
    "Message",
    "Provenance",
    "Section",
    "render_sections",
    "to_messages",
]

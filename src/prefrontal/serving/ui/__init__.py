"""The trace viewer: server-rendered pages over the trace store, under ``/ui``.

``/ui`` lists turns (newest first, filtered, paged by keyset);
``/ui/turns/{turn_id}`` shows one turn (the phase waterfall, the budget by
section, the bundle's fragments and their provenance, what was dropped, the
working-memory buffer, the ``end_turn`` steps); ``/ui/compare`` sets two
turns side by side. Every page is HTML built by an autoescaping template
engine (the text of a trace is the users' and is never markup), sent with a
strict Content-Security-Policy; the only assets are the package's own CSS.
See :func:`ui_router` for access.
"""

from prefrontal.serving.ui.router import ui_router

__all__ = ["ui_router"]

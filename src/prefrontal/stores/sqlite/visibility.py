"""Who may see a memory item, as one full-text token, so that candidates are only visible items.

Every row of ``<name>_fts`` and ``<name>_impacts`` (since schema 11) has a
``tenant`` column holding one token: ``s`` and the agent id in hex for a
shared item (every user of the agent sees it), ``p``, the agent id in hex,
``x`` and the user id in hex for a private one (its owner only). A search
matches its terms *and* one of the two tokens the tenant may see
(:func:`restricted`), so FTS5 intersects the term's postings with the
tenant's own and the agent's shared ones before a single item is fetched,
joined or scored: another user's items cost a search nothing but the
skips over their postings. Hex keeps any id one token of letters and
digits (``x`` is not a hex digit, so the token is one pair of ids only);
the SQL's own visibility filter stays as well, so the token narrows the
candidates and never decides what a tenant sees.

The term statistics (``<name>_terms``, ``<name>_owner_stats``) are kept per
agent and owner (:mod:`~prefrontal.stores.statistics_owner`): a search adds
up those of the items its tenant may read, so scores follow what it may
read too.
"""

from __future__ import annotations

COLUMN = "tenant"
"""The column of both full-text indexes holding an item's visibility token."""


def token_sql(agent: str, user: str, scope: str) -> str:
    """SQL: the token of a row whose columns are ``agent``, ``user`` and ``scope``."""
    return f"""(CASE {scope} WHEN 'shared' THEN 's' || hex({agent})
        ELSE 'p' || hex({agent}) || 'x' || hex({user}) END)"""


def _hex(text: str) -> str:
    """``text`` as SQLite's ``hex()`` writes it (its UTF-8 bytes), in lower case."""
    return text.encode("utf-8").hex()


def tokens(agent: str, user: str) -> tuple[str, str]:
    """The tokens of the items ``user`` of ``agent`` may see: the agent's shared, the user's own."""
    return f"s{_hex(agent)}", f"p{_hex(agent)}x{_hex(user)}"


def restricted(match: str, column: str, agent: str, user: str) -> str:
    """The FTS5 query ``match`` (over ``column``) limited to rows ``user`` of ``agent`` may see."""
    shared, own = tokens(agent, user)
    return f'{{{column}}} : ({match}) AND {{{COLUMN}}} : ("{shared}" OR "{own}")'

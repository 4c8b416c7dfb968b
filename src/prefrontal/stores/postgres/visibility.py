"""Who may see a memory item, in its index keys, so that candidates are only visible items.

Since schema 9 each memory row has ``visible``: every term key of the row
as ``<token>:<term>`` and every impact token as ``<token>#<impact>``, where
the token says who may see the row: ``s`` and the MD5 of the agent id for a
shared item (every user of the agent), ``p`` and the MD5 of the agent id,
a unit separator and the user id for a private one (its owner only). Ids
hold no control character, so the separator keeps the pair apart. One GIN
index over ``visible`` gives every term its postings per tenant: a search
asks for the keys of the two tokens its tenant may see
(:func:`holding`), so the index hands over the tenant's own items and
the agent's shared ones, and nobody else's row is ever fetched. The SQL
keeps its own visibility filter as well: the keys narrow the candidates
and never decide what a tenant sees.

The term statistics are kept per agent and owner
(:mod:`~prefrontal.stores.statistics_owner`): a search adds up those of
the items its tenant may read, so scores follow what it may read too.
"""

from __future__ import annotations

TERM = ":"
"""Between the token and a term key."""
IMPACT = "#"
"""Between the token and an impact token (which may read like a term: ``100`` + ``foo``)."""


def _token(agent: str, owner: str, scope: str) -> str:
    """SQL: the token of a row of ``agent``, ``owner`` and ``scope`` (built-ins only, so that
    the functions below find everything they call whatever the ``search_path``)."""
    return f"""(CASE {scope} WHEN 'shared' THEN 's' || md5({agent})
        ELSE 'p' || md5({agent} || chr(31) || {owner}) END)"""


_VISIBLE_KEYS = f"""CREATE OR REPLACE FUNCTION memory_visible_keys(
        agent text, owner text, scope text, terms text[], impacts text[])
    RETURNS text[] LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
        SELECT ARRAY(
            SELECT {_token("agent", "owner", "scope")} || '{TERM}' || k FROM unnest(terms) AS k
            UNION ALL
            SELECT {_token("agent", "owner", "scope")} || '{IMPACT}' || k FROM unnest(impacts) AS k)
    $$"""
VISIBLE_KEYS_KEPT = f"""CREATE OR REPLACE FUNCTION memory_visible_keys(
        agent text, owner text, scope text, terms text[], impacts text[])
    RETURNS text[] LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $$
    DECLARE
        token text := {_token("agent", "owner", "scope")};
    BEGIN
        RETURN ARRAY(
            SELECT token || '{TERM}' || k FROM unnest(terms) AS k
            UNION ALL
            SELECT token || '{IMPACT}' || k FROM unnest(impacts) AS k);
    END
    $$"""
"""Schema 21: ``memory_visible_keys`` in PL/pgSQL, its keys as schema 9's SQL function gives
them, in the same order (the generated ``visible`` column of every row written calls it). A
SQL function whose body holds a subquery is never inlined, so the server parsed and planned
its body again for every row written; a PL/pgSQL function's plans are kept by the session."""
_SEARCH_KEYS = f"""CREATE OR REPLACE FUNCTION memory_search_keys(
        agent text, reader text, marker text, keys text[])
    RETURNS text[] LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
        SELECT ARRAY(
            SELECT t.token || marker || k
            FROM unnest(ARRAY[{_token("agent", "reader", "'shared'")},
                              {_token("agent", "reader", "'private'")}]) AS t(token),
                 unnest(keys) AS k)
    $$"""
FUNCTIONS = (_VISIBLE_KEYS, _SEARCH_KEYS)
"""The functions schema 9 creates: a row's keys, and a search's (which the statements write
out instead of calling: :func:`search_keys`)."""


def search_keys(agent: str, reader: str, marker: str, keys: str) -> str:
    """SQL: the keys a search of ``reader`` of ``agent`` asks for, ``keys`` behind each token
    the reader may see: what ``memory_search_keys`` (schema 9) returns, written in the
    statement itself.

    Written out, the expression is planned with the statement (once, for a prepared
    statement's generic plan) and evaluated once per execution; a call of the SQL function,
    which PostgreSQL cannot inline (its body holds a subquery), parses and plans the
    function's body again at every execution of the statement.
    """
    return f"""ARRAY(SELECT t.token || '{marker}' || k
            FROM unnest(ARRAY[{_token(agent, reader, "'shared'")},
                              {_token(agent, reader, "'private'")}]) AS t(token),
                 unnest({keys}) AS k)"""


def holding(keys: str, *, marker: str = TERM, user: str = "$2") -> str:
    """SQL: ``m`` holds one of ``keys`` (term keys, or impact tokens with :data:`IMPACT`).

    ``keys`` is a text array expression; the tenant is the statement's
    ``$1`` (agent) and ``user``. The GIN index of ``visible`` answers it.
    """
    return f"m.visible && {search_keys('$1', user, marker, keys)}"

"""Which names a graph may have: ones that work unquoted everywhere a graph is named."""

from __future__ import annotations

import functools

import sqlglot
from sqlglot import exp
from sqlglot.errors import ParseError as SqlglotParseError
from sqlglot.errors import TokenError

from .dialect import GraphSQL

__all__ = ["is_sql_keyword"]


def _from(query: exp.Expression) -> exp.Expression | None:
    source = query.args.get("from_") or query.args.get("from")
    return None if source is None else source.this


@functools.lru_cache(maxsize=256)
def is_sql_keyword(name: str) -> bool:
    """Whether ``name`` (letters, digits, underscores) cannot stand for a graph unquoted: it is
    read as SQL (``select``, ``from``, ``values``) in one of the places graphs are named."""
    try:
        table = _from(sqlglot.parse_one(f"SELECT * FROM {name}.edges", read=GraphSQL))
        if not (isinstance(table, exp.Table) and table.args.get("db") is not None
                and table.args["db"].name == name):
            return True
        call = _from(sqlglot.parse_one(f"SELECT * FROM bfs({name}, 1)", read=GraphSQL))
        first = call.this.expressions[0] if isinstance(call, exp.Table) and isinstance(
            call.this, exp.Anonymous) else None
        if not (isinstance(first, exp.Column) and first.name == name):
            return True
        described = sqlglot.parse_one(f"DESCRIBE {name}", read=GraphSQL)
        if not (isinstance(described, exp.Describe) and described.this.name == name):
            return True
        sqlglot.parse_one(f"SELECT * FROM GRAPH_TABLE ({name} MATCH (a)-[e]->(b))",
                          read=GraphSQL)
    except (SqlglotParseError, TokenError, AttributeError, IndexError):
        return True
    return False

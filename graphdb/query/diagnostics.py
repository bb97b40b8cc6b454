"""DuckDB's errors as graphdb's: the PEP 249 class by DuckDB's exception class, the message as
DuckDB writes it.

The relational engine (:mod:`graphdb.executor.relational`) passes DuckDB's exceptions on as
:class:`~graphdb.executor.errors.SQLError` with a kind read from the exception's class; here
each kind becomes its class. Nothing is read from the message's wording: what is taken out is
structural only, and is graphdb's own, not DuckDB's. DuckDB's ``<Kind> Error:`` prefix (the
class says it), the ``LINE n:`` excerpt (it shows the statement DuckDB ran, which graphdb wrote,
not the user's), and the internal names of relations (put back as the user wrote them). Advice
in the message holds: DuckDB's own settings it names (``SET error_on_division_by_zero =
false``) are passed to DuckDB by graphdb's SET.
"""

from __future__ import annotations

import re

from ..errors import (
    BinderError,
    CatalogError,
    DatabaseError,
    DataError,
    Error,
    IntegrityError,
    InternalError,
    NotSupportedError,
    OperationalError,
    ParseError,
)

__all__ = ["sql_error", "duckdb_message"]

#: SQLError kind -> the class it is raised as.
_CLASSES = {"binder": BinderError, "catalog": CatalogError, "data": DataError,
            "not_supported": NotSupportedError, "integrity": IntegrityError,
            "resources": OperationalError, "internal": InternalError}

_PREFIX = re.compile(r"^[A-Z][A-Za-z ]* Error: ")  # DuckDB's "<Kind> Error: " (its class)
_INTERNAL = re.compile(r"__graphdb_[A-Za-z0-9_]+")  # graphdb's relation names


def duckdb_message(message: str, shown: dict[str, str]) -> str:
    """DuckDB's message without its class prefix and its excerpt of the statement it ran,
    graphdb's relation names replaced by what the user wrote."""
    lines = []
    for line in message.splitlines():
        if line.startswith("LINE ") and ":" in line:
            break
        lines.append(line.rstrip())
    text = _PREFIX.sub("", "\n".join(lines).strip(), count=1)
    for name, user in sorted(shown.items(), key=lambda kv: -len(kv[0])):
        text = text.replace(f'"{name}"', user).replace(name, user)
    return _INTERNAL.sub("(query)", text)


def sql_error(kind: str, message: str, shown: dict[str, str]) -> Error:
    """The graphdb error for a DuckDB error of ``kind`` (see :class:`SQLError`)."""
    text = duckdb_message(message, shown)
    if kind == "parser":
        return ParseError(text.removeprefix("syntax error").strip())
    return _CLASSES.get(kind, DatabaseError)(text)

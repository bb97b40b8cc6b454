"""Key lookups: a stored table read through its key index when the query names the keys.

``SELECT ... FROM person WHERE id = 42`` (or ``id IN (1, 2, 3)``, or every column of a
composite key equal to a constant) needs the rows with those keys only: the scan of the
statement reads them through the table's key index (:meth:`graphdb.catalog.tables.TableLog.
positions`: a binary search of the base's sorted keys, a dict of the rows written since)
and hands the relational engine those rows alone, instead of the whole table. The condition
stays in the query too, so the answer is the same whatever the index finds; a lookup is only
planned where that holds: the condition is one of the conjuncts at the top of the WHERE of
the SELECT the table is in (a condition on a key column that rejects NULL, so an outer join
loses nothing by it), the column is the table's (qualified by its name, or alone in FROM), and
the constants are of the key's kind (an integer key compared with integers, a text key with
text; anything else is left to the engine, which casts).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pyarrow as pa
from sqlglot import exp

from .conditions import conjuncts

__all__ = ["key_conditions", "key_lookup"]

#: Lookups of more keys than this read the table whole (a scan is then as cheap).
MAX_KEYS = 4096


def _kind(type_: pa.DataType) -> str | None:
    if pa.types.is_integer(type_):
        return "int"
    if pa.types.is_string(type_) or pa.types.is_large_string(type_):
        return "str"
    return None


def _fits(value: Any, kind: str) -> bool:
    if kind == "int":
        return isinstance(value, int) and not isinstance(value, bool)
    return isinstance(value, str)


def key_lookup(node: exp.Table, entry, constant: Callable[[exp.Expression], tuple | None]
               ) -> tuple | None:
    """The keys a query looks ``node`` (a stored table ``entry``) up by, else None."""
    found = key_conditions(node, entry.key_columns,
                           [entry.schema.field(c).type for c in entry.key_columns], constant)
    return None if found is None else found[0]


def key_conditions(node: exp.Table, key: tuple[str, ...], types: list[pa.DataType],
                   constant: Callable[[exp.Expression], tuple | None]
                   ) -> tuple[tuple, bool] | None:
    """(the keys a query looks ``node`` up by, whether its WHERE says nothing else), or None;
    ``key``: the key columns of the table ``node`` reads, ``types`` their types."""
    select = node.parent_select
    if not key or select is None or select.args.get("where") is None:
        return None
    items = _from(select)
    if not any(item is node for item in items):
        return None  # e.g. inside a join's own subquery
    alias = node.args.get("alias")
    qualifier = (alias.name if alias is not None and alias.name else node.name).lower()
    alone = len(items) == 1
    kinds = [_kind(t) for t in types]
    if any(k is None for k in kinds):
        return None
    found: dict[str, list] = {}
    others = False
    for condition in conjuncts(select.args["where"].this):
        column, values = None, None
        if isinstance(condition, exp.EQ):
            for a, b in ((condition.this, condition.expression),
                         (condition.expression, condition.this)):
                value = constant(b)
                if isinstance(a, exp.Column) and value is not None:
                    column, values = a, [value[0]]
                    break
        elif isinstance(condition, exp.In) and isinstance(condition.this, exp.Column) \
                and condition.expressions and not condition.args.get("query"):
            listed = [constant(v) for v in condition.expressions]
            if all(v is not None for v in listed):
                column, values = condition.this, [v[0] for v in listed]
        if column is None or isinstance(column.this, exp.Star):
            others = True
            continue
        if not ((column.table and column.table.lower() == qualifier) or
                (not column.table and alone)):
            others = True
            continue
        name = next((c for c in key if c.lower() == column.name.lower()), None)
        if name is None:
            others = True
            continue
        kind = kinds[key.index(name)]
        values = [v for v in values if v is not None]
        if not all(_fits(v, kind) for v in values):
            return None
        found[name] = values if name not in found else [v for v in found[name] if v in values]
    if set(found) != set(key):
        return None
    if len(key) == 1:
        keys = tuple(dict.fromkeys(found[key[0]]))
    else:
        if any(len(found[c]) != 1 for c in key):
            return None
        keys = (tuple(found[c][0] for c in key),)
    return (keys, not others) if len(keys) <= MAX_KEYS else None


def _from(select: exp.Select) -> list[exp.Expression]:
    source = select.args.get("from_") or select.args.get("from")
    return ([source.this] if source is not None else []) + [
        j.this for j in select.args.get("joins") or []]

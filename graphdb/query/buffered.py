"""Single-row INSERTs inside a transaction, gathered and applied together.

An application that inserts edges one statement at a time inside BEGIN ... COMMIT pays, per
statement, the work of a write: resolving ids, checking, adding operations. Here such an
``INSERT INTO g.edges [(cols)] VALUES (...)`` of constants and parameters is checked row by row
against the graph's column types (exactly: a value that passes cannot fail later, since an edge
insert adds the vertices it names) and kept; the rows go in, in their order, as few statements
(:class:`graphdb.executor.plan.InsertRows`) before the session does anything else: the next
statement that is not such an insert, COMMIT, a Python API call. So every statement sees the
transaction's inserts, an INSERT whose values do not fit fails by itself as it would unbuffered
(the rows before it are applied first), and COMMIT writes them all. Rows whose insert fails (a
full disk) stay kept, so the error shows at the next statement and a COMMIT never drops them.
Vertex inserts (an id may exist already), columns of other types than BIGINT, DOUBLE, VARCHAR
and BOOLEAN, expressions and statements outside a transaction take the ordinary path.
"""

from __future__ import annotations

import decimal
import math
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa
from sqlglot import exp

from .fast_values import PARAMETER, FastValues
from .parameters import placeholders

if TYPE_CHECKING:
    from ..session import Session

__all__ = ["InsertBuffer"]

_ONE = pa.table({"Count": pa.array([1], pa.int64())})
_INT64 = (-(1 << 63), 1 << 63)


def _check_int(v):
    if type(v) is int or isinstance(v, np.integer):
        v = int(v)
        if _INT64[0] <= v < _INT64[1]:
            return v
    raise ValueError


def _check_str(v):
    if type(v) is str:
        return v
    raise ValueError


def _check_float(v):
    if type(v) in (float, int) or isinstance(v, (np.floating, np.integer)):
        return float(v)
    raise ValueError


def _check_bool(v):
    if type(v) is bool:
        return v
    raise ValueError


_CHECKS = {pa.int64(): _check_int, pa.string(): _check_str, pa.float64(): _check_float,
           pa.bool_(): _check_bool}


def _weight(v):
    v = _check_float(v)
    if v >= 0 and math.isfinite(v):
        return v
    raise ValueError


def _nullable(check):
    def run(v):
        return None if v is None else check(v)
    return run


class _Template:
    """One INSERT's text as a buffered insert: its target and how to read each value."""

    def __init__(self, key: tuple, columns: list[str], slots: list, checks: list):
        self.key, self.columns, self.slots, self.checks = key, columns, slots, checks


class InsertBuffer:
    """The single-row inserts of one session's open transaction (module docstring)."""

    def __init__(self, session: "Session"):
        self.session = session
        self._templates: dict[str, _Template | None] = {}
        #: runs of kept rows, in the order they came: [template, rows] of one target and columns
        self._runs: list[list] = []

    def __bool__(self) -> bool:
        return bool(self._runs)

    def add(self, sql: str, parameters: Any) -> pa.Table | None:
        """Keep the row of ``sql`` (an INSERT of one VALUES row) and return its count table;
        None when it must take the ordinary path."""
        template = self._templates.get(sql, False)
        if template is False:
            template = self._templates[sql] = self._template(sql)
        if template is None:
            return None
        try:
            row = tuple(check(slot(parameters)) for slot, check in
                        zip(template.slots, template.checks))
        except (ValueError, TypeError, KeyError, IndexError):
            return None
        if self._runs and self._runs[-1][0].key == template.key:
            self._runs[-1][1].append(row)
        else:
            self._runs.append([template, [row]])
        return _ONE

    def flush(self) -> None:
        """Insert the kept rows, a statement per run of one target and column list; a run is
        forgotten only once it is in. The templates are forgotten too: the statement about to
        run may change a graph's columns."""
        from graphdb.executor.plan import InsertRows, ValuesScan

        self._templates = {}
        while self._runs:
            template, values = self._runs[0]
            graph, table, _columns = template.key
            columns = template.columns
            data = pa.table([pa.array([r[i] for r in values]) for i in range(len(columns))],
                            names=columns)
            self.session.execute_plan(InsertRows(graph, table, tuple(columns),
                                                 ValuesScan("values", data)))
            del self._runs[0]

    # -- templates ------------------------------------------------------------------------------
    def _template(self, sql: str) -> _Template | None:
        from graphdb.executor.writes.target import Target

        from .parser import parse

        words = sql.lstrip().split(None, 1)
        if not words or words[0].upper() != "INSERT":
            return None
        try:
            statement = parse(sql)
        except Exception:
            return None
        ast = statement.ast
        fast = isinstance(ast.expression, FastValues)
        if statement.explain or statement.kind != "insert" or not (
                (fast and ast.expression.args["rows"] == 1) or (
                    isinstance(ast.expression, exp.Values)
                    and len(ast.expression.expressions) == 1)):
            return None
        node = ast.this.this if isinstance(ast.this, exp.Schema) else ast.this
        if not isinstance(node, exp.Table) or not node.args.get("db") or \
                node.name.lower() != "edges":
            return None
        try:
            session = self.session
            target = Target(session.runner, session.transaction.writer, node.args["db"].name,
                            node.name.lower())
            columns = ([target.column(c.name) for c in ast.this.expressions]
                       if isinstance(ast.this, exp.Schema) else target.columns())
        except Exception:
            return None
        values = ast.expression.template() if fast else \
            ast.expression.expressions[0].expressions
        if len(values) != len(columns) or len(set(columns)) != len(columns):
            return None
        types = _types(target)
        checks = []
        for name in columns:
            check = _CHECKS.get(types.get(name))
            if check is None:
                return None
            if name == target.weight_name:
                check = _weight
            elif name not in ("src", "dst"):
                check = _nullable(check)
            checks.append(check)
        slots = _fast_slots(values) if fast else _slots(values, ast.expression)
        if slots is None:
            return None
        return _Template((target.name, target.table, tuple(columns)), columns, slots, checks)


def _types(target) -> dict[str, pa.DataType]:
    types = {"src": target.id_type, "dst": target.id_type}
    if target.weight_name:
        types[target.weight_name] = pa.float64()
    types.update((f.name, f.type) for f in target.edge_props)
    return types


def _slots(values: list[exp.Expression], source: exp.Expression) -> list | None:
    """How each value is read: from the parameters, or a constant."""
    order = {id(node): i for i, node in enumerate(placeholders(source))}
    question = 0
    slots = []
    for node in values:
        if isinstance(node, (exp.Placeholder, exp.Parameter)):
            name = node.name
            if not name or name == "?":
                index = question
                question += 1
                slots.append(lambda p, i=index: _positional(p, i, order))
            elif name.isdigit():
                return None  # $1, $2: the ordinary path
            else:
                slots.append(lambda p, n=name: p[n])
        elif isinstance(node, exp.Literal):
            value = node.this if node.is_string else _number(node.this)
            slots.append(lambda p, v=value: v)
        elif isinstance(node, exp.Null):
            slots.append(lambda p: None)
        else:
            return None
    if question and len(order) != question:
        return None
    return slots


def _fast_slots(values: list) -> list | None:
    """How each value of a row read by :mod:`.fast_values` is read (``?`` in order)."""
    count = sum(1 for v in values if v is PARAMETER)
    slots, question = [], 0
    for value in values:
        if value is PARAMETER:
            slots.append(lambda p, i=question: _in_order(p, i, count))
            question += 1
        elif isinstance(value, decimal.Decimal):
            slots.append(lambda p, v=float(value): v)
        else:
            slots.append(lambda p, v=value: v)
    return slots


def _in_order(parameters, index: int, count: int) -> Any:
    if isinstance(parameters, dict) or len(parameters) != count:
        raise IndexError(index)  # the ordinary path says what is wrong
    return parameters[index]


def _positional(parameters, index: int, order) -> Any:
    if isinstance(parameters, dict):
        raise KeyError(index)
    if len(parameters) != len(order):
        raise IndexError(index)  # the ordinary path says what is wrong
    return parameters[index]


def _number(text: str):
    try:
        return int(text)
    except ValueError:
        return float(text)

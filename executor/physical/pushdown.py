"""Aggregates and top-k pushed down onto a graph operator: a rewrite of the physical plan.

A query that only wants a summary of a graph operator's rows, ``count(*)``, ``min``/``max``/
``sum``/``mean`` of a column, ``count(*) GROUP BY depth`` (or by a component label), or the
first rows by a value (``ORDER BY rank DESC LIMIT 10``), gets one :class:`GraphOperator` that
computes that summary where the operator's values are (on the GPU, with only its rows crossing
the bus; :mod:`graphdb.executor.results`) instead of the operator's rows and a relational
aggregate over them.

The rewrite sees only logical nodes: an ``Aggregate`` (or a ``Limit`` over a ``Sort``) whose
input reaches an ``AlgorithmScan`` through ``Project`` s of plain column references and
``Rename`` s, each of them used by this one parent. Whatever else (a filter in between, a
``DISTINCT`` aggregate, an expression) stays relational: nothing here depends on how the
relational operators run.
"""

from __future__ import annotations

from dataclasses import dataclass

import pyarrow as pa
import pyarrow.compute as pc

from ..plan import Aggregate, AlgorithmScan, Limit, PlanNode, Project, Rename, Sort
from ..results import PUSHABLE, Reduction, TopRows

__all__ = ["PUSHDOWN", "Reach", "Reduction", "TopRows", "reach", "reduction_for", "top_for"]

#: The rewrite is on (tests turn it off to compare with the relational operators).
PUSHDOWN = True


@dataclass(frozen=True)
class Reach:
    """An ``AlgorithmScan`` below a chain of projections: its output columns by the chain's
    column names (the algorithm's column behind each), and the chain's nodes."""

    scan: AlgorithmScan
    columns: dict[str, str]
    names: tuple[str, ...]
    chain: tuple[PlanNode, ...]


def _field_of(expr: pc.Expression, names: tuple[str, ...]) -> str | None:
    """The input column ``expr`` only references, or None for any other expression."""
    for name in names:
        if names.count(name) == 1 and expr.equals(pc.field(name)):
            return name
    return None


def reach(node: PlanNode, spec_columns: "callable") -> Reach | None:
    """The algorithm scan ``node`` is a projection of, or None. ``spec_columns(scan)`` gives
    a scan's output column names."""
    chain: list[PlanNode] = []
    while isinstance(node, (Project, Rename)):
        chain.append(node)
        node = node.input
    if not isinstance(node, AlgorithmScan):
        return None
    names = tuple(spec_columns(node))
    behind = list(names)
    for step in reversed(chain):
        if isinstance(step, Rename):
            if len(step.names) != len(behind):
                return None
            names = tuple(step.names)
            continue
        picked = []
        for expr in step.expressions:
            source = _field_of(expr, names)
            if source is None:
                return None
            picked.append(behind[names.index(source)])
        names, behind = tuple(step.names), picked
    if len(set(names)) != len(names):
        return None
    return Reach(node, dict(zip(names, behind, strict=True)), names, tuple(chain))


def reduction_for(node: Aggregate, found: Reach, columns: dict[str, pa.DataType],
                  vertex: set[str], string_ids: bool) -> Reduction | None:
    """The :class:`Reduction` that computes ``node`` over ``found``'s scan, or None where the
    aggregate must stay relational. ``columns``: the algorithm's output types; ``vertex``: its
    vertex-valued columns (the first is the position)."""
    if len(node.keys) > 1:
        return None
    key = key_name = None
    if node.keys:
        key_name = node.keys[0]
        key = found.columns.get(key_name)
        # Counting by an integer column of values in [0, |V|): a vertex-valued one other than
        # the position (a component, a label) or a depth; the device counts into |V| bins.
        if key is None or not pa.types.is_integer(columns[key]) or key == _position(vertex,
                                                                                    columns):
            return None
    calls = []
    for call in node.aggregates:
        if call.distinct or call.function not in PUSHABLE:
            return None
        column = None
        if call.column is not None:
            column = found.columns.get(call.column)
            if column is None:
                return None
            numeric = pa.types.is_integer(columns[column]) or pa.types.is_floating(
                columns[column])
            if not numeric:
                return None
            if column in vertex and (string_ids or call.function in ("sum", "mean")):
                return None  # only min/max map to a user id (ids ascend with internal ids)
        if key is not None and call.function not in ("count_all", "count"):
            return None
        calls.append((call.output, call.function, column))
    return Reduction(key, key_name, tuple(calls))


def top_for(node: Limit, found: Reach, columns: dict[str, pa.DataType],
            vertex: set[str]) -> TopRows | None:
    """The :class:`TopRows` of ``ORDER BY x LIMIT`` (``node`` over a ``Sort``) over
    ``found``'s scan, or None. One numeric key that is not vertex-valued."""
    sort = node.input
    if not isinstance(sort, Sort) or node.limit is None or len(sort.keys) != 1:
        return None
    name, direction = sort.keys[0]
    column = found.columns.get(name)
    if column is None or column in vertex:
        return None
    if not (pa.types.is_integer(columns[column]) or pa.types.is_floating(columns[column])):
        return None
    return TopRows(column, direction == "descending", int(node.limit), int(node.offset),
                   tuple((n, found.columns[n]) for n in found.names))


def _position(vertex: set[str], columns: dict[str, pa.DataType]) -> str | None:
    return next((c for c in columns if c in vertex), None)

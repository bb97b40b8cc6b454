"""Aggregates and top-k pushed down onto a graph operator.

A query that only wants a summary of a graph operator's rows, ``count(*)``, ``min``/``max``/
``sum``/``mean`` of a column, ``count(*) GROUP BY depth`` (or by a component label), or the
first rows by a value (``ORDER BY rank DESC LIMIT 10``), gets one graph operator that computes
that summary where the operator's values are (on the GPU, with only its rows crossing the bus;
:mod:`graphdb.executor.results`) instead of the operator's rows and a relational aggregate over
them.

The front end recognises such a query (a SELECT over one graph function and nothing else) and
asks here whether the summary can be pushed down, in the algorithm's own column names; the
answer goes on the logical scan (``AlgorithmScan.summary``) and the physical planner hands it to
the operator. Whatever else (a filter, a ``DISTINCT`` aggregate, an expression) stays relational.
"""

from __future__ import annotations

import pyarrow as pa

from ..results import PUSHABLE, Reduction, TopRows

__all__ = ["PUSHDOWN", "Reduction", "TopRows", "reduction_for", "top_for"]

#: The rewrite is on (tests turn it off to compare with the relational answer).
PUSHDOWN = True


def _numeric(type_: pa.DataType) -> bool:
    return pa.types.is_integer(type_) or pa.types.is_floating(type_)


def reduction_for(key: str | None, key_name: str | None,
                  calls: list[tuple[str, str, str | None, bool]],
                  columns: dict[str, pa.DataType], vertex: set[str],
                  string_ids: bool) -> Reduction | None:
    """The :class:`Reduction` computing ``calls`` (output name, function, algorithm column or
    None, DISTINCT) ``GROUP BY key`` (an algorithm column, named ``key_name`` in the output, or
    None) over an operator's rows, or None where it must stay relational. ``columns``: the
    algorithm's output types; ``vertex``: its vertex-valued columns (the first the position)."""
    if key is not None:
        # Counting by an integer column of values in [0, |V|): a vertex-valued one other than
        # the position (a component, a label) or a depth; the device counts into |V| bins.
        position = next((c for c in columns if c in vertex), None)
        if not pa.types.is_integer(columns[key]) or key == position:
            return None
    out = []
    for output, function, column, distinct in calls:
        if distinct or function not in PUSHABLE:
            return None
        if column is not None:
            if not _numeric(columns[column]):
                return None
            if column in vertex and (string_ids or function in ("sum", "mean")):
                return None  # only min/max map to a user id (ids ascend with internal ids)
        if key is not None and function not in ("count_all", "count"):
            return None
        out.append((output, function, column))
    return Reduction(key, key_name, tuple(out))


def top_for(column: str, descending: bool, limit: int, offset: int,
            outputs: tuple[tuple[str, str], ...], columns: dict[str, pa.DataType],
            vertex: set[str]) -> TopRows | None:
    """The :class:`TopRows` of ``ORDER BY column [DESC] LIMIT limit OFFSET offset`` keeping
    ``outputs`` ((output name, algorithm column) each), or None: one numeric key that is not
    vertex-valued."""
    if column in vertex or not _numeric(columns[column]):
        return None
    return TopRows(column, descending, int(limit), int(offset), outputs)

"""INSERT INTO g.edges | g.vertices: rows checked against the graph's columns, cast to their
types, added as delta records; the user's ids become dense ids, and ids that are no vertex yet
are added as vertices first (with NULL properties)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa

from graphdb.catalog.delta import Op
from graphdb.storage.lazy import pc

from ..cancel import check_cancelled
from ..errors import InvalidArgument, StatementMismatch
from ..physical.nodes import PhysicalNode
from .target import Target, cast_column

if TYPE_CHECKING:
    from ..runner import Runner

__all__ = ["InsertOperator", "count_table", "insert_edges", "insert_table"]


def count_table(count: int) -> pa.Table:
    """What a write returns: the rows it inserted, deleted or changed."""
    return pa.table({"Count": pa.array([count], pa.int64())})


@dataclass(eq=False, kw_only=True)
class InsertOperator(PhysicalNode):
    """Runs :class:`graphdb.executor.plan.InsertRows`."""

    reads_data: bool = False

    def run(self, runner: "Runner", metrics: dict) -> pa.Table:
        node = self.logical
        writer = runner.writer_for()
        with writer.statement():
            target = Target(runner, writer, node.graph, node.table)
            names = target.columns() if node.columns is None else \
                [target.column(c) for c in node.columns]
            rows = runner.input(self, 0)
            if rows.num_columns != len(names):
                raise StatementMismatch(
                    f"a VALUES row has {rows.num_columns} values for the {len(names)} columns "
                    f"({', '.join(names)})" if node.values else
                    f"the SELECT gives {rows.num_columns} columns for the {len(names)} of the "
                    f"INSERT ({', '.join(names)})")
            count = insert_table(target, pa.table(list(rows.columns), names=names))
            check_cancelled()  # an interrupt until here undoes the statement; the commit is whole
        return count_table(count)


def insert_table(target: Target, rows: pa.Table) -> int:
    """Insert ``rows`` (columns named as the target table's) into the target."""
    if len(set(rows.column_names)) != rows.num_columns:
        raise StatementMismatch("a column is named twice in the INSERT's column list")
    if target.table == "edges":
        return insert_edges(target, rows)
    return _insert_vertices(target, rows)


def insert_edges(target: Target, rows: pa.Table) -> int:
    n = rows.num_rows
    for needed in ["src", "dst"] + ([target.weight_name] if target.weight_name else []):
        if needed not in rows.column_names:
            raise StatementMismatch(f"INSERT INTO {target.name}.edges needs column {needed}"
                                    + (" (the graph is weighted)" if needed == target.weight_name
                                       else ""))
    if n == 0:
        return 0
    ops: list[Op] = []
    ends = pa.concat_arrays([target.ids(rows, "src"), target.ids(rows, "dst")])
    dense = target.dense_of(ends, create=True, ops=ops)
    columns = {"src": pa.array(dense[:n], pa.int64()), "dst": pa.array(dense[n:], pa.int64())}
    if target.weight_name:
        weights = cast_column(rows.column(target.weight_name), pa.float64(), target.weight_name,
                              target.name)
        values = weights.to_numpy(zero_copy_only=False)
        bad = np.flatnonzero(np.isnan(values) | np.isinf(values) | (values < 0))
        if weights.null_count or bad.size:
            at = int(bad[0]) if bad.size else int(np.flatnonzero(
                np.asarray(weights.is_null()))[0])
            raise InvalidArgument(f"{target.name}: edge weights are non-negative numbers; "
                                  f"row {at + 1} has {weights[at].as_py()!r}")
        columns["weight"] = weights
    table = pa.table(columns)
    for field, column in zip(target.edge_props, target.properties(rows, target.edge_props)):
        table = table.append_column(field, column)
    ops.append(Op("add_edges", table))
    check_cancelled()  # the last point before the log changes (undone on failure, whole)
    target.apply(ops)
    return n


def _insert_vertices(target: Target, rows: pa.Table) -> int:
    if "id" not in rows.column_names:
        raise StatementMismatch(f"INSERT INTO {target.name}.vertices needs column id")
    if rows.num_rows == 0:
        return 0
    ids = target.ids(rows, "id")
    if pc.count_distinct(ids).as_py() != len(ids):
        raise InvalidArgument(f"{target.name}: the INSERT names a vertex id twice")
    exists = target.log.resolve(ids) >= 0
    if exists.any():
        shown = ids.filter(pa.array(exists)).slice(0, 5).to_pylist()
        raise InvalidArgument(f"{target.name}: vertex {', '.join(map(repr, shown))} exists "
                              "already (UPDATE changes its properties)")
    props = pa.schema([f for f in target.vertex_schema if f.name != "id"])
    table = pa.table([ids] + target.properties(rows, props), names=["id"] + props.names)
    table = table.sort_by("id")  # in id order, as dense_of adds them
    target.apply([Op("add_vertices", table)])
    return rows.num_rows

"""UPDATE g.edges | g.vertices SET ...: the rows the WHERE picks get their new values; an edge
that changes is deleted and inserted again with them (a vertex's properties change in place;
its id never does)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from graphdb.catalog.delta import Op

from ..plan import CANONICAL, ROW
from .delete import PickingWrite, claim, int_column
from .insert import insert_edges
from .target import Target, cast_column

__all__ = ["UpdateOperator"]


@dataclass(eq=False, kw_only=True)
class UpdateOperator(PickingWrite):
    """Runs :class:`graphdb.executor.plan.UpdateRows`."""

    def change(self, target: Target, picked: pa.Table) -> int:
        names = [target.column(c) for c in self.logical.columns]
        if target.table == "vertices":
            return _update_vertices(target, picked, names)
        return _update_edges(target, picked, names)


def _update_vertices(target, picked: pa.Table, names: list[str]) -> int:
    if not picked.num_rows:
        return 0
    schema = target.vertex_schema
    columns = [cast_column(picked.column(i + 1), schema.field(n).type, n, target.name)
               for i, n in enumerate(names)]
    table = pa.table([pa.array(int_column(picked, ROW), pa.int64())] + columns,
                     names=["vertex"] + names)
    target.apply([Op("update_vertices", table)])
    return picked.num_rows


def _update_edges(target, picked: pa.Table, names: list[str]) -> int:
    owners, positions = claim(target, picked)
    if not owners.size:
        return 0
    # the rows that own an edge, in owner order, give its new values
    origin = int_column(picked, ROW)
    canonical = np.asarray(picked.column(CANONICAL).to_numpy(zero_copy_only=False), dtype=bool)
    first = {}
    for i in np.argsort(~canonical, kind="stable").tolist():
        first.setdefault(int(origin[i]), i)
    rows = picked.take(pa.array([first[int(o)] for o in owners], pa.int64()))
    rows = pa.table(list(rows.columns[2:]), names=names)
    ops = [Op("delete_edges", pa.table({"edge": pa.array(positions, pa.int64())}))]
    target.apply(ops, deleted_base_edges=int(np.count_nonzero(owners >= 0)))
    insert_edges(target, rows)
    return int(owners.size)

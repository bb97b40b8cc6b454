"""DELETE FROM g.edges | g.vertices: the rows the WHERE picks (from the graph's rows as its
newest version has them, :class:`~.target.Target`) become tombstones. A vertex that still has
edges is deleted only with DETACH, which deletes its edges too."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa

from graphdb.catalog import CatalogError
from graphdb.catalog.delta import Op

from ..cancel import check_cancelled
from ..delta import DeltaGraph
from ..errors import InvalidArgument
from ..physical.nodes import PhysicalNode
from ..plan import CANONICAL, ROW
from .insert import count_table
from .target import Target, reading

if TYPE_CHECKING:
    from ..runner import Runner

__all__ = ["DeleteOperator", "PickingWrite", "claim", "int_column"]


@dataclass(eq=False, kw_only=True)
class PickingWrite(PhysicalNode):
    """A DELETE or UPDATE: in one statement of the session's writer, the rows its input picks
    from the target's rows, then :meth:`change` applies it to them."""

    def run(self, runner: "Runner", metrics: dict) -> pa.Table:
        writer = runner.writer_for()
        with writer.statement():
            with reading(self, self.target_of(runner, writer)) as target:
                picked = runner.input(self, 0)
            count = self.change(target, picked)
            check_cancelled()  # an interrupt until here undoes the statement; the commit is whole
        return count_table(count)

    def target_of(self, runner: "Runner", writer) -> Target:
        """What the statement writes, at its newest version (reading it takes the lock)."""
        return Target(runner, writer, self.logical.graph, self.logical.table)

    def change(self, target: Target, picked: pa.Table) -> int:
        """Apply the statement to the rows ``picked``; how many it changed."""
        raise NotImplementedError


@dataclass(eq=False, kw_only=True)
class DeleteOperator(PickingWrite):
    """Runs :class:`graphdb.executor.plan.DeleteRows`."""

    def change(self, target: Target, picked: pa.Table) -> int:
        if target.table == "vertices":
            return _delete_vertices(target, int_column(picked, ROW), self.logical.detach)
        return _delete_edges(target, picked)


def int_column(table: pa.Table, name: str) -> np.ndarray:
    return np.asarray(table.column(name).to_numpy(), dtype=np.int64)


def _delete_edges(target: Target, picked: pa.Table) -> int:
    owners, positions = claim(target, picked)
    if not owners.size:
        return 0
    deleted_base = int(np.count_nonzero(owners >= 0))
    target.apply([Op("delete_edges", pa.table({"edge": pa.array(positions, pa.int64())}))],
                 deleted_base_edges=deleted_base)
    return int(owners.size)


def claim(target: Target, picked: pa.Table) -> tuple[np.ndarray, np.ndarray]:
    """(the edges the picked rows stand for, each once, as origins in the order of the rows
    that own them; every stored position or delta edge to delete). On an undirected graph a
    base edge's two stored rows pair up: the row from the smaller endpoint owns the edge when
    both were picked, and its twin in the other row is deleted with it."""
    origin = int_column(picked, ROW)
    if target.entry.directed:
        keep = np.unique(origin, return_index=True)[1]
        owners = origin[np.sort(keep)]
        return owners, owners
    canonical = np.asarray(picked.column(CANONICAL).to_numpy(zero_copy_only=False), dtype=bool)
    order = np.argsort(~canonical, kind="stable")
    origin = origin[order]
    owners, positions = [], []
    used: set[int] = set()
    twins = _Twins(target)
    for o in origin.tolist():
        if o in used:
            continue
        used.add(o)
        owners.append(o)
        positions.append(o)
        if o >= 0:
            twin = twins.of(o, used)
            if twin is not None:
                used.add(twin)
                positions.append(twin)
    return np.array(owners, dtype=np.int64), np.array(positions, dtype=np.int64)


class _Twins:
    """The other stored copy of an undirected base edge: in the row of its target, an entry
    back to its source with the same weight and properties, not deleted, not taken yet."""

    def __init__(self, target: Target):
        graph = target.graph
        base = graph.base if isinstance(graph, DeltaGraph) else graph
        self.csr = base.csr("out", weights=target.entry.weighted)
        self.props = target.catalog.edge_properties(target.entry.base)
        self.dead = set(target.catalog.versions.view(target.entry).tombstones.tolist()) \
            if target.entry.changed else set()

    def of(self, position: int, used: set[int]) -> int | None:
        csr = self.csr
        u = int(np.searchsorted(csr.offsets, position, side="right")) - 1
        v = int(csr.targets[position])
        if u == v:
            return None  # a self loop is stored once
        lo, hi = int(csr.offsets[v]), int(csr.offsets[v + 1])
        found = np.flatnonzero(csr.targets[lo:hi] == u) + lo
        if csr.weights is not None:
            found = found[csr.weights[found] == csr.weights[position]]
        mine = None if self.props is None else self.props.slice(position, 1).to_pylist()
        for q in found.tolist():
            if q in used or q in self.dead:
                continue
            if mine is None or self.props.slice(q, 1).to_pylist() == mine:
                return q
        raise CatalogError(f"the stored copy of an undirected edge at position {position} has "
                           "no twin; the graph's storage is inconsistent")


def _delete_vertices(target: Target, dense: np.ndarray, detach: bool) -> int:
    dense = np.unique(dense)
    if not dense.size:
        return 0
    entry = target.entry
    graph = target.graph
    view = dense if not entry.changed else target.catalog.versions.view(entry).lut[dense]
    csr = graph.csr("out")
    starts, ends = csr.offsets[view], csr.offsets[view + 1]
    counts = ends - starts
    outgoing = np.repeat(starts - np.concatenate([[0], np.cumsum(counts)[:-1]]), counts) \
        + np.arange(int(counts.sum()), dtype=np.int64)
    incoming = np.flatnonzero(np.isin(csr.targets, view))
    incident = np.unique(np.concatenate([outgoing, incoming]))
    ops: list[Op] = []
    deleted_base = 0
    if incident.size:
        origin = graph.origin() if isinstance(graph, DeltaGraph) else \
            np.arange(entry.num_edges, dtype=np.int64)
        if not detach:
            per_vertex = counts.copy()
            if entry.directed:
                per_vertex += np.bincount(csr.targets[incoming],
                                          minlength=graph.num_vertices)[view]
            ids = target.runner.vertex_ids(entry).user(view).to_pylist()
            worst = int(np.argmax(per_vertex))
            raise InvalidArgument(
                f"{target.name}: cannot delete vertex {ids[worst]!r}: it has "
                f"{int(per_vertex[worst])} edge{'s' if per_vertex[worst] != 1 else ''}"
                + (f" ({int(np.count_nonzero(per_vertex))} of the {len(view)} vertices have "
                   "edges)" if len(view) > 1 else "")
                + "; DETACH DELETE deletes a vertex with its edges")
        positions = np.unique(origin[incident])
        if entry.directed:
            deleted_base = int(np.count_nonzero(positions >= 0))
        else:
            base = positions[positions >= 0]
            loops = _loops(target, base)
            deleted_base = int(loops + (base.size - loops) // 2)
        ops.append(Op("delete_edges", pa.table({"edge": pa.array(positions, pa.int64())})))
    ops.append(Op("delete_vertices", pa.table({"vertex": pa.array(dense, pa.int64())})))
    target.apply(ops, deleted_base_edges=deleted_base)
    return int(dense.size)


def _loops(target: Target, positions: np.ndarray) -> int:
    graph = target.graph
    base = graph.base if isinstance(graph, DeltaGraph) else graph
    csr = base.csr("out")
    rows = np.searchsorted(csr.offsets, positions, side="right") - 1
    return int(np.count_nonzero(rows == csr.targets[positions]))

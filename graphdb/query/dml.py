"""INSERT, DELETE and UPDATE of a graph's edges and vertices, as delta operations.

A statement is turned into operations on dense ids (:mod:`graphdb.catalog.delta`) against the
graph's newest version (its writer lock held, :mod:`graphdb.catalog.writer`):

- INSERT: the rows (VALUES evaluated here, a SELECT by the query engine) are checked against the
  graph's columns and cast to their types; the user's ids become dense ids, and ids that are no
  vertex yet are added as vertices first (with NULL properties).
- DELETE and UPDATE: the WHERE runs in the query engine over the graph's rows as this version
  has them, each with a hidden row identity: for ``g.edges`` where the edge comes from (a base
  position or a delta edge), for ``g.vertices`` its dense id. An edge that UPDATE changes is
  deleted and inserted again with its new values. A vertex that still has edges is deleted only
  with DETACH, which deletes its edges too.

On an undirected graph each edge is stored in both directions; its table shows both rows, and a
WHERE that matches either deletes (or changes) the edge once: both stored copies go.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from sqlglot import exp

from graphdb.catalog.delta import Op
from graphdb.executor.delta import DeltaGraph

from ..errors import BinderError, CatalogError, InvalidInputError
from .dialect import GraphTable
from .parameters import Parameters, placeholders
from .writes import bind, run_select

if TYPE_CHECKING:
    from ..connection import Connection
    from .parser import Statement

__all__ = ["checkpoint", "commit", "create_graph", "insert_rows", "rollback", "write"]

#: Hidden columns of the rows a WHERE runs over.
ROW = "__graphdb_row"
CANONICAL = "__graphdb_canonical"
TARGET = "__graphdb_target"


class _NotConstant(Exception):
    pass


class Target:
    """The graph a statement writes to, at its newest version (the writer lock is held)."""

    def __init__(self, con: "Connection", name: str, table: str):
        if table not in ("edges", "vertices"):
            raise BinderError(f"cannot write to {name}.{table}: a graph's writable tables are "
                              f"{name}.edges and {name}.vertices")
        self.con = con
        self.writer = con._writes()
        self.entry = self.writer.entry(name)
        if "property_graph" in self.entry.stats:  # (its labels, keys and tables are not kept)
            raise BinderError(f"'{self.entry.name}' is a property graph: writes to its labelled "
                              "tables are not supported yet; CREATE OR REPLACE PROPERTY GRAPH "
                              "stores it anew")
        self.name = self.entry.name
        self.table = table
        self.log = self.writer.log(self.entry)
        self.weight_name = (self.entry.stats.get("weight_column") or "weight"
                            if self.entry.weighted else None)
        self.edge_props = self.log.edge_schema or pa.schema([])
        self.vertex_schema = self.log.vertex_schema
        self.id_type = pa.string() if self.entry.id_type == "string" else pa.int64()

    @property
    def graph(self):
        return self.con._runner.graph(self.entry)

    def columns(self) -> list[str]:
        if self.table == "vertices":
            return list(self.vertex_schema.names)
        return ["src", "dst"] + ([self.weight_name] if self.weight_name else []) + \
            list(self.edge_props.names)

    def column(self, name: str) -> str:
        """The table's spelling of column ``name`` (SQL names are case-insensitive)."""
        for column in self.columns():
            if column.lower() == name.lower():
                return column
        raise BinderError(f"{self.name}.{self.table} has no column '{name}' (columns: "
                          f"{', '.join(self.columns())})")

    def apply(self, ops: list[Op], deleted_base_edges: int = 0) -> None:
        if ops:
            self.entry = self.writer.apply(self.entry, ops,
                                           deleted_base_edges=deleted_base_edges)

    # -- rows with their identity ---------------------------------------------------------------
    def edge_rows(self) -> pa.Table:
        """The graph's stored edges (both directions of an undirected one), each with its
        origin (:data:`ROW`) and whether it is the copy from the smaller endpoint."""
        graph = self.graph
        entry = self.entry
        csr = graph.csr("out", weights=entry.weighted)
        ids = self.con._runner.vertex_ids(entry)
        sources = csr.sources()
        columns = {"src": ids.user(sources), "dst": ids.user(csr.targets)}
        if entry.weighted:
            columns[self.weight_name] = pa.array(csr.weights, pa.float64())
        table = pa.table(columns)
        if isinstance(graph, DeltaGraph):
            props, origin = graph.edge_properties(), graph.origin()
        else:
            props = self.con.catalog.edge_properties(entry)
            origin = np.arange(entry.num_edges, dtype=np.int64)
        if props is not None:
            for field, column in zip(props.schema, props.columns):
                table = table.append_column(field, column)
        table = table.append_column(ROW, pa.array(origin, pa.int64()))
        return table.append_column(CANONICAL, pa.array(sources <= csr.targets))

    def vertex_rows(self) -> pa.Table:
        table = self.con._runner.graph_table(self.entry, "vertices")
        if self.entry.changed:
            dense = self.con.catalog.versions.view(self.entry).inv
        else:
            dense = np.arange(self.entry.num_vertices, dtype=np.int64)
        return table.append_column(ROW, pa.array(dense, pa.int64()))

    def dense_of(self, ids: pa.Array, *, create: bool, ops: list[Op]) -> np.ndarray:
        """Dense ids of the user's ids; with ``create``, ids that are no vertex yet are added
        as new vertices (an operation appended to ``ops``), else -1 for them."""
        dense = self.log.resolve(ids)
        missing = dense < 0
        if create and missing.any():
            absent = ids.filter(pa.array(missing))
            new = pc.unique(absent)
            props = [pa.nulls(len(new), f.type) for f in self.vertex_schema if f.name != "id"]
            names = [f.name for f in self.vertex_schema if f.name != "id"]
            ops.append(Op("add_vertices", pa.table([new] + props, names=["id"] + names)))
            start = self.log.next_vertex
            dense[missing] = start + np.asarray(pc.index_in(absent, value_set=new),
                                                dtype=np.int64)
        return dense


# -- the statements -----------------------------------------------------------------------------
def write(con: "Connection", statement: "Statement", parameters: Any) -> int:
    """INSERT, DELETE or UPDATE; returns the rows it inserted, deleted or changed."""
    ast = statement.ast
    node = ast.this.this if isinstance(ast.this, exp.Schema) else ast.this
    if isinstance(node, GraphTable):
        raise BinderError(f"GRAPH_TABLE is read-only (as in SQL/PGQ): {statement.kind.upper()} "
                          "writes to a graph's g.edges or g.vertices")
    if not isinstance(node, exp.Table) or not node.args.get("db"):
        raise BinderError(f"{statement.kind.upper()} writes to a graph's table: g.edges or "
                          f"g.vertices, not {node.sql()}")
    writer = con._writes()
    with writer.statement():
        target = Target(con, node.args["db"].name, node.name.lower())
        if statement.kind == "insert" and isinstance(ast.expression, exp.Values):
            count = _insert(target, ast, parameters)  # (no query: no statement snapshot)
        else:
            with con.catalog.snapshot():  # what a WHERE or SELECT reads
                if statement.kind == "insert":
                    count = _insert(target, ast, parameters)
                elif statement.kind == "delete":
                    count = _delete(target, ast, parameters,
                                    statement.options.get("detach", False))
                else:
                    count = _update(target, ast, parameters)
    _after_commit(con, writer)
    return count


def insert_rows(con: "Connection", graph: str, table: str, rows: pa.Table) -> int:
    """Insert ``rows`` (columns named as the table's) into ``graph``'s edges or vertices."""
    writer = con._writes()
    with writer.statement():
        target = Target(con, graph, table)
        named = {target.column(name): rows.column(name) for name in rows.column_names}
        count = _insert_table(target, pa.table(named))
    _after_commit(con, writer)
    return count


def _after_commit(con: "Connection", writer) -> None:
    if not writer.in_transaction:
        from .compacting import maybe_compact

        maybe_compact(con, writer.committed)


def commit(con: "Connection") -> None:
    writer = con._writes()
    con._buffer = None
    writer.commit()
    from .compacting import maybe_compact

    maybe_compact(con, writer.committed)


def rollback(con: "Connection") -> None:
    con._buffer = None
    for entry in con._writes().rollback():
        con._runner.forget(entry)


def create_graph(con: "Connection", statement: "Statement") -> str:
    from graphdb.catalog.generation import create_graph as create

    options = statement.options
    name = statement.name
    if not options["replace"] and con._existing(name) is not None:
        if statement.if_exists:
            return f"graph '{name}' exists; nothing created"
        raise CatalogError(f"graph '{name}' already exists: CREATE OR REPLACE GRAPH {name} "
                           f"(...), or DROP GRAPH {name} first")
    vertices = dict(options["vertices"])
    id_type = vertices.pop("id", pa.int64())
    if id_type not in (pa.int64(), pa.string()):
        raise InvalidInputError("a vertex id is BIGINT or VARCHAR, not " + str(id_type))
    edges = dict(options["edges"])
    weight = edges.pop("weight", None)
    if weight is not None and weight not in (pa.float64(), pa.float32(), pa.int64(),
                                             pa.int32()):
        raise InvalidInputError(f"the weight column is a number, not {weight}")
    for reserved in ("src", "dst"):
        if reserved in edges:
            raise InvalidInputError(f"EDGES lists the properties of an edge; '{reserved}' is "
                                    "always there")
    old = con._existing(name)
    # (errors of the catalog are translated by the connection, as for every statement)
    entry = create(con.catalog, name, directed=not options["undirected"],
                   weighted=weight is not None,
                   id_type="string" if id_type == pa.string() else "int64",
                   vertex_properties=pa.schema(list(vertices.items())),
                   edge_properties=pa.schema(list(edges.items())),
                   replace=options["replace"])
    if old is not None:
        con._runner.forget(old)
    return f"created graph '{entry.name}'"


def checkpoint(con: "Connection", name: str) -> str:
    from .compacting import checkpoint as run

    return run(con, name)


# -- INSERT -------------------------------------------------------------------------------------
def _insert(target: Target, ast: exp.Insert, parameters: Any) -> int:
    if isinstance(ast.this, exp.Schema):
        columns = [target.column(c.name) for c in ast.this.expressions]
    else:
        columns = target.columns()
    if len(set(columns)) != len(columns):
        raise BinderError("a column is named twice in the INSERT's column list")
    source = ast.expression
    if isinstance(source, exp.Values):
        rows = _values(target.con, source, parameters, columns)
    elif isinstance(source, exp.Query):
        result = run_select(target.con, bind(ast, parameters).expression, {})
        if result.num_columns != len(columns):
            raise BinderError(f"the SELECT gives {result.num_columns} columns for the "
                              f"{len(columns)} of the INSERT ({', '.join(columns)})")
        rows = pa.table(list(result.columns), names=columns)
    else:
        raise BinderError("INSERT takes VALUES (...) or a SELECT")
    return _insert_table(target, rows)


def _insert_table(target: Target, rows: pa.Table) -> int:
    if target.table == "edges":
        return _insert_edges(target, rows)
    return _insert_vertices(target, rows)


def _constant(node: exp.Expression, params: Parameters) -> Any:
    if isinstance(node, (exp.Placeholder, exp.Parameter)):
        return params.value(node)
    if isinstance(node, exp.Literal):
        if node.is_string:
            return node.this
        try:
            return int(node.this)
        except ValueError:
            return float(node.this)
    if isinstance(node, exp.Neg):
        value = _constant(node.this, params)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return -value
    if isinstance(node, exp.Boolean):
        return node.this
    if isinstance(node, exp.Null):
        return None
    if isinstance(node, exp.Paren):
        return _constant(node.this, params)
    raise _NotConstant


def _values(con: "Connection", values: exp.Values, parameters: Any,
            columns: list[str]) -> pa.Table:
    """The rows of VALUES: constants and parameters read here (the common case, fast), any
    other expression computed by the query engine."""
    rows = values.expressions
    for row in rows:
        if len(row.expressions) != len(columns):
            raise BinderError(f"a VALUES row has {len(row.expressions)} values for the "
                              f"{len(columns)} columns ({', '.join(columns)})")
    params = Parameters(values, parameters)
    try:
        data = [[_constant(node, params) for node in row.expressions] for row in rows]
    except _NotConstant:
        bound = bind(values, parameters)
        names = [f"c{i}" for i in range(len(columns))]
        bound.set("alias", exp.TableAlias(this=exp.to_identifier("__graphdb_values"),
                                          columns=[exp.to_identifier(n) for n in names]))
        result = run_select(con, exp.select("*").from_(bound), {})
        return pa.table(list(result.columns), names=columns)
    return _table_of_rows(data, columns)


def _table_of_rows(data: list[list[Any]], columns: list[str]) -> pa.Table:
    arrays = []
    for i, name in enumerate(columns):
        values = [row[i] for row in data]
        try:
            arrays.append(pa.array(values))
        except (pa.ArrowInvalid, pa.ArrowTypeError):
            raise InvalidInputError(f"column {name}: the values {values[:3]!r} are not of one "
                                    "type") from None
    return pa.table(arrays, names=columns)


def _cast(column, type_: pa.DataType, name: str, graph: str) -> pa.Array:
    if isinstance(column, pa.ChunkedArray):
        column = column.combine_chunks()
    if column.type == type_:
        return column
    try:
        return column.cast(type_)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError):
        sample = column.slice(0, 3).to_pylist()
        raise InvalidInputError(f"{graph}: column {name} is {type_}; cannot store {sample!r} "
                                "in it") from None


def _ids(target: Target, rows: pa.Table, name: str) -> pa.Array:
    column = rows.column(name)
    if target.id_type == pa.int64() and (pa.types.is_floating(column.type)
                                          or pa.types.is_string(column.type)):
        raise InvalidInputError(f"{target.name}: vertex ids are integers; {name} holds "
                                f"{column.slice(0, 3).to_pylist()!r}")
    ids = _cast(column, target.id_type, name, target.name)
    if ids.null_count:
        raise InvalidInputError(f"{target.name}: {name} is NULL in a row; every edge and vertex "
                                "needs an id")
    return ids


def _properties(target: Target, rows: pa.Table, schema: pa.Schema) -> list[pa.Array]:
    n = rows.num_rows
    return [_cast(rows.column(f.name), f.type, f.name, target.name) if f.name in
            rows.column_names else pa.nulls(n, f.type) for f in schema]


def _insert_edges(target: Target, rows: pa.Table) -> int:
    n = rows.num_rows
    for needed in ["src", "dst"] + ([target.weight_name] if target.weight_name else []):
        if needed not in rows.column_names:
            raise BinderError(f"INSERT INTO {target.name}.edges needs column {needed}"
                              + (" (the graph is weighted)" if needed == target.weight_name
                                 else ""))
    if n == 0:
        return 0
    ops: list[Op] = []
    ends = pa.concat_arrays([_ids(target, rows, "src"), _ids(target, rows, "dst")])
    dense = target.dense_of(ends, create=True, ops=ops)
    columns = {"src": pa.array(dense[:n], pa.int64()), "dst": pa.array(dense[n:], pa.int64())}
    if target.weight_name:
        weights = _cast(rows.column(target.weight_name), pa.float64(), target.weight_name,
                        target.name)
        values = weights.to_numpy(zero_copy_only=False)
        bad = np.flatnonzero(np.isnan(values) | np.isinf(values) | (values < 0))
        if weights.null_count or bad.size:
            at = int(bad[0]) if bad.size else int(np.flatnonzero(
                np.asarray(weights.is_null()))[0])
            raise InvalidInputError(f"{target.name}: edge weights are non-negative numbers; "
                                    f"row {at + 1} has {weights[at].as_py()!r}")
        columns["weight"] = weights
    table = pa.table(columns)
    for field, column in zip(target.edge_props, _properties(target, rows, target.edge_props)):
        table = table.append_column(field, column)
    ops.append(Op("add_edges", table))
    target.apply(ops)
    return n


def _insert_vertices(target: Target, rows: pa.Table) -> int:
    if "id" not in rows.column_names:
        raise BinderError(f"INSERT INTO {target.name}.vertices needs column id")
    if rows.num_rows == 0:
        return 0
    ids = _ids(target, rows, "id")
    if pc.count_distinct(ids).as_py() != len(ids):
        raise InvalidInputError(f"{target.name}: the INSERT names a vertex id twice")
    exists = target.log.resolve(ids) >= 0
    if exists.any():
        shown = ids.filter(pa.array(exists)).slice(0, 5).to_pylist()
        raise InvalidInputError(f"{target.name}: vertex {', '.join(map(repr, shown))} exists "
                                "already (UPDATE changes its properties)")
    props = pa.schema([f for f in target.vertex_schema if f.name != "id"])
    table = pa.table([ids] + _properties(target, rows, props), names=["id"] + props.names)
    target.apply([Op("add_vertices", table)])
    return rows.num_rows


# -- DELETE and UPDATE --------------------------------------------------------------------------
def _selected(target: Target, rows: pa.Table, node: exp.Table, where: exp.Expression | None,
              select: list[exp.Expression]) -> pa.Table:
    """The ``select`` list over the rows ``where`` picks (the query engine runs it)."""
    alias = node.alias or node.name
    query = exp.select(*select).from_(exp.Table(this=exp.to_identifier(TARGET),
                                                alias=exp.TableAlias(
                                                    this=exp.to_identifier(alias))))
    if where is not None:
        query = query.where(where.this)
    return run_select(target.con, query, {TARGET: rows})


def _delete(target: Target, ast: exp.Delete, parameters: Any, detach: bool) -> int:
    bound = bind(ast, parameters)
    where = bound.args.get("where")
    if target.table == "vertices":
        picked = _selected(target, target.vertex_rows(), bound.this, where, [exp.column(ROW)])
        return _delete_vertices(target, _int_column(picked, ROW), detach)
    picked = _selected(target, target.edge_rows(), bound.this, where,
                       [exp.column(ROW), exp.column(CANONICAL)])
    owners, positions = _claim(target, picked)
    if not owners.size:
        return 0
    deleted_base = int(np.count_nonzero(owners >= 0))
    target.apply([Op("delete_edges", pa.table({"edge": pa.array(positions, pa.int64())}))],
                 deleted_base_edges=deleted_base)
    return int(owners.size)


def _int_column(table: pa.Table, name: str) -> np.ndarray:
    return np.asarray(table.column(name).to_numpy(), dtype=np.int64)


def _claim(target: Target, picked: pa.Table) -> tuple[np.ndarray, np.ndarray]:
    """(the edges the picked rows stand for, each once, as origins in the order of the rows
    that own them; every stored position or delta edge to delete). On an undirected graph a
    base edge's two stored rows pair up: the row from the smaller endpoint owns the edge when
    both were picked, and its twin in the other row is deleted with it."""
    origin = _int_column(picked, ROW)
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
        self.props = target.con.catalog.edge_properties(target.entry.base)
        self.dead = set(target.con.catalog.versions.view(target.entry).tombstones.tolist()) \
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
    view = dense if not entry.changed else target.con.catalog.versions.view(entry).lut[dense]
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
            ids = target.con._runner.vertex_ids(entry).user(view).to_pylist()
            worst = int(np.argmax(per_vertex))
            raise InvalidInputError(
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


def _update(target: Target, ast: exp.Update, parameters: Any) -> int:
    bound = bind(ast, parameters)
    where = bound.args.get("where")
    assigned: dict[str, exp.Expression] = {}
    for item in bound.expressions:
        if not isinstance(item, exp.EQ) or not isinstance(item.this, exp.Column):
            raise BinderError(f"UPDATE ... SET takes column = value, got {item.sql()}")
        name = target.column(item.this.name)
        if name in assigned:
            raise BinderError(f"UPDATE sets column {name} twice")
        assigned[name] = item.expression
    if target.table == "vertices":
        if "id" in assigned:
            raise InvalidInputError(f"{target.name}: a vertex's id cannot change; insert a new "
                                    "vertex (and move its edges) instead")
        select = [exp.column(ROW)] + [exp.alias_(e, n) for n, e in assigned.items()]
        picked = _selected(target, target.vertex_rows(), bound.this, where, select)
        if not picked.num_rows:
            return 0
        schema = target.vertex_schema
        columns = [_cast(picked.column(n), schema.field(n).type, n, target.name)
                   for n in assigned]
        table = pa.table([pa.array(_int_column(picked, ROW), pa.int64())] + columns,
                         names=["vertex"] + list(assigned))
        target.apply([Op("update_vertices", table)])
        return picked.num_rows
    names = target.columns()
    select = [exp.column(ROW), exp.column(CANONICAL)] + [
        exp.alias_(assigned[n], n) if n in assigned else exp.column(n) for n in names]
    picked = _selected(target, target.edge_rows(), bound.this, where, select)
    owners, positions = _claim(target, picked)
    if not owners.size:
        return 0
    # the rows that own an edge, in owner order, give its new values
    origin = _int_column(picked, ROW)
    canonical = np.asarray(picked.column(CANONICAL).to_numpy(zero_copy_only=False), dtype=bool)
    first = {}
    for i in np.argsort(~canonical, kind="stable").tolist():
        first.setdefault(int(origin[i]), i)
    rows = picked.take(pa.array([first[int(o)] for o in owners], pa.int64())).select(names)
    ops = [Op("delete_edges", pa.table({"edge": pa.array(positions, pa.int64())}))]
    target.apply(ops, deleted_base_edges=int(np.count_nonzero(owners >= 0)))
    _insert_edges(target, rows)
    return int(owners.size)



def _simple(node: exp.Expression) -> bool:
    """Whether :func:`_constant` reads ``node`` (a literal, a parameter, a signed number)."""
    if isinstance(node, (exp.Placeholder, exp.Parameter, exp.Literal, exp.Boolean, exp.Null)):
        return True
    if isinstance(node, (exp.Neg, exp.Paren)):
        return _simple(node.this)
    return False


def execute_many(con: "Connection", statement: "Statement", seq_of_parameters) -> int | None:
    """``executemany`` of an INSERT of one VALUES row of constants and parameters: every
    parameter set's row inserted by one statement; None for any other INSERT."""
    ast = statement.ast
    source = ast.expression
    if not isinstance(source, exp.Values) or len(source.expressions) != 1 or \
            not all(_simple(n) for n in source.expressions[0].expressions):
        return None
    row = source.expressions[0].expressions
    nodes = tuple(placeholders(source))
    data = [[_constant(node, Parameters(source, parameters, nodes)) for node in row]
            for parameters in seq_of_parameters]
    node = ast.this.this if isinstance(ast.this, exp.Schema) else ast.this
    if not isinstance(node, exp.Table) or not node.args.get("db"):
        raise BinderError(f"INSERT writes to a graph's table: g.edges or g.vertices, not "
                          f"{node.sql()}")
    con._writable()
    writer = con._writes()
    with writer.statement():
        target = Target(con, node.args["db"].name, node.name.lower())
        if isinstance(ast.this, exp.Schema):
            columns = [target.column(c.name) for c in ast.this.expressions]
        else:
            columns = target.columns()
        if len(row) != len(columns):
            raise BinderError(f"the VALUES row has {len(row)} values for the {len(columns)} "
                              f"columns ({', '.join(columns)})")
        count = _insert_table(target, _table_of_rows(data, columns)) if data else 0
    _after_commit(con, writer)
    return count

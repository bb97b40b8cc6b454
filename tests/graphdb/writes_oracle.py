"""A reference model of a graph under writes, and the comparison with a fresh ingest.

:class:`Model` keeps the graph as plain Python (vertices with a ``name``, a list of edges with
a weight and a ``label``) and applies the same writes as the SQL under test, by their
definition, not by the engine's code. :func:`compare` loads the model's graph into a new
database (a fresh ingest, the independent oracle) and checks that the changed graph answers
every algorithm, ``g.edges``, ``g.vertices`` and a GRAPH_TABLE pattern exactly as it does
(floating point results to 1e-9: a changed graph's rows may sum in another order).
"""

from __future__ import annotations

import math
import random

import pyarrow as pa

import graphdb

LABELS = ["a", "b", "c"]


class Model:
    def __init__(self, directed: bool, weighted: bool, strings: bool):
        self.directed, self.weighted, self.strings = directed, weighted, strings
        self.vertices: dict = {}  # id -> name (or None)
        self.edges: list[list] = []  # [src, dst, weight, label]

    def vid(self, n: int):
        return f"v{n:03d}" if self.strings else n

    def copy(self) -> "Model":
        other = Model(self.directed, self.weighted, self.strings)
        other.vertices = dict(self.vertices)
        other.edges = [list(e) for e in self.edges]
        return other

    # -- the writes, by definition ----------------------------------------------------------
    def add_edge(self, src, dst, weight, label) -> None:
        for v in (src, dst):
            self.vertices.setdefault(v, None)
        self.edges.append([src, dst, float(weight) if self.weighted else None, label])

    def touches(self, edge, vertex) -> bool:
        """An edge whose row (either stored direction of an undirected one) has src = vertex."""
        return edge[0] == vertex or (not self.directed and edge[1] == vertex)

    def delete_edges(self, keep) -> int:
        before = len(self.edges)
        self.edges = [e for e in self.edges if keep(e)]
        return before - len(self.edges)

    def degree(self, vertex) -> int:
        return sum(1 for e in self.edges if vertex in (e[0], e[1]))

    # -- the fresh ingest -------------------------------------------------------------------
    def tables(self) -> tuple[pa.Table, pa.Table]:
        id_type = pa.string() if self.strings else pa.int64()
        ids = sorted(self.vertices)
        vertices = pa.table({"id": pa.array(ids, id_type),
                             "name": pa.array([self.vertices[i] for i in ids], pa.string())})
        columns = {"src": pa.array([e[0] for e in self.edges], id_type),
                   "dst": pa.array([e[1] for e in self.edges], id_type)}
        if self.weighted:
            columns["weight"] = pa.array([e[2] for e in self.edges], pa.float64())
        columns["label"] = pa.array([e[3] for e in self.edges], pa.string())
        return pa.table(columns), vertices


def create(con, model: Model, initial_edges: int, rng: random.Random) -> None:
    """The graph under test: loaded with a few edges, or created empty."""
    if initial_edges:
        for _ in range(initial_edges):
            model.add_edge(model.vid(rng.randrange(12)), model.vid(rng.randrange(12)),
                           rng.randint(1, 9), rng.choice(LABELS))
        edges, vertices = model.tables()
        con.ingest("g", edges, vertices=vertices, undirected=not model.directed)
        return
    columns = ", ".join((["weight DOUBLE"] if model.weighted else []) + ["label VARCHAR"])
    ids = "VARCHAR" if model.strings else "BIGINT"
    con.execute(f"CREATE GRAPH g (VERTICES (id {ids}, name VARCHAR), EDGES ({columns})"
                + ("" if model.directed else ", UNDIRECTED") + ")")


def _rows(result, float_columns=()) -> list:
    out = []
    for row in result.fetchall():
        out.append(tuple(round(v, 9) if i in float_columns and isinstance(v, float)
                         and math.isfinite(v) else v for i, v in enumerate(row)))
    return sorted(out, key=repr)


def _close(a: list, b: list, what: str, rel: float = 1e-9) -> None:
    assert len(a) == len(b), f"{what}: {len(a)} rows, fresh ingest {len(b)}"
    for x, y in zip(a, b):
        for u, v in zip(x, y):
            if isinstance(u, float) and isinstance(v, float):
                assert (u == v) or math.isclose(u, v, rel_tol=rel, abs_tol=1e-12), \
                    f"{what}: {x} != {y}"
            else:
                assert u == v, f"{what}: {x} != {y}"


def queries(model: Model, source) -> list[tuple[str, tuple]]:
    """(SQL, columns compared approximately) for every algorithm on graph g."""
    s = repr(source)
    out = [("SELECT * FROM g.edges", ()), ("SELECT * FROM g.vertices", ()),
           ("SELECT vertices, edges FROM graphs()", ()),
           (f"SELECT * FROM bfs(g, {s})", ()), (f"SELECT * FROM khop(g, {s}, 2)", ()),
           (f"SELECT * FROM sssp(g, {s})", (1,)), ("SELECT * FROM pagerank(g)", (1,)),
           ("SELECT * FROM wcc(g)", ()), ("SELECT * FROM cdlp(g)", ()),
           ("SELECT * FROM lcc(g)", (1,)),
           (f"SELECT * FROM neighbors(g, {s})", ()),
           (f"SELECT * FROM neighbors(g, {s}, direction => 'in')", ()),
           ("SELECT * FROM GRAPH_TABLE (g MATCH (a)-[e]->{1,2}(b) WHERE a.id = "
            f"{s} COLUMNS (b.id AS n))", ()),
           ("SELECT * FROM GRAPH_TABLE (g MATCH (a)-[e]->(b) WHERE a.id = "
            f"{s} COLUMNS (b.id AS n, b.name AS m))", ())]
    if not model.edges:  # a fresh ingest of no edges has no edge property columns to name
        return out
    out.append(("SELECT * FROM GRAPH_TABLE (g MATCH (a)-[e]->(b) WHERE a.id = "
                f"{s} COLUMNS (b.id AS n, e.label AS l))", ()))
    if model.weighted:
        out.append((f"SELECT * FROM GRAPH_TABLE (g MATCH (a)-[e]->(b) WHERE b.id = {s} "
                    "COLUMNS (a.id AS n, e.weight AS w))", (1,)))
    return out


def compare(con, model: Model, rng: random.Random) -> None:
    """``con``'s graph g against a fresh ingest of ``model`` (see the module docstring)."""
    if not model.vertices:
        assert con.execute("SELECT count(*) FROM g.vertices").fetchone() == (0,)
        assert con.execute("SELECT count(*) FROM g.edges").fetchone() == (0,)
        return
    edges, vertices = model.tables()
    with graphdb.connect() as fresh:
        fresh.ingest("g", edges, vertices=vertices, undirected=not model.directed)
        sources = sorted(model.vertices)
        # on a GPU machine (device 'auto') PageRank sums float32 contributions in an order
        # its atomics choose: held to 1e-4 there, as every GPU PageRank test
        gpu_rank = "gpu · " in " ".join(
            r[0] for r in con.execute("EXPLAIN SELECT * FROM pagerank(g)").fetchall())
        compared = set()  # a query naming no source is compared once, not once a source
        for source in {sources[0], rng.choice(sources)}:
            for sql, approximate in queries(model, source):
                if sql in compared:
                    continue
                compared.add(sql)
                rel = 1e-4 if gpu_rank and "pagerank" in sql else 1e-9
                _close(_rows(con.execute(sql), approximate),
                       _rows(fresh.execute(sql), approximate), sql, rel)

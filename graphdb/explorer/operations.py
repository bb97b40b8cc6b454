"""What the explorer's WebSocket operations do: one ``op_<name>(session, message)`` each,
returning the answer (see :mod:`graphdb.explorer.app`).

Statements run on the workers' connections (:mod:`.workers`); pages, charts and drawings are
cut from the kept Arrow results in a thread, so the server's loop never waits on them.

The explorer is read-only unless started with ``--write``: a statement is refused unless the
parser classifies it as a query (SELECT, SHOW, DESCRIBE, EXPLAIN of those), and the workers'
connections are opened read-only besides, with no access to files outside the database (DuckDB's
own configuration refuses ``read_csv``, ``glob``, file names in FROM, ``COPY``, ``ATTACH``).
Settings and transactions are refused even with ``--write``: the workers' connections are
shared by every tab, so a ``SET`` or a ``BEGIN`` of one tab would reach others' statements.
"""

from __future__ import annotations

import asyncio
import re
from typing import TYPE_CHECKING

import pyarrow as pa
import pyarrow.compute as pc

from ..errors import Error, InvalidInputError
from ..query.parser import READ_KINDS, parse
from .layout import SERVER_LAYOUT_FROM, positions, prepare_layout
from .plans import plan_tree
from .results import Stored, chart, is_numeric, json_rows, json_value
from .shapes import draw, induced_edges_sql, shape_of, vertex_id

if TYPE_CHECKING:
    from .app import Tab

__all__ = ["SHARED_KINDS", "classify", "FIRST_PAGE", "MAX_EXPAND", "MAX_LAYOUT"]

#: Statement kinds never run: they would change the connections every tab shares.
SHARED_KINDS = {"set": "SET", "reset": "RESET", "begin": "BEGIN", "commit": "COMMIT",
                "rollback": "ROLLBACK"}
#: Rows sent with a result (the table's first page).
FIRST_PAGE = 100
#: Neighbours a double-click adds, per direction.
MAX_EXPAND = 100
#: Vertices the page may ask to lay out (its drawing grows as vertices are expanded).
MAX_LAYOUT = 20000
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def classify(sql: str, write: bool) -> str:
    """The statement's kind, or InvalidInputError when the explorer does not run it."""
    statement = parse(sql)
    kind = statement.explained().kind  # EXPLAIN [ANALYZE] is allowed what its statement is
    if kind in SHARED_KINDS:
        raise InvalidInputError(
            f"{SHARED_KINDS[kind]} is not run by the explorer: its connections are shared by "
            "every tab (each statement commits on its own; settings are the server's: "
            "graphdb serve --device ...)")
    if not write and kind not in READ_KINDS:
        what = kind.replace("_", " ").upper()
        what = f"EXPLAIN of {what}" if statement.explain else what
        raise InvalidInputError(
            f"the explorer is read-only: {what} changes the database or touches files; "
            "start it with graphdb serve --write to allow writes")
    return kind


def _columns(table: pa.Table) -> list[dict]:
    from ..types import TypeCode

    return [{"name": f.name, "type": str(TypeCode(f.type)), "numeric": is_numeric(f.type)}
            for f in table.schema]


def _graphs_read(con, sql: str) -> list[str]:
    """The graphs a query reads, from its plan."""
    try:
        plan = con.plan(sql)
    except Exception:  # not a query (SHOW, DESCRIBE): it reads no graph to draw
        return []
    names = []
    for node in plan.walk():
        graph = getattr(node.logical, "graph", None)
        if isinstance(graph, str) and graph not in names:
            names.append(graph)
    return names


async def op_run(session: "Tab", message: dict) -> dict:
    sql = str(message.get("sql", ""))
    write = session.write
    ident = message.get("id")

    def work(con, job):
        kind = classify(sql, write)
        result = con.execute(sql)
        table = result.arrow()
        graphs = []
        if kind == "select" and result.kind != "explain":
            shape = shape_of(table, [])
            if shape is None or shape.kind != "vertices":
                graphs = _graphs_read(con, sql)
        return result, table, graphs

    result, table, graphs = await session.run_job(ident, work, progress=True)
    answer = {"type": "result", "kind": result.kind, "engine_ms": result.elapsed * 1000,
              "message": result.message, "rows": table.num_rows, "columns": _columns(table)}
    if result.kind == "explain" and table.column_names == ["plan"]:
        answer["plan"] = plan_tree(table.column("plan").to_pylist())
    stored = Stored(session.client.id, sql, table, graphs)
    session.store.add(stored)
    shape = shape_of(table, graphs)
    if shape is not None:  # it may be drawn next: the layout's libraries load meanwhile
        prepare_layout()
    answer.update(result=stored.id, page=await asyncio.to_thread(stored.page, 0, FIRST_PAGE),
                  shape=shape.describe() if shape else None,
                  graphs=graphs)
    return answer


async def op_page(session: "Tab", message: dict) -> dict:
    stored = session.store.get(message["result"], session.client.id)
    rows = await asyncio.to_thread(stored.page, int(message.get("offset", 0)),
                                   int(message.get("limit", FIRST_PAGE)), message.get("sort"),
                                   bool(message.get("desc")))
    return {"type": "page", "rows": rows, "offset": int(message.get("offset", 0))}


async def op_chart(session: "Tab", message: dict) -> dict:
    stored = session.store.get(message["result"], session.client.id)
    data = await asyncio.to_thread(chart, stored.table, str(message["value"]),
                                   message.get("label"), bool(message.get("log")))
    return {"type": "chart", **data}


async def op_graph(session: "Tab", message: dict) -> dict:
    stored = session.store.get(message["result"], session.client.id)
    shape = shape_of(stored.table, stored.graphs)
    if shape is None:
        raise InvalidInputError("these rows do not describe a graph: a graph needs src and dst "
                                "columns, paths (vertices(p), edges(p)), or the vertices of a "
                                "graph function")
    induced = None
    directed = True  # src -> dst, a path's steps; a graph's own edges as the graph has them
    if shape.kind == "vertices":
        column = stored.table.column(shape.columns[0]).drop_null()
        ids = pc.unique(column.slice(0, 2000)).to_pylist()
        sql = induced_edges_sql(shape.graph)
        graph = shape.graph

        def work(con, job):
            row = con.execute("SELECT directed FROM graphs() WHERE name = ?", [graph]).fetchone()
            return (row[0] if row else True), con.execute(sql, [ids, ids]).arrow()

        directed, induced = await session.run_job(message.get("id"), work)
    drawing = await asyncio.to_thread(_laid_out, stored.table, shape, induced)
    return {"type": "graph", "directed": directed, **drawing}


def _laid_out(table: pa.Table, shape, induced: pa.Table | None) -> dict:
    """The drawing, with its vertices' positions when it is large (:mod:`.layout`)."""
    drawing = draw(table, shape, induced=induced)
    nodes = drawing["nodes"]
    if len(nodes) >= SERVER_LAYOUT_FROM:
        index = {n["id"]: i for i, n in enumerate(nodes)}
        ends = [(index[e["source"]], index[e["target"]]) for e in drawing["edges"]]
        drawing["positions"] = _rounded(positions(len(nodes), [a for a, _ in ends],
                                                  [b for _, b in ends]))
    return drawing


def _rounded(xy) -> list[list[float]]:
    return xy.round(1).tolist()


async def op_layout(session: "Tab", message: dict) -> dict:
    """Positions for a drawing as the page holds it (after expansions): ``count`` vertices,
    ``edges`` as pairs of their numbers."""
    count = message.get("count")
    edges = message.get("edges")
    if not isinstance(count, int) or not 0 <= count <= MAX_LAYOUT or \
            not isinstance(edges, list) or len(edges) > 10 * MAX_LAYOUT:
        raise InvalidInputError(f"a layout is of at most {MAX_LAYOUT:,} vertices and "
                                f"{10 * MAX_LAYOUT:,} edges")

    def work() -> list[list[float]]:
        import numpy as np

        pairs = np.array(edges, dtype=np.int64).reshape(-1, 2)
        if len(pairs) and (pairs.min() < 0 or pairs.max() >= count):
            raise InvalidInputError("an edge names a vertex the drawing does not have")
        return _rounded(positions(count, pairs[:, 0], pairs[:, 1]))

    return {"type": "layout", "positions": await asyncio.to_thread(work)}


def _graph_name(message: dict) -> str:
    graph = str(message.get("graph") or "")
    if not _NAME.fullmatch(graph):
        raise InvalidInputError("no graph to read: this drawing is not of one graph")
    return graph


async def op_expand(session: "Tab", message: dict) -> dict:
    """A vertex's neighbours (out and in, at most :data:`MAX_EXPAND` each) as edges."""
    graph = _graph_name(message)
    vertex = message.get("vertex")

    def work(con, job):
        out = con.execute(f"SELECT neighbor FROM neighbors({graph}, ?, direction => 'out') "
                          f"LIMIT {MAX_EXPAND + 1}", [vertex]).arrow().column(0).to_pylist()
        into = con.execute(f"SELECT neighbor FROM neighbors({graph}, ?, direction => 'in') "
                           f"LIMIT {MAX_EXPAND + 1}", [vertex]).arrow().column(0).to_pylist()
        return out, into

    out, into = await session.run_job(message.get("id"), work)
    edges = [(vertex, n) for n in out[:MAX_EXPAND]] + [(n, vertex) for n in into[:MAX_EXPAND]]
    nodes = {vertex_id(v): json_value(v) for pair in edges for v in pair}
    note = None
    if len(out) > MAX_EXPAND or len(into) > MAX_EXPAND:
        note = f"added the first {MAX_EXPAND} neighbours each way; the vertex has more"
    return {"type": "expand", "vertex": vertex_id(vertex),
            "nodes": [{"id": k, "value": v} for k, v in nodes.items()],
            "edges": [{"source": vertex_id(a), "target": vertex_id(b)} for a, b in edges],
            "note": note}


async def op_vertex(session: "Tab", message: dict) -> dict:
    """A vertex's row of ``g.vertices``."""
    graph = _graph_name(message)
    vertex = message.get("vertex")

    def work(con, job):
        columns = con.execute(f"SELECT * FROM {graph}.vertices LIMIT 0").columns
        key = "id" if "id" in columns else columns[0]
        return con.execute(f'SELECT * FROM {graph}.vertices WHERE "{key}" = ?',
                           [vertex]).arrow()

    table = await session.run_job(message.get("id"), work)
    rows = json_rows(table)
    properties = dict(zip(table.column_names, rows[0])) if rows else None
    return {"type": "vertex", "graph": graph, "vertex": vertex_id(vertex),
            "properties": properties}


async def op_schema(session: "Tab", message: dict) -> dict:
    """The graphs with their tables, columns, types and sizes; the names to complete."""

    def work(con, job):
        graphs = []
        for name, directed, weighted, vertices, edges in con.execute(
                "SELECT name, directed, weighted, vertices, edges FROM graphs()").fetchall():
            described = dict(con.execute(f"DESCRIBE {name}").fetchall())
            tables = ["vertices", "edges"] + [
                key.split(" ", 2)[2] for key in described
                if key.startswith(("vertex label ", "edge label "))]
            listed = []
            for table in tables:
                try:
                    columns = con.execute(f"DESCRIBE {name}.{table}").fetchall()
                except Error:  # a label table DESCRIBE does not know: listed without it
                    continue
                listed.append({"name": table, "columns": [
                    {"name": c, "type": t} for c, t in columns]})
            graphs.append({"name": name, "directed": directed, "weighted": weighted,
                           "vertices": vertices, "edges": edges, "tables": listed,
                           "labels": {k: v for k, v in described.items()
                                      if k.startswith(("vertex label ", "edge label "))},
                           "bytes": described.get("bytes_stored")})
        functions = session.pool.cache.get("functions")
        if functions is None:  # the same for every tab while the server runs (~0.5 s to list)
            functions = session.pool.cache["functions"] = con.execute(
                "SELECT DISTINCT name, kind, signature, description FROM functions() "
                "ORDER BY kind, name").fetchall()
        return graphs, functions

    graphs, functions = await session.run_job(message.get("id"), work)
    graph_functions = [{"name": n, "signature": s, "description": d}
                       for n, k, s, d in functions if k == "table"]
    return {"type": "schema", "graphs": graphs, "table_functions": graph_functions,
            # named functions only: operators (||, ->>, @>) are no words to complete
            "functions": sorted({n for n, k, s, d in functions
                                 if k != "table" and _NAME.fullmatch(n)})}

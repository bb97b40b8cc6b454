"""The Python graph handle: ``con.graph("g").pagerank(damping=0.9)`` returns a ``pa.Table``.

Methods are not written one per algorithm: one method per entry of the algorithm registry is
made from its declared parameters (so ``help(g.bfs)`` shows ``bfs(source, max_depth=None)``)
and bound by the same code as the SQL table function, so the two cannot drift apart.

Examples
--------
>>> import graphdb, networkx as nx
>>> with graphdb.connect() as con:
...     g = con.from_networkx("path", nx.path_graph(4, create_using=nx.DiGraph))
...     g.bfs(0).to_pylist()[-1]
{'vertex': 3, 'depth': 3}
"""

from __future__ import annotations

import difflib
import inspect
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from graphdb.executor.algorithms import REGISTRY

if TYPE_CHECKING:
    from graphdb.executor.algorithms import Algorithm

    from .connection import Connection

__all__ = ["GraphHandle"]

#: Python annotations of the parameter kinds of algorithm specs.
_ANNOTATIONS = {"int": "int", "float": "float", "bool": "bool", "str": "str",
                "vertex": "int | str", "vertices": "list | None"}


class GraphHandle:
    """One stored graph of a connection; every graph algorithm is a method returning a
    ``pyarrow.Table`` (the rows its SQL table function returns)."""

    def __init__(self, connection: "Connection", name: str, where: str | None = None):
        self.connection = connection
        self.name = name
        #: the condition of a subgraph handle (:meth:`subgraph`), else None
        self.where = where

    def __repr__(self) -> str:
        if self.where is not None:
            return f"<graphdb.GraphHandle GRAPH {self.name} WHERE {self.where}>"
        return f"<graphdb.GraphHandle {self.name!r}>"

    def _repr_html_(self) -> str:
        """In a notebook: the graph's size and a drawing of its first edges (see
        :mod:`graphdb.explorer.notebook`)."""
        from .explorer.notebook import MAX_EDGES, graph_html

        if self.where is not None:  # a view: what it keeps is known only to the algorithms
            import html

            return f"<p>{html.escape(repr(self))}</p>"
        count = self.connection.execute(
            "SELECT vertices, edges FROM graphs() WHERE name = ?", [self.name]).fetchone()
        edges = self.connection.execute(
            f"SELECT src, dst FROM {self.name}.edges LIMIT {MAX_EDGES + 1}").arrow()
        return graph_html(self.name, {"vertices": count[0], "edges": count[1]} if count else {},
                          edges, self.directed)

    def subgraph(self, where: str) -> "GraphHandle":
        """A handle on the part of the graph ``where`` keeps (SQL: ``GRAPH g WHERE ...``):
        ``e.<property>`` conditions choose edges, ``v.<property>`` ones vertices (and the edges
        between them). Its algorithms run on a view of the stored graph; nothing is copied.

        >>> import graphdb, pyarrow as pa
        >>> con = graphdb.connect()
        >>> _ = con.ingest("g", pa.table({"src": [1, 2], "dst": [2, 3], "year": [2020, 2021]}))
        >>> con.graph("g").subgraph("e.year = 2020").bfs(1).to_pylist()
        [{'vertex': 1, 'depth': 0}, {'vertex': 2, 'depth': 1}]
        """
        if self.where is not None:
            where = f"({self.where}) AND ({where})"
        return GraphHandle(self.connection, self.name, where)

    def __getattr__(self, attribute: str):
        spec = REGISTRY.get(attribute.lower())
        if spec is not None and not attribute.startswith("_"):  # BFS(), PageRank(): as SQL does
            return getattr(self, spec.name)
        raise AttributeError(f"{type(self).__name__!s} has no attribute {attribute!r} "
                             f"(algorithms: {', '.join(sorted(REGISTRY))})")

    def _run(self, make_plan) -> pa.Table:
        session = self.connection.session
        return session.guarded(lambda: session.run(make_plan()))

    def vertices(self) -> pa.Table:
        """``g.vertices``: the vertex ids (column ``id``) and properties.

        >>> import graphdb, networkx as nx
        >>> g = graphdb.connect().from_networkx("g", nx.DiGraph([(1, 2, {"w": 0.5})]))
        >>> g.vertices().to_pylist()
        [{'id': 1}, {'id': 2}]
        """
        return self.connection.execute(f"SELECT * FROM {self.name}.vertices").arrow()

    def edges(self) -> pa.Table:
        """``g.edges``: ``src``, ``dst`` (user ids), the weight under its own name when
        weighted, properties; an undirected edge once.

        >>> import graphdb, networkx as nx
        >>> g = graphdb.connect().from_networkx("g", nx.DiGraph([(1, 2, {"w": 0.5})]))
        >>> g.edges().to_pylist()
        [{'src': 1, 'dst': 2, 'w': 0.5}]
        """
        return self.connection.execute(f"SELECT * FROM {self.name}.edges").arrow()

    @property
    def directed(self) -> bool:
        """Whether the graph's edges have a direction.

        >>> import graphdb, networkx as nx
        >>> g = graphdb.connect().from_networkx("g", nx.DiGraph([(1, 2, {"w": 0.5})]))
        >>> g.directed
        True
        """
        return self.connection.catalog.get(self.name).directed

    def to_networkx(self):
        """A ``networkx.DiGraph`` (``Graph`` if undirected) with the vertex properties as node
        attributes and the weight and edge properties as edge attributes.

        >>> import graphdb, networkx as nx
        >>> g = graphdb.connect().from_networkx("g", nx.DiGraph([(1, 2, {"w": 0.5})]))
        >>> list(g.to_networkx().edges(data=True))
        [(1, 2, {'w': 0.5})]
        """
        from .interop import to_networkx

        return to_networkx(self)

    def to_scipy(self, *, weighted: bool = True):
        """(``scipy.sparse.csr_array`` adjacency, vertex ids as ``pa.Array``) in internal order.

        >>> import graphdb, networkx as nx
        >>> g = graphdb.connect().from_networkx("g", nx.DiGraph([(1, 2, {"w": 0.5})]))
        >>> matrix, ids = g.to_scipy()
        >>> matrix.toarray().tolist(), ids.to_pylist()
        ([[0.0, 1.0], [0.0, 0.0]], [1, 2])
        """
        from .interop import to_scipy

        return to_scipy(self, weighted=weighted)


def _signature(spec: "Algorithm") -> inspect.Signature:
    parameters = [inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)]
    for p in spec.params:
        parameters.append(inspect.Parameter(
            p.name, inspect.Parameter.POSITIONAL_OR_KEYWORD,
            default=inspect.Parameter.empty if p.required else p.default,
            annotation=_ANNOTATIONS.get(p.kind, "Any")))
    if spec.many is not None:  # a set of sources instead of one: bfs(sources=[1, 2])
        parameters.append(inspect.Parameter("sources", inspect.Parameter.KEYWORD_ONLY,
                                            default=None, annotation="list | None"))
    return inspect.Signature(parameters, return_annotation="pyarrow.Table")


def _docstring(spec: "Algorithm") -> str:
    lines = [spec.doc or spec.name, "", f"SQL: ``SELECT * FROM {spec.signature()}``.", "",
             "Parameters", "----------"]
    for p in spec.params:
        default = "" if p.required else f", default {p.default!r}"
        lines.append(f"{p.name} : {_ANNOTATIONS.get(p.kind, 'Any')}{default}")
        text = p.doc or ("a vertex id of the graph" if p.kind == "vertex" else "")
        if p.choices:
            text = (text + "; " if text else "") + "one of " + ", ".join(p.choices)
        if text:
            lines.append(f"    {text}")
    columns = ", ".join(f"{c.name} ({c.type})" for c in spec.columns)
    call = ", ".join("0" if p.kind == "vertex" else "1" for p in spec.params if p.required)
    if spec.name == "shortest_path":
        call = "0, 3"
    lines += ["", "Returns", "-------", "pyarrow.Table", f"    columns {columns}", "",
              "Examples", "--------", ">>> import graphdb, networkx as nx",
              ">>> path = nx.path_graph(4)",
              ">>> nx.set_edge_attributes(path, 1.0, 'weight')",
              ">>> g = graphdb.connect().from_networkx('g', path)",
              f">>> g.{spec.name}({call}).column_names",
              repr([c.name for c in spec.columns])]
    return "\n".join(lines)


def _method(spec: "Algorithm"):
    signature = _signature(spec)
    public = signature.replace(parameters=list(signature.parameters.values())[1:])

    def method(self: GraphHandle, *args: Any, **kwargs: Any) -> pa.Table:
        from .query.tables import bind_algorithm

        many = spec.many is not None and kwargs.get("sources") is not None
        try:  # (with sources => ..., the one source is not given)
            bound = (signature.bind_partial if many else signature.bind)(self, *args, **kwargs)
        except TypeError as exc:  # a wrong call is a TypeError, as for any Python function
            hint = ""
            unknown = [k for k in kwargs if k not in signature.parameters or k == "self"]
            if unknown:
                close = difflib.get_close_matches(unknown[0], [p.name for p in spec.params], n=1)
                hint = f" (did you mean '{close[0]}'?)" if close else ""
            raise TypeError(f"{spec.name}(): {exc}{hint}; {spec.name}{public}") from None
        named = {k: v for k, v in bound.arguments.items() if k != "self"}
        named = {k: v for k, v in named.items() if k != "sources" or v is not None}
        missing = [p.name for p in spec.params if p.required and p.name not in named
                   and not (many and p.name == spec.many[0])]
        if missing:
            raise TypeError(f"{spec.name}(): missing argument '{missing[0]}'; "
                            f"{spec.name}{public}")
        if self.where is not None or "sources" in named:
            # a subgraph, a set of sources: the SQL form, the arguments as parameters
            graph = self.name if self.where is None else f"GRAPH {self.name} WHERE {self.where}"
            arguments = "".join(f", {k} => ?" for k in named)
            return self.connection.execute(f"SELECT * FROM {spec.name}({graph}{arguments})",
                                           list(named.values())).arrow()
        return self._run(lambda: bind_algorithm(spec.name, self.name, [], named))

    method.__name__ = spec.name
    method.__qualname__ = f"GraphHandle.{spec.name}"
    method.__signature__ = signature
    method.__doc__ = _docstring(spec)
    return method


for _spec in REGISTRY.values():
    setattr(GraphHandle, _spec.name, _method(_spec))

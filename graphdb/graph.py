"""The Python graph handle: ``con.graph("g").pagerank(damping=0.9)`` returns a ``pa.Table``.

Methods are not written one per algorithm: any name in the algorithm registry is callable,
bound by the same code as the SQL table function, so the two cannot drift apart.

Examples
--------
>>> import graphdb, networkx as nx
>>> with graphdb.connect() as con:
...     g = con.from_networkx("path", nx.path_graph(4, create_using=nx.DiGraph))
...     g.bfs(0).to_pylist()[-1]
{'vertex': 3, 'depth': 3}
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

import pyarrow as pa

from graphdb.executor.algorithms import REGISTRY

if TYPE_CHECKING:
    from .connection import Connection

__all__ = ["GraphHandle"]


class GraphHandle:
    """One stored graph of a connection."""

    def __init__(self, connection: "Connection", name: str):
        self.connection = connection
        self.name = name

    def __repr__(self) -> str:
        return f"<graphdb.GraphHandle {self.name!r}>"

    def __dir__(self):
        return sorted(set(super().__dir__()) | set(REGISTRY))

    def __getattr__(self, attribute: str) -> Callable[..., pa.Table]:
        if attribute.startswith("_") or attribute.lower() not in REGISTRY:
            raise AttributeError(f"{type(self).__name__!s} has no attribute {attribute!r} "
                                 f"(algorithms: {', '.join(sorted(REGISTRY))})")
        spec = REGISTRY[attribute.lower()]

        def call(*args: Any, **kwargs: Any) -> pa.Table:
            from .query.tables import bind_algorithm

            return self._run(lambda: bind_algorithm(spec.name, self.name, list(args), kwargs))

        call.__name__ = spec.name
        call.__doc__ = f"{spec.signature()}: {spec.doc}\nReturns columns " + ", ".join(
            c.name for c in spec.columns) + "."
        return call

    def _run(self, make_plan) -> pa.Table:
        runner = self.connection._runner
        return self.connection._guarded(lambda: runner.run(runner.plan(make_plan())))

    def vertices(self) -> pa.Table:
        """``g.vertices``: the vertex ids (column ``id``) and properties."""
        return self.connection.execute(f"SELECT * FROM {self.name}.vertices").arrow()

    def edges(self) -> pa.Table:
        """``g.edges``: ``src``, ``dst`` (user ids), ``weight`` when weighted, properties."""
        return self.connection.execute(f"SELECT * FROM {self.name}.edges").arrow()

    @property
    def directed(self) -> bool:
        return self.connection.catalog.get(self.name).directed

    def to_networkx(self):
        """A ``networkx.DiGraph`` (``Graph`` if undirected) with ``weight`` edge attributes."""
        from .interop import to_networkx

        return to_networkx(self)

    def to_scipy(self, *, weighted: bool = True):
        """(``scipy.sparse.csr_array`` adjacency, vertex ids as ``pa.Array``) in internal order."""
        from .interop import to_scipy

        return to_scipy(self, weighted=weighted)

"""BFS past the device budget: Subway subgraph streaming, or slotted pages from storage (GTS).

Both are the shared streaming operators (:mod:`graphdb.executor.operators`) with BFS's rule:
depth + 1 along an edge (a Subway relaxation; a page's frontier step).
"""

from __future__ import annotations

from ...graph import Graph
from ...operators.page_stream import bfs_pages
from ...operators.subway import run_subway
from ..common import check_source
from ..spec import AlgorithmOutput, OperatorConfig

__all__ = ["pages_bfs", "pages_khop", "subway_bfs", "subway_khop"]


def subway_bfs(graph: Graph, config: OperatorConfig, source: int,
               max_depth: int | None = None) -> AlgorithmOutput:
    """BFS depths of reached vertices (the resident bfs's columns).

    With ``max_depth`` the run is synchronous and stops after that many outer iterations: by
    then every vertex within ``max_depth`` hops has its final depth (Bellman-Ford's argument),
    and every other value is larger, so those are dropped.
    """
    check_source(graph, source, "bfs")
    if max_depth is None:
        return run_subway(graph, config, "bfs", source)
    out = run_subway(graph, config, "bfs", source, asynchronous=False,
                     max_iterations=max_depth)
    keep = out.columns["depth"] <= max_depth
    out.columns = {k: v[keep] for k, v in out.columns.items()}
    out.metrics["reached"] = int(keep.sum())
    return out


def subway_khop(graph: Graph, config: OperatorConfig, source: int, k: int) -> AlgorithmOutput:
    out = subway_bfs(graph, config, source, k)
    out.columns = {"vertex": out.columns["vertex"], "hops": out.columns["depth"]}
    return out


def pages_bfs(graph: Graph, config: OperatorConfig, source: int,
              max_depth: int | None = None) -> AlgorithmOutput:
    """BFS over the slotted pages of the frontier, level by level (the resident bfs's columns)."""
    check_source(graph, source, "bfs")
    return bfs_pages(graph, config, source, max_depth)


def pages_khop(graph: Graph, config: OperatorConfig, source: int, k: int) -> AlgorithmOutput:
    out = pages_bfs(graph, config, source, k)
    out.columns = {"vertex": out.columns["vertex"], "hops": out.columns["depth"]}
    return out

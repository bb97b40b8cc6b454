"""User mistakes get clear InvalidArgument errors, not wrong answers or tracebacks."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from graphdb.executor.algorithms import REGISTRY
from graphdb.executor.errors import InvalidArgument
from graphdb.executor.graph import Graph
from tests.executor.support import run_cpu

EXPECTED_SIGNATURES = {
    "bfs": "bfs(graph, source, max_depth => NULL)",
    "pagerank": "pagerank(graph, damping => 0.85, max_iterations => 20, tolerance => 0.0)",
    "sssp": "sssp(graph, source, weight => (the graph's weights))",
    "wcc": "wcc(graph)",
    "cdlp": "cdlp(graph, max_iterations => 10)",
    "lcc": "lcc(graph, vertices => NULL)",
    "khop": "khop(graph, source, k)",
    "shortest_path": "shortest_path(graph, source, target, weight => (the graph's weights))",
    "sswp": "sswp(graph, source, weight => (the graph's weights))",
    "neighbors": "neighbors(graph, vertex, direction => 'out')",
    "k_shortest_paths": "k_shortest_paths(graph, source, target, k, weight => (the graph's weights))",
}
EXPECTED_COLUMNS = {
    "bfs": [("vertex", True), ("depth", False)],
    "pagerank": [("vertex", True), ("rank", False)],
    "sssp": [("vertex", True), ("distance", False)],
    "wcc": [("vertex", True), ("component", True)],
    "cdlp": [("vertex", True), ("label", True)],
    "lcc": [("vertex", True), ("coefficient", False)],
    "khop": [("vertex", True), ("hops", False)],
    "shortest_path": [("step", False), ("vertex", True), ("distance", False)],
    "sswp": [("vertex", True), ("width", False)],
    "neighbors": [("neighbor", True)],
}


def unweighted() -> Graph:
    return Graph.from_edges([0, 1], [1, 2], 3, name="plain")


def weighted(weights=(1.0, 2.0)) -> Graph:
    return Graph.from_edges([0, 1], [1, 2], 3, weights=np.array(weights), name="roads")


def test_registered_signatures_and_columns_are_the_contract():
    assert {name: REGISTRY[name].signature() for name in EXPECTED_SIGNATURES} == EXPECTED_SIGNATURES
    got = {name: [(c.name, c.vertex) for c in REGISTRY[name].columns] for name in EXPECTED_COLUMNS}
    assert got == EXPECTED_COLUMNS


@pytest.mark.parametrize(
    "name, options",
    [
        ("bfs", {"source": 3}),
        ("bfs", {"source": -1}),
        ("khop", {"source": 7, "k": 1}),
        ("sssp", {"source": 3}),
        ("sswp", {"source": 3}),
        ("shortest_path", {"source": 0, "target": 3}),
        ("shortest_path", {"source": 3, "target": 0}),
        ("neighbors", {"vertex": 3}),
    ],
)
def test_vertex_not_in_graph(name, options):
    with pytest.raises(InvalidArgument, match="not in graph"):
        run_cpu(name, weighted(), **options)


@pytest.mark.parametrize("name", ["sssp", "shortest_path"])
def test_negative_weights_are_refused(name):
    options = {"source": 0} if name == "sssp" else {"source": 0, "target": 2}
    with pytest.raises(InvalidArgument, match="negative"):
        run_cpu(name, weighted((1.0, -2.0)), **options)


def _entry(graph: Graph):
    """The catalog's view of ``graph``: what bind-time checks read (no topology)."""
    return SimpleNamespace(name=graph.name, weighted=graph.weighted, directed=graph.directed)


@pytest.mark.parametrize("name", ["sssp", "shortest_path"])
def test_unweighted_graph_asked_for_weights(name):
    options = {"source": 0} if name == "sssp" else {"source": 0, "target": 2}
    with pytest.raises(InvalidArgument, match="no edge weights"):
        REGISTRY[name].validate(_entry(unweighted()), {**options, "weight": "weight"})


def test_unknown_weight_column_names_the_available_ones():
    with pytest.raises(InvalidArgument, match="available: weight"):
        REGISTRY["sssp"].validate(_entry(weighted()), {"source": 0, "weight": "length"})


def test_sswp_needs_weights():
    with pytest.raises(InvalidArgument, match="no edge weights"):
        run_cpu("sswp", unweighted(), source=0)


def test_weight_null_uses_graph_weights_or_hops():
    assert run_cpu("sssp", weighted(), source=0)["distance"].tolist() == [0.0, 1.0, 3.0]
    assert run_cpu("sssp", weighted(), source=0, weight="WEIGHT")["distance"].tolist() == [0, 1, 3]
    assert run_cpu("sssp", unweighted(), source=0)["distance"].tolist() == [0.0, 1.0, 2.0]


@pytest.mark.parametrize(
    "name, options, message",
    [
        ("bfs", {"source": 0, "max_depth": -1}, ">= 0"),
        ("khop", {"source": 0, "k": 1.5}, "integer"),
        ("pagerank", {"damping": 1.5}, "<= 1"),
        ("pagerank", {"max_iterations": -3}, ">= 0"),
        ("pagerank", {"tolerance": -0.1}, ">= 0"),
        ("cdlp", {"max_iterations": -1}, ">= 0"),
        ("neighbors", {"vertex": 0, "direction": "sideways"}, "out, in, both"),
    ],
)
def test_bad_option_values(name, options, message):
    with pytest.raises(InvalidArgument, match=message):
        run_cpu(name, unweighted(), **options)


def test_required_parameters_are_declared_required():
    assert REGISTRY["khop"].param("k").required
    assert REGISTRY["shortest_path"].param("target").required


@pytest.mark.parametrize("directed", [True, False])
@pytest.mark.parametrize("name", ["wcc", "pagerank", "cdlp", "lcc"])
def test_graph_without_vertices_gives_empty_results(name, directed):
    empty = np.zeros(0, dtype=np.int64)
    columns = run_cpu(name, Graph.from_edges(empty, empty, 0, directed=directed))
    assert all(len(col) == 0 for col in columns.values())

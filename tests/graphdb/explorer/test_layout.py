"""The server's layout of large drawings (graphdb.explorer.layout), against graph distances from
networkx: drawn distances follow them (low stress, as low as networkx's spring layout gets),
components do not overlap, no two vertices share a place."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest

from graphdb.explorer.layout import NEAREST, positions


def _layout(g: nx.Graph, seed: int = 0) -> np.ndarray:
    g = nx.convert_node_labels_to_integers(g)
    edges = np.array(list(g.edges), dtype=np.int64).reshape(-1, 2)
    return positions(g.number_of_nodes(), edges[:, 0], edges[:, 1], seed=seed)


def _stress(g: nx.Graph, xy: np.ndarray) -> float:
    """Normalized stress of ``xy`` against networkx's graph distances, at the best scale
    (0: drawn distances proportional to graph distances)."""
    g = nx.convert_node_labels_to_integers(g)
    pairs = [(a, b, d) for a, lengths in nx.all_pairs_shortest_path_length(g)
             for b, d in lengths.items() if a < b]
    a, b, d = (np.array(column, dtype=float) for column in zip(*pairs))
    drawn = np.hypot(*(xy[a.astype(int)] - xy[b.astype(int)]).T)
    w = 1 / d ** 2
    scale = (w * drawn * d).sum() / (w * drawn * drawn).sum()
    return float((w * (scale * drawn - d) ** 2).sum() / (w * d * d).sum())


@pytest.mark.parametrize("graph, bound", [
    (nx.grid_2d_graph(20, 20), 0.03),
    (nx.cycle_graph(300), 0.05),
    (nx.balanced_tree(3, 5), 0.2),
    (nx.connected_watts_strogatz_graph(300, 6, 0.05, seed=1), 0.2),
])
def test_drawn_distances_follow_graph_distances(graph, bound):
    """As well as networkx's force-directed layout (Fruchterman-Reingold) or better."""
    xy = _layout(graph)
    ours = _stress(graph, xy)
    spring = nx.spring_layout(nx.convert_node_labels_to_integers(graph), seed=1)
    assert ours < bound
    assert ours <= 1.1 * _stress(graph, np.array([spring[v] for v in range(len(spring))]))
    rng = np.random.default_rng(0)  # what no layout at all scores, for scale
    assert _stress(graph, rng.random(xy.shape)) > 2 * bound


def test_components_are_drawn_apart_and_vertices_never_share_a_place():
    parts = [nx.star_graph(40), nx.path_graph(3), nx.complete_graph(5), nx.empty_graph(30),
             nx.grid_2d_graph(12, 12)] + [nx.path_graph(2)] * 50
    g = nx.convert_node_labels_to_integers(nx.disjoint_union_all(parts))
    xy = _layout(g)
    assert xy.shape == (g.number_of_nodes(), 2) and np.isfinite(xy).all()
    boxes = []
    for component in nx.connected_components(g):
        part = xy[sorted(component)]
        boxes.append((part.min(axis=0), part.max(axis=0)))
    for i, (low, high) in enumerate(boxes):
        for other_low, other_high in boxes[i + 1:]:
            assert (high < other_low).any() or (other_high < low).any()
    distances = np.hypot(*(xy[:, None, :] - xy[None, :, :]).transpose(2, 0, 1))
    np.fill_diagonal(distances, np.inf)
    assert distances.min() > NEAREST / 4  # the star's leaves look alike to every pivot
    # every edge of the grid about as long as every other
    grid = sorted(nx.node_connected_component(g, len(g) - 1))
    lengths = np.array([np.hypot(*(xy[a] - xy[b])) for a, b in g.subgraph(grid).edges])
    assert lengths.std() < 0.2 * lengths.mean()


def test_the_same_drawing_twice_and_the_smallest_ones():
    g = nx.connected_watts_strogatz_graph(400, 4, 0.1, seed=3)
    assert np.array_equal(_layout(g), _layout(g))
    assert positions(0, [], []).shape == (0, 2)
    assert positions(1, [], []).tolist() == [[0.0, 0.0]]
    two = positions(2, [0, 1, 1], [1, 0, 1])  # both directions and a loop: one edge
    assert np.hypot(*(two[0] - two[1])) > 0

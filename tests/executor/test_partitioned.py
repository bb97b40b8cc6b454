"""Partitioned operators on ranks simulated in this process (the ``local`` communicator).

Every partitioned operator on 1-4 ranks equals the single-device CPU operator exactly (PageRank
to 1e-9) on R-MAT, grid and skewed graphs, in memory and stored (rows read block-wise through
the buffer manager); the exchange byte counts equal the formulas; segments are balanced. The
same cases run through MPI in tests/cluster/.
"""

from __future__ import annotations

import numpy as np
import pytest

from graphdb.executor.algorithms.pagerank.partitioned import balanced_segments
from graphdb.executor.comm import (
    LocalComm,
    allgather_bytes,
    allgatherv_bytes,
    allreduce_bytes,
    alltoallv_bytes,
    broadcast_bytes,
)
from graphdb.executor.partition import ALIGN, balanced_bounds, segments
from graphdb.generators import rmat
from tests.executor.partitioned_cases import (
    CASES,
    agrees,
    check_collectives,
    config,
    graphs,
    partitioned,
    single,
)

GRAPHS = graphs()
REFERENCE = {(g, a): single(a, graph) for g, graph in GRAPHS.items() for a in CASES}


@pytest.mark.parametrize("ranks", [1, 2, 3, 4])
@pytest.mark.parametrize("graph", sorted(GRAPHS))
@pytest.mark.parametrize("algorithm", sorted(CASES))
def test_partitioned_equals_one_device(algorithm, graph, ranks):
    got, metrics = partitioned(algorithm, GRAPHS[graph], config("local", ranks))
    assert agrees(algorithm, got, REFERENCE[graph, algorithm])
    assert metrics["ranks"] == ranks
    if ranks == 1:
        assert metrics["bytes_exchanged"] == 0  # one rank exchanges nothing


@pytest.mark.parametrize("ranks", [2, 3])
@pytest.mark.parametrize("graph", sorted(GRAPHS))
@pytest.mark.parametrize("algorithm", ["pagerank", "cdlp"])
def test_split_state_equals_one_device(algorithm, graph, ranks):
    got, metrics = partitioned(algorithm, GRAPHS[graph], config("local", ranks, "split"))
    assert agrees(algorithm, got, REFERENCE[graph, algorithm])
    assert metrics["strategy"] == "split"


@pytest.mark.parametrize("ranks", [1, 3])
def test_streamed_pagerank_reads_its_rows_in_chunks(ranks):
    graph = GRAPHS["rmat"]
    got, metrics = partitioned("pagerank", graph, config("local", ranks, streamed=True))
    assert metrics["streamed"]
    assert agrees("pagerank", got, REFERENCE["rmat", "pagerank"])


def test_stored_graph_ranks_read_only_their_rows(tmp_path):
    """Rows of a stored graph come block-wise through the buffer manager: no whole array."""
    from tests.streaming.streaming_graphs import stored_graph

    stored, memory, env, pool = stored_graph(tmp_path, n=1500, m=9000)
    try:
        for algorithm in ("bfs", "pagerank", "wcc", "cdlp"):
            want = single(algorithm, memory)
            got, _ = partitioned(algorithm, stored, config("local", 3))
            assert agrees(algorithm, got, want), algorithm
        assert stored.residency.peek(stored.key, "cpu", "array:out_targets") is None
        assert stored.residency.peek(stored.key, "cpu", "array:in_targets") is None
    finally:
        pool.close()
        env.close()


# -- exchanged bytes against the formulas -------------------------------------------------------


def _mean(values) -> int:
    return int(sum(values)) // len(values)


@pytest.mark.parametrize("ranks", [2, 3, 4])
def test_pagerank_exchange_matches_the_formula(ranks):
    graph = GRAPHS["rmat"]
    iterations = 20
    _, metrics = partitioned("pagerank", graph, config("local", ranks))
    largest = int(balanced_segments(graph.offsets("in"), ranks).sizes().max())
    widest = largest + (largest & 1)
    # every iteration but the last: one allgather of each rank's slot, its contributions
    # (padded to the largest segment) and its two totals (float64 on the CPU); at the end the
    # ranks gathered on one rank (padded to the largest segment)
    per_iteration = allgather_bytes((widest + 2) * 8, ranks)
    total = (iterations - 1) * per_iteration + allgather_bytes(largest * 8, ranks)
    assert metrics["bytes_exchanged"] == total
    assert metrics["bytes_per_step"] == total // iterations
    assert metrics["exchange"]["allgather"]["calls"] == iterations
    assert per_iteration <= 8 * (ranks - 1) * (largest + 3)  # 8 bytes a vertex: float64 here


@pytest.mark.parametrize("ranks", [2, 4])
def test_split_pagerank_sends_only_what_the_rows_read(ranks):
    graph = GRAPHS["rmat"]
    _, metrics = partitioned("pagerank", graph, config("local", ranks, "split"))
    segs = segments(graph, ranks, ("in",))
    inn = graph.in_csr
    ghosts = []
    for r in range(ranks):
        lo, hi = segs.range(r)
        read = np.unique(inn.targets[inn.offsets[lo]:inn.offsets[hi]])
        ghosts.append(int(np.count_nonzero((read < lo) | (read >= hi))))
    # per iteration a rank receives its ghosts' contributions (float64) and the allreduce of
    # 2 float64; once: the first dangling total, and at setup the ghost ids (the stored id
    # type) reach their owners
    id_bytes = inn.targets.dtype.itemsize
    per_rank = [20 * (8 * g + allreduce_bytes(16, ranks)) + allreduce_bytes(8, ranks)
                + id_bytes * g for g in ghosts]
    assert metrics["bytes_exchanged"] == _mean(per_rank)
    assert metrics["bytes_exchanged"] < partitioned("pagerank", graph, config(
        "local", ranks))[1]["bytes_exchanged"]


def test_wcc_exchange_is_a_label_allreduce_per_round():
    graph = GRAPHS["grid"]
    _, metrics = partitioned("wcc", graph, config("local", 3))
    n = graph.num_vertices
    rounds = metrics["hook_rounds"]
    label = allreduce_bytes(4 * n, 3)  # int32 labels
    per_round_count = allreduce_bytes(8, 3)  # the count of links that disagree
    assert metrics["bytes_exchanged"] == (1 + rounds) * label + (1 + rounds) * per_round_count


def test_local_collectives_and_their_byte_counts():
    assert check_collectives(LocalComm(3)) == []
    assert check_collectives(LocalComm(1)) == []


def test_byte_formulas():
    assert allreduce_bytes(800, 1) == 0
    assert allreduce_bytes(800, 2) == 800  # 2 (P - 1) / P n
    assert allreduce_bytes(800, 4) == 1200
    assert allgatherv_bytes([8, 16, 24], 1) == 32
    assert alltoallv_bytes([5, 6, 7], 2) == 11
    assert broadcast_bytes(9, 0, 0) == 0 and broadcast_bytes(9, 1, 0) == 9


# -- segments -----------------------------------------------------------------------------------


def test_bounds_are_aligned_and_cover_every_vertex():
    prefix = np.concatenate([[0], np.cumsum(np.random.default_rng(1).integers(0, 50, 1003))])
    for parts in (1, 2, 3, 5, 8):
        bounds = balanced_bounds(prefix, parts)
        assert bounds[0] == 0 and bounds[-1] == 1003
        assert np.all(np.diff(bounds) >= 0)
        assert all(b % ALIGN == 0 for b in bounds[1:-1])


@pytest.mark.parametrize("parts", [2, 3, 4, 8])
def test_rmat_segments_balance_edges_within_ten_percent(parts):
    from graphdb.executor.graph import Graph

    src, dst = rmat(15, 16, seed=2)
    graph = Graph.from_edges(src, dst, 1 << 15)
    for forms in (("out",), ("in",), ("out", "in")):
        segs = segments(graph, parts, forms)
        assert segs.imbalance() <= 1.1, (forms, segs.edges)
        degree = sum(np.diff(graph.csr(d).offsets) for d in forms)
        assert segs.edges.tolist() == [int(degree[a:b].sum()) for a, b in
                                       zip(segs.bounds[:-1], segs.bounds[1:])]

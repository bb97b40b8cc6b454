"""Every GPU operator against its CPU twin (or scipy) on random graphs of many shapes."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.sparse import csgraph

from graphdb.executor.algorithms.spec import OperatorConfig
from graphdb.executor.graph import CSR, Graph
from graphdb.generators import grid, rmat
from tests.gpu._gpu_graphs import random_edges

pytestmark = pytest.mark.gpu

GPU = OperatorConfig(device="gpu")
CPU = OperatorConfig()


def _host(out) -> dict:
    """An operator's rows as numpy (GPU operators keep per-vertex values on the device: their
    rows are taken there by the xp reference of the result path)."""
    return {k: v.get() if hasattr(v, "get") else np.asarray(v) for k, v in out.columns.items()}


def _graph(src, dst, n, directed, weights=None):
    return Graph.from_edges(src, dst, n, directed=directed, weights=weights)


def _with_int64_ids(g: Graph) -> Graph:
    """The same graph with int64 targets: exercises the kernels' long long instantiations."""
    out = g.csr("out", weights=True)
    wide = CSR(out.offsets, out.targets.astype(np.int64), out.weights)
    return Graph.from_csr("wide", wide, directed=g.directed)


def _graphs(sizes, seed):
    n, m = sizes
    rng = np.random.default_rng(seed)
    src, dst = random_edges(rng, n, m)
    w = rng.integers(1, 100, size=m).astype(np.float64)
    for directed in (True, False):
        yield _graph(src, dst, n, directed, w)


def _sources(g: Graph, rng, k=3):
    deg = g.out_csr.degrees()
    hub = int(np.argmax(deg)) if g.num_vertices else 0
    return sorted({0, hub, *rng.integers(0, g.num_vertices, size=k).tolist()})


# ---------------------------------------------------------------- BFS


def _bfs_reference(g, s, max_depth=None):
    from graphdb.executor.algorithms.bfs.cpu import bfs

    out = bfs(g, CPU, s, max_depth)
    v, d = _by_vertex(out)
    # The CPU twin reports levels (the deepest depth); the GPU operator
    # counts frontier expansions, one more when the last frontier is expanded and finds nothing.
    return v, d, int(d.max()) if d.size else 0


def _by_vertex(out):
    """(vertex, depth) sorted by vertex: the rows of a table function have no order of their own."""
    cols = _host(out)
    order = np.argsort(cols["vertex"], kind="stable")
    return cols["vertex"][order], cols["depth"][order]


@pytest.mark.parametrize("seed", [0, 1])
def test_bfs_matches_cpu_on_random_graphs(sizes, seed):
    from graphdb.executor.algorithms.bfs.gpu import bfs

    rng = np.random.default_rng(100 + seed)
    for g in _graphs(sizes, seed):
        for s in _sources(g, rng):
            v, d, it = _bfs_reference(g, s)
            got = bfs(g, GPU, s)
            gv, gd = _by_vertex(got)
            np.testing.assert_array_equal(gv, v)
            np.testing.assert_array_equal(gd, d)
            assert got.metrics["iterations"] in (it, it + 1)
            assert got.metrics["reached"] == v.size


@pytest.mark.parametrize("K", [1, 2, 8, 32])
@pytest.mark.parametrize("direction_optimizing", [False, True])
def test_bfs_degree_cut_and_directions_on_rmat(K, direction_optimizing):
    from graphdb.executor.algorithms.bfs.cpu import bfs_depths
    from graphdb.executor.algorithms.bfs.gpu import bfs_depths_gpu

    src, dst = rmat(12, 16, seed=3)
    for directed in (True, False):
        g = _graph(src, dst, 1 << 12, directed)
        hub = int(np.argmax(g.out_csr.degrees()))
        ref, _ = bfs_depths(g, hub)
        depth, stats = bfs_depths_gpu(g, hub, K=K, direction_optimizing=direction_optimizing,
                                      small_frontier=0)
        np.testing.assert_array_equal(depth.get(), ref)
        assert stats["reached"] == int((ref >= 0).sum()) and stats["levels"] == ref.max() + 1
        if direction_optimizing:
            assert stats["bottom_up_levels"] > 0  # the dense levels really went bottom-up


def test_bfs_grid_batches_levels_and_max_depth():
    from graphdb.executor.algorithms.bfs.gpu import bfs, bfs_depths_gpu

    src, dst = grid(120, 100)
    g = _graph(src, dst, 12000, False)
    v, d, it = _bfs_reference(g, 0)
    got = bfs(g, GPU, 0)
    np.testing.assert_array_equal(_by_vertex(got)[1], d)
    assert it == 218 and got.metrics["iterations"] == 219  # 218 levels, then an empty one
    _, stats = bfs_depths_gpu(g, 0)
    assert stats["host_syncs"] < it / 2  # most levels ran without a host round trip each
    for max_depth in (0, 1, 5, 150, 500):
        v, d, it = _bfs_reference(g, 7, max_depth)
        got = bfs(g, GPU, 7, max_depth=max_depth)
        gv, gd = _by_vertex(got)
        np.testing.assert_array_equal(gv, v)
        np.testing.assert_array_equal(gd, d)
        assert got.metrics["iterations"] in (it, it + 1)


# ---------------------------------------------------------------- PageRank


def _pr_reference(g, **kw):
    from graphdb.executor.algorithms.pagerank.cpu import pagerank_ranks

    return pagerank_ranks(g, **kw)


def _layout(n, m, block_size=None, reorder=False, tiles=None):
    from graphdb.executor.algorithms.pagerank.gpu import Layout, default_layout

    if block_size is None and not reorder and tiles is None:
        return None  # the default for this device
    default = default_layout(n, m, 50 << 20)
    return Layout(block_size or default.block_vertices, reorder, tiles)


@pytest.mark.parametrize("block_size", [None, 64, 1024])
@pytest.mark.parametrize("reorder", [False, True])
def test_pagerank_matches_cpu(sizes, block_size, reorder):
    from graphdb.executor.algorithms.pagerank.gpu import pagerank_gpu

    for g in _graphs(sizes, 7):
        if g.num_vertices == 0:
            continue
        ref, it = _pr_reference(g, damping=0.85, max_iterations=15)
        layout = _layout(g.num_vertices, g.num_edges, block_size, reorder)
        got, git, _ = pagerank_gpu(g, 0.85, 15, layout=layout)
        assert git == it
        np.testing.assert_allclose(got.get(), ref, rtol=1e-4, atol=1e-9)


@pytest.mark.parametrize("block_size", [None, 1024])
@pytest.mark.parametrize("reorder", [False, True])
def test_pagerank_heavy_rows_and_blocks(block_size, reorder):
    """A hub with far more in- and out-edges than HEAVY and CHUNK, cut over many blocks."""
    from graphdb.executor.algorithms.pagerank.gpu import CHUNK, pagerank_gpu

    rng = np.random.default_rng(5)
    n = 20000
    spokes = rng.integers(0, n, size=3 * CHUNK)
    src = np.concatenate([spokes, np.zeros(3 * CHUNK, dtype=np.int64), rng.integers(0, n, 30000)])
    dst = np.concatenate([np.zeros(3 * CHUNK, dtype=np.int64), spokes, rng.integers(0, n, 30000)])
    g = _graph(src, dst, n, True)
    ref, _ = _pr_reference(g, max_iterations=10)
    got, _, stats = pagerank_gpu(g, max_iterations=10,
                                 layout=_layout(n, g.num_edges, block_size, reorder))
    np.testing.assert_allclose(got.get(), ref, rtol=1e-4)
    if block_size:
        assert stats["blocks"] == -(-n // block_size)


@pytest.mark.parametrize("directed", [True, False])
def test_unblocked_partition_from_the_host_equals_the_device_one(directed):
    """The partition a graph in one block gets from its host CSR (no CuPy array operations)
    is the device partition with blocking skipped, field by field (a hub included)."""
    from graphdb.executor.algorithms.pagerank.gpu import CHUNK, partition, unblocked_partition
    from graphdb.executor.gpu import runtime as rt

    rng = np.random.default_rng(9)
    n = 5000
    spokes = rng.integers(0, n, size=2 * CHUNK + 5)
    src = np.concatenate([spokes, np.full(len(spokes), 3), rng.integers(0, n, 20000)])
    dst = np.concatenate([np.full(len(spokes), 3), spokes, rng.integers(0, n, 20000)])
    g = _graph(src, dst, n, directed)
    out = rt.device_csr(g, "out")
    csr = rt.device_csr(g, "in")
    host = unblocked_partition(g, csr)
    device = partition(csr, out.degrees(), n, reorder=False)
    for field in ("blocks", "group", "rows_total", "dangling", "order", "tiles"):
        assert getattr(host, field) == getattr(device, field), field
    for field in ("rowptr", "id_map", "cols", "heavy_row", "heavy_start"):
        for a, b in zip(getattr(host, field), getattr(device, field), strict=True):
            np.testing.assert_array_equal(a.get(), b.get(), err_msg=field)
    for field in ("range_ptr", "id_map_flat", "out_degree"):
        np.testing.assert_array_equal(getattr(host, field).get(), getattr(device, field).get(),
                                      err_msg=field)
    assert host.heavy_row[0].size > 0


def test_pagerank_without_hub_20000():
    from graphdb.executor.algorithms.pagerank.gpu import pagerank_gpu

    rng = np.random.default_rng(6)
    n = 20000
    g = _graph(rng.integers(0, n, 60000), rng.integers(0, n, 60000), n, True)
    ref, _ = _pr_reference(g, max_iterations=10)
    got, _, _ = pagerank_gpu(g, max_iterations=10)
    np.testing.assert_allclose(got.get(), ref, rtol=1e-4)


@pytest.mark.parametrize("reorder,block_size", [(True, 256), (False, None)])
def test_pagerank_tolerance(reorder, block_size):
    from graphdb.executor.algorithms.pagerank.gpu import pagerank_gpu

    src, dst = rmat(10, 8, seed=2)
    g = _graph(src, dst, 1 << 10, True)
    for tol in (1e-2, 1e-4, 1e-7):
        ref, it = _pr_reference(g, max_iterations=100, tolerance=tol)
        got, git, _ = pagerank_gpu(g, max_iterations=100, tolerance=tol,
                                   layout=_layout(1 << 10, g.num_edges, block_size, reorder))
        assert abs(git - it) <= 1  # float32 contributions may move the crossing by one
        np.testing.assert_allclose(got.get(), ref, rtol=1e-3, atol=tol)


def test_block_vertices_from_l2():
    from graphdb.executor.algorithms.pagerank.gpu import block_vertices

    assert block_vertices(50 * 2**20) == 1 << 22


# ---------------------------------------------------------------- SSSP


@pytest.mark.parametrize("K", [2, 16])
@pytest.mark.parametrize("delta", [None, 3.0, 1e9])
def test_sssp_matches_dijkstra(sizes, K, delta):
    from graphdb.executor.algorithms.sssp.gpu import sssp_distances_gpu

    rng = np.random.default_rng(11)
    for g in _graphs(sizes, 3):
        mat = g.csr("out", weights=True).to_scipy(weighted=True)
        for s in _sources(g, rng, k=2):
            ref = csgraph.dijkstra(mat, directed=True, indices=s)
            got, _ = sssp_distances_gpu(g, s, K=K, delta=delta)
            np.testing.assert_allclose(got.get(), ref, rtol=1e-12)


def test_sssp_columns_and_fractional_weights():
    from graphdb.executor.algorithms.sssp.gpu import sssp

    rng = np.random.default_rng(4)
    src, dst = rmat(11, 8, seed=9)
    w = rng.random(src.size)  # includes weights near 0
    g = _graph(src, dst, 1 << 11, True, w)
    ref = csgraph.dijkstra(g.csr("out", weights=True).to_scipy(weighted=True), indices=5)
    got = _host(sssp(g, GPU, 5))
    reached = np.flatnonzero(np.isfinite(ref))
    np.testing.assert_array_equal(got["vertex"], reached)
    np.testing.assert_allclose(got["distance"], ref[reached], rtol=1e-12)


def test_sssp_grid_many_buckets():
    from graphdb.executor.algorithms.sssp.gpu import sssp_distances_gpu

    src, dst = grid(64, 64)
    w = np.random.default_rng(1).integers(1, 101, size=src.size).astype(np.float64)
    g = _graph(src, dst, 64 * 64, False, w)
    ref = csgraph.dijkstra(g.csr("out", weights=True).to_scipy(weighted=True), indices=0)
    got, stats = sssp_distances_gpu(g, 0)
    np.testing.assert_allclose(got.get(), ref, rtol=1e-12)
    assert stats["buckets"] > 3


# ---------------------------------------------------------------- WCC


def _wcc_reference(g: Graph) -> np.ndarray:
    n = g.num_vertices
    _, labels = csgraph.connected_components(g.out_csr.to_scipy(), directed=True,
                                             connection="weak")
    smallest = np.full(labels.max() + 1 if n else 0, n, dtype=np.int64)
    np.minimum.at(smallest, labels, np.arange(n))
    return smallest[labels]


def test_wcc_matches_scipy(sizes):
    from graphdb.executor.algorithms.wcc.gpu import wcc

    for seed in (0, 1):
        for g in _graphs(sizes, seed):
            got = _host(wcc(g, GPU))
            np.testing.assert_array_equal(got["component"], _wcc_reference(g))


def test_wcc_rmat_giant_component_and_sparse():
    from graphdb.executor.algorithms.wcc.gpu import wcc

    for scale, ef in ((12, 16), (13, 1)):
        src, dst = rmat(scale, ef, seed=scale)
        for directed in (True, False):
            g = _graph(src, dst, 1 << scale, directed)
            np.testing.assert_array_equal(_host(wcc(g, GPU))["component"], _wcc_reference(g))


# ---------------------------------------------------------------- CDLP


def _cdlp_reference(g: Graph, iterations: int) -> np.ndarray:
    n = g.num_vertices
    out = g.out_csr
    nbrs = [list(out.targets[out.offsets[v]:out.offsets[v + 1]]) for v in range(n)]
    if g.directed:
        for u in range(n):
            for w in out.targets[out.offsets[u]:out.offsets[u + 1]]:
                nbrs[w].append(u)
    labels = np.arange(n)
    for _ in range(iterations):
        new = labels.copy()
        for v in range(n):
            if nbrs[v]:
                vals, counts = np.unique(labels[nbrs[v]], return_counts=True)
                new[v] = vals[np.argmax(counts)]  # unique sorts: ties go to the smallest
        labels = new
    return labels


def test_cdlp_matches_reference():
    from graphdb.executor.algorithms.cdlp.gpu import cdlp

    for g in _graphs((300, 900), 2):
        for iterations in (0, 1, 4):
            got = _host(cdlp(g, GPU, iterations))
            np.testing.assert_array_equal(got["label"], _cdlp_reference(g, iterations))


# ---------------------------------------------------------------- LCC


def _lcc_reference(g: Graph) -> np.ndarray:
    n = g.num_vertices
    out = g.out_csr
    src, dst = out.sources().astype(np.int64), out.targets.astype(np.int64)
    edges = {(int(a), int(b)) for a, b in zip(src, dst, strict=True) if a != b}
    nbrs = [set() for _ in range(n)]
    for a, b in edges:
        nbrs[a].add(b)
        nbrs[b].add(a)
    coeff = np.zeros(n)
    for v in range(n):
        d = len(nbrs[v])
        if d >= 2:
            coeff[v] = sum((a, b) in edges for a in nbrs[v] for b in nbrs[v]) / (d * (d - 1))
    return coeff


def test_lcc_matches_reference():
    from graphdb.executor.algorithms.lcc.gpu import lcc

    for sizes in ((1, 0), (7, 12), (60, 200), (400, 3000)):
        for g in _graphs(sizes, 4):
            got = _host(lcc(g, GPU))["coefficient"]
            np.testing.assert_allclose(got, _lcc_reference(g), rtol=1e-12)


# ---------------------------------------------------------------- int64 ids, dispatcher, OOM


def test_int64_vertex_ids():
    from graphdb.executor.algorithms.bfs.cpu import bfs_depths
    from graphdb.executor.algorithms.bfs.gpu import bfs_depths_gpu
    from graphdb.executor.algorithms.pagerank.gpu import pagerank_gpu
    from graphdb.executor.algorithms.sssp.gpu import sssp_distances_gpu
    from graphdb.executor.algorithms.wcc.gpu import wcc

    rng = np.random.default_rng(8)
    src, dst = random_edges(rng, 800, 3000)
    w = rng.integers(1, 100, size=src.size).astype(np.float64)
    g = _graph(src, dst, 800, True, w)
    wide = _with_int64_ids(g)
    assert wide.out_csr.targets.dtype == np.int64
    np.testing.assert_array_equal(bfs_depths_gpu(wide, 3)[0].get(), bfs_depths(g, 3)[0])
    ref = csgraph.dijkstra(g.csr("out", weights=True).to_scipy(weighted=True), indices=3)
    np.testing.assert_allclose(sssp_distances_gpu(wide, 3)[0].get(), ref)
    np.testing.assert_allclose(pagerank_gpu(wide, layout=_layout(800, 3000, 64))[0].get(),
                               _pr_reference(g)[0], rtol=1e-4)
    np.testing.assert_array_equal(_host(wcc(wide, GPU))["component"], _wcc_reference(g))


def test_dispatcher_uses_gpu_implementations():
    from graphdb.executor.algorithms import run

    src, dst = rmat(9, 8, seed=1)
    g = _graph(src, dst, 1 << 9, True)
    out = run("bfs", g, {"source": 0, "max_depth": None}, GPU)
    assert "host_syncs" in out.metrics  # the GPU implementation's own metric
    out = run("pagerank", g, {"damping": 0.85, "max_iterations": 5, "tolerance": 0.0}, GPU)
    assert "blocks" in out.metrics
    np.testing.assert_allclose(_host(out)["rank"], _pr_reference(g, max_iterations=5)[0],
                               rtol=1e-4)


def test_out_of_memory_becomes_device_out_of_memory():
    import cupy

    from graphdb.executor.algorithms.bfs.gpu import bfs
    from graphdb.executor.errors import DeviceOutOfMemory
    from graphdb.executor.gpu import runtime as rt

    src, dst = rmat(14, 16, seed=1)
    g = _graph(src, dst, 1 << 14, True)
    pool = cupy.get_default_memory_pool()
    pool.free_all_blocks()
    try:
        rt.apply_memory_limit(pool.used_bytes() + 4096)
        with pytest.raises(DeviceOutOfMemory):
            bfs(g, GPU, 0)
    finally:
        rt.apply_memory_limit(None)
    assert bfs(g, GPU, 0).metrics["reached"] > 0  # and the device is usable afterwards

"""Changed graph versions on the GPU, read from the resident base and the uploaded delta
(executor/overlay_gpu.py, overlay.cu), against the CPU's twin: every device operation on random
inputs, the device state carried over version after version equal to the host's, the merged
arrays merged on the device equal to the host's, and BFS, PageRank and WCC on the GPU equal to a
fresh ingest's on the CPU (PageRank to 1e-4: the GPU sums float32 contributions).

Marked ``gpu``: skipped without CuPy and a CUDA device.
"""

from __future__ import annotations

import numpy as np
import pytest

from graphdb.executor import overlay
from graphdb.executor.overlay_gpu import device_ops

from ..executor.overlay_cases import (
    Model,
    answers,
    fresh_graph,
    graph_of,
    loaded,
    match_reference,
    random_in_csr,
    same_answers,
    versions,
    write_step,
)

pytestmark = pytest.mark.gpu


def _host(x):
    return None if x is None else (x.get() if hasattr(x, "get") else x)


def test_device_operations_match_the_hosts():
    import cupy as cp

    ops = device_ops()
    rng = np.random.default_rng(1)
    bits_h = np.zeros(40, dtype=np.uint64)
    bits_d = cp.zeros(40, dtype=np.uint64)
    positions = rng.choice(64 * 40, 300, replace=False)
    assert overlay.HostOps.set_bits(bits_h, positions) == 0
    assert ops.set_bits(bits_d, positions) == 0
    assert ops.set_bits(bits_d, positions[:7]) == 7
    np.testing.assert_array_equal(bits_d.get(), bits_h)
    values_h, values_d = np.zeros(50, np.int64), cp.zeros(50, np.int64)
    index = rng.integers(0, 50, 500)
    overlay.HostOps.add_at(values_h, index, 3)
    ops.add_at(values_d, index, 3)
    overlay.HostOps.add_at(values_h, index[:100], -1)
    ops.add_at(values_d, index[:100], -1)
    np.testing.assert_array_equal(values_d.get(), values_h)
    where = rng.permutation(64 * 40)
    np.testing.assert_array_equal(
        ops.map_bits(None, cp.asarray(where), positions, 64 * 40).get(),
        overlay.HostOps.map_bits(None, where, positions, 64 * 40))
    offsets = np.array([0, 3, 3, 4, 6])
    base_off, base_vals = np.array([0, 3, 3, 5]), np.arange(10, 15, dtype=np.int32)
    tomb = np.array([(1 << 1) | (1 << 4)], dtype=np.uint64)
    doff, dvals = np.array([0, 1, 1, 1, 3]), np.array([20, 21, 22], dtype=np.int32)
    for values, delta in ((base_vals, dvals), (base_vals.astype(np.float64),
                                                dvals.astype(np.float64))):
        want = overlay.HostOps.merge(offsets, 3, base_off, values, tomb, doff, delta)
        got = ops.merge(cp.asarray(offsets), 3, cp.asarray(base_off), cp.asarray(values),
                        cp.asarray(tomb), cp.asarray(doff), cp.asarray(delta))
        np.testing.assert_array_equal(got.get(), want)
        assert ops.merge(cp.asarray(offsets), 3, cp.asarray(base_off), cp.asarray(values),
                         None, cp.asarray(doff), cp.asarray(delta)) is None  # rows too long


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("weighted", [True, False])
@pytest.mark.parametrize("ids", [np.int32, np.int64])
def test_the_devices_in_csr_match_takes_the_hosts_entries(seed, weighted, ids):
    """graphdb_overlay_match_in (a warp per in-row, equal entries ranked across chunks of 32)
    against the CPU's compiled match and a Python reference: rows of thousands of entries with
    many equal (source, weight) ones, some deleted before."""
    import cupy as cp

    rng = np.random.default_rng(seed)
    in_off, src, weights, u, v, w, skip = random_in_csr(rng, 40, 20000, weighted)
    src = src.astype(ids)
    want = overlay.HostOps.match_in(in_off, src, weights, u, v, w, skip)
    assert want.tolist() == match_reference(in_off, src, weights, u, v, w, skip)
    got = device_ops().match_in(cp.asarray(in_off), cp.asarray(src),
                                None if weights is None else cp.asarray(weights),
                                cp.asarray(u), cp.asarray(v),
                                None if w is None else cp.asarray(w), cp.asarray(skip))
    assert sorted(got.get().tolist()) == want.tolist()
    missing = device_ops().match_in(cp.asarray(in_off), cp.asarray(src),
                                    None if weights is None else cp.asarray(weights),
                                    cp.asarray([10**6]), cp.asarray(v[:1]),
                                    None if w is None else cp.asarray(w[:1]), None)
    assert missing is None


@pytest.mark.parametrize("seed", range(3))
def test_the_devices_match_by_source_alone_is_the_hosts(seed):
    """graphdb_overlay_match_in without weights, with its check of a live parallel entry
    left: the host's answer ((positions, True), or (None, False) where only the weights would
    decide), on rows of thousands of entries."""
    import cupy as cp

    rng = np.random.default_rng(seed)
    in_off, src, weights, _, _, _, skip = random_in_csr(rng, 40, 20000, True)
    rows = np.repeat(np.arange(len(in_off) - 1), np.diff(in_off))
    live = np.array([not (int(skip[p >> 6]) >> (p & 63)) & 1 for p in range(len(src))])
    groups = rng.choice(np.flatnonzero(live), 30)
    chosen = np.isin(rows * 10**6 + src, rows[groups] * 10**6 + src[groups]) & live
    u, v = src[chosen].astype(np.int64), rows[chosen]
    for keep in (slice(None), slice(1, None)):  # every entry of the groups; one left live
        want = overlay.HostOps.match_in_sources(in_off, src, u[keep], v[keep], skip)
        got = device_ops().match_in_sources(cp.asarray(in_off), cp.asarray(src),
                                            cp.asarray(u[keep]), cp.asarray(v[keep]),
                                            cp.asarray(skip))
        assert got[1] == want[1] and (got[0] is None) == (want[0] is None)
        if want[0] is not None:
            assert sorted(got[0].get().tolist()) == want[0].tolist()
    assert want == (None, False)


def test_a_delete_by_weight_among_parallel_edges_on_the_device():
    """Deletes that take all of a pair's parallel edges (matched by source alone, no weight
    uploaded) and then some of them by weight (matched by weight): the device's in-bitmap
    and merged in-CSR are the host's."""
    from graphdb.executor.gpu import runtime as rt

    rng = np.random.default_rng(7)
    model = Model(rng, True, n=40, m=3000)
    with loaded(model) as con:
        con.execute("CHECKPOINT g")
        device = rt.device_name()
        for where in ("(src * 7 + dst) % 5 = 0", "weight = 3"):
            con.execute(f"DELETE FROM g.edges WHERE {where}")
            graph = graph_of(con)
            np.testing.assert_array_equal(_host(graph.in_tombstones(device)),
                                          graph.in_tombstones())
            held = graph.residency.peek(graph.base.key, device, "device:in_weights")
            assert (held is not None) == (where == "weight = 3"), where
            want = graph.csr("in", weights=True)
            got = rt.device_csr(graph, "in", weights=True)
            for a, b in ((want.offsets, got.offsets), (want.targets, got.targets),
                         (want.weights, got.weights)):
                np.testing.assert_array_equal(a, b.get())


@pytest.mark.parametrize("directed", [True, False])
def test_device_states_and_merged_arrays_equal_the_hosts(directed):
    from graphdb.executor.gpu import runtime as rt

    rng = np.random.default_rng(4)
    model = Model(rng, directed)
    with loaded(model) as con:
        for _step, graph in versions(con, model, rng, 7):
            device = rt.device_name()
            host, dev = graph.version_delta(), graph.version_delta(device)
            assert host is not None and dev is not None
            if directed:  # the same stored in-CSR entries deleted (carried or matched)
                a, b = graph.in_tombstones(), _host(graph.in_tombstones(device))
                assert (a is None) == (b is None)
                if a is not None:
                    np.testing.assert_array_equal(a, b)
            for name in ("positions", "out_degree", "in_degree", "tomb"):
                a, b = getattr(host, name), _host(getattr(dev, name))
                assert (a is None) == (b is None), name
                if a is not None:
                    np.testing.assert_array_equal(a, b)
            for direction in ("out", "in"):
                a, b = host.rows(direction), dev.rows(direction)
                for name in ("offsets", "targets", "weights", "edges"):
                    np.testing.assert_array_equal(getattr(a, name), _host(getattr(b, name)))
                want = graph.csr(direction, weights=True)
                got = rt.device_csr(graph, direction, weights=True)
                for a, b in ((want.offsets, got.offsets), (want.targets, got.targets),
                             (want.weights, got.weights)):
                    np.testing.assert_array_equal(a, b.get())


@pytest.mark.parametrize("directed", [True, False])
def test_gpu_operators_on_unmerged_versions_answer_as_fresh_ingest(directed):
    rng = np.random.default_rng(12 if directed else 13)
    model = Model(rng, directed)
    with loaded(model) as con:
        con.execute("SET device = 'gpu'")
        source = int(model.src[0])
        for step in range(8):
            write_step(con, model, rng, step)
            plan = "\n".join(r[0] for r in con.execute(
                f"EXPLAIN SELECT * FROM bfs(g, {source})").fetchall())
            assert "gpu · " in plan, plan
            with fresh_graph(model) as fresh:
                same_answers(answers(con, source), answers(fresh, source), rel=1e-4)
        before = answers(con, source)
        con.execute("CHECKPOINT g")
        same_answers(before, answers(con, source), rel=1e-4)


@pytest.mark.parametrize("directed", [True, False])
@pytest.mark.parametrize("reorder", [False, True])
def test_pagerank_on_the_bases_partition_with_the_delta_beside_it(directed, reorder):
    """The version's partition is the base's with the delta as corrections (no partition built
    per version), relabelled or not, with vertices added since; ranks as the CPU's."""
    from graphdb.executor.algorithms.pagerank import cpu, gpu

    rng = np.random.default_rng(21)
    model = Model(rng, directed)
    grown = 0
    with loaded(model) as con:
        for _step, graph in versions(con, model, rng, 6):
            layout = gpu.Layout(1 << 10 if reorder else 1 << 30, reorder)
            part = gpu.partition_for(graph, layout)
            assert part.corrections is not None
            assert part.rowptr[0] is gpu.partition_for(graph.base, layout).rowptr[0]
            ranks, _, _ = gpu.pagerank_gpu(graph, layout=layout)
            want, _ = cpu.pagerank_ranks(graph)
            np.testing.assert_allclose(ranks.get(), want, rtol=1e-4, atol=1e-9)
            grown += graph.num_vertices > graph.base.num_vertices
    assert grown  # (the model adds a vertex from its fourth version on)

"""Streamed operators against independent references, written once and run on every device:
on the CPU, and on the GPU where there is one, under budgets that force several pieces (and cut
hub rows), several chunks and several pages per iteration.

The configuration each run receives is what the physical planner would give the variant: the
spec's vertex-state bytes and a budget (:func:`config`).
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from streaming_graphs import dense, memory_graph, ref_bfs, ref_cdlp, ref_sssp, ref_wcc, stored_graph

from graphdb.executor import algorithms
from graphdb.executor.algorithms.bfs.cpu import bfs_depths
from graphdb.executor.algorithms.pagerank.cpu import pagerank_ranks
from graphdb.executor.algorithms.spec import OperatorConfig
from graphdb.executor.errors import DeviceOutOfMemory
from graphdb.executor.graph import Graph
from graphdb.executor.operators.subway import plan_pieces, run_subway

DEVICES = ["cpu", pytest.param("gpu", marks=pytest.mark.gpu)]

#: Graph sizes and the room beside the vertex state (and the GPU's slack): the GPU streams in
#: larger buffers, so its graphs are larger; both leave room for a small share of the edges.
SIZES = {"cpu": (2_000, 12_000, [6_000, 60_000]), "gpu": (20_000, 200_000, [600_000, 6_000_000])}


def config(name: str, graph, variant: str, room: int, device: str = "cpu") -> OperatorConfig:
    """What the physical planner gives ``variant`` of ``name``: its spec's vertex state plus
    ``room`` bytes free (the GPU's slack on top)."""
    spec = algorithms.get(name).variant(device, variant)
    state = spec.state_bytes(graph.num_vertices, graph.num_edges)
    config = OperatorConfig.with_room(device, variant, state, room)
    assert config.free_bytes() >= room
    return config


def streamed(name: str, graph, variant: str, room: int, device: str = "cpu", **options):
    return algorithms.run(name, graph, options, config(name, graph, variant, room, device))


def subway(name: str, graph, source, room: int, device: str = "cpu", **kw):
    return run_subway(graph, config(name, graph, "subway", room, device), name, source, **kw)


def sized(device: str):
    n, m, rooms = SIZES[device]
    return n, m, rooms


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("small", [True, False])
@pytest.mark.parametrize("asynchronous", [True, False])
def test_subway_sssp_matches_dijkstra(device, small, asynchronous):
    n, m, rooms = sized(device)
    g = memory_graph(n, m, seed=3)
    room = rooms[0] if small else 1 << 30
    out = subway("sssp", g, 3, room, device, asynchronous=asynchronous)
    np.testing.assert_allclose(dense(out, "distance", n), ref_sssp(g, 3), rtol=1e-12)
    met = out.metrics
    assert met["device"] == device and met["outer_iterations"] >= 1
    assert met["bytes_to_device"] > 0
    if small and (asynchronous or device == "cpu"):
        assert met["partitions"] > met["outer_iterations"]  # several pieces per iteration
    if asynchronous:
        assert met["per_iteration"][0]["mode"] == "partitions"  # the whole graph first
    if device == "gpu":  # no ids come back: three counters an iteration and the result
        assert met["bytes_from_device"] < 24 * met["outer_iterations"] + 12 * n + 64


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("directed", [True, False])
def test_subway_bfs_and_wcc_match_scipy(device, directed):
    n, m, rooms = sized(device)
    g = memory_graph(n, m, directed=directed, weighted=False)
    for room in rooms:
        for asynchronous in (False, True):
            out = subway("bfs", g, 0, room, device, asynchronous=asynchronous)
            np.testing.assert_array_equal(dense(out, "depth", n), ref_bfs(g, 0))
        out = subway("wcc", g, None, room, device, asynchronous=True)
        np.testing.assert_array_equal(out.columns["component"], ref_wcc(g))
        out = streamed("wcc", g, "subway", room, device)
        np.testing.assert_array_equal(out.columns["component"], ref_wcc(g))


@pytest.mark.gpu
@pytest.mark.parametrize("threshold", [0.0, 1.0])
@pytest.mark.parametrize("asynchronous", [True, False])
def test_gpu_subway_partitions_and_subcsrs(threshold, asynchronous):
    """threshold 0: every iteration streams whole partitions (DMA, resident offsets); 1: every
    one builds a SubCSR on the device, WCC's all-active first iteration too."""
    n, m, rooms = sized("gpu")
    g = memory_graph(n, m, seed=7)
    kw = dict(threshold=threshold, asynchronous=asynchronous, first_full=False)
    out = subway("sssp", g, 5, rooms[0], "gpu", **kw)
    np.testing.assert_allclose(dense(out, "distance", n), ref_sssp(g, 5), rtol=1e-12)
    its = out.metrics["per_iteration"]
    if threshold == 0.0:  # an iteration whose active vertices have no edges is an empty SubCSR
        assert all(r["mode"] == "partitions" or r["active_edges"] == 0 for r in its)
    else:
        assert all(r["mode"] == "subcsr" for r in its)
    out = subway("bfs", g, 5, rooms[0], "gpu", **kw)
    np.testing.assert_array_equal(dense(out, "depth", n), ref_bfs(g, 5))
    out = subway("wcc", g, None, rooms[0], "gpu", **kw)
    np.testing.assert_array_equal(out.columns["component"], ref_wcc(g))


def test_subway_streams_subcsrs_when_few_edges_are_active():
    g = memory_graph(2000, m=6000)
    out = subway("sssp", g, 0, 60_000, asynchronous=False, threshold=0.8)
    modes = [r["mode"] for r in out.metrics["per_iteration"]]
    assert "subcsr" in modes
    full_bytes = out.metrics["graph_edge_bytes"] * out.metrics["outer_iterations"]
    assert out.metrics["bytes_to_device"] < full_bytes


def test_vertex_state_that_does_not_fit_names_the_sizes():
    g = memory_graph(2000)
    with pytest.raises(DeviceOutOfMemory, match=r"2000 vertices.*budget"):
        algorithms.run("sssp", g, {"source": 0},
                       OperatorConfig("cpu", "subway", 1000, 18 * 2000))


@settings(max_examples=40, deadline=None)
@given(degrees=st.lists(st.integers(0, 50), min_size=1, max_size=60),
       capacity=st.integers(40, 400), row_bytes=st.sampled_from([8, 12]),
       edge_bytes=st.sampled_from([4, 12]))
def test_pieces_cover_every_edge_once_within_capacity(degrees, capacity, row_bytes, edge_bytes):
    off = np.concatenate([[0], np.cumsum(degrees)]).astype(np.int64)
    pieces = plan_pieces(off, row_bytes, edge_bytes, capacity)
    e = 0
    for p in pieces:
        assert p.e0 == e and p.e1 >= p.e0
        e = p.e1
        assert off[p.r0] <= p.e0 and p.e1 <= off[p.r1]
        whole = p.r1 - p.r0 > 1 or (off[p.r0] == p.e0 and off[p.r1] == p.e1)
        if whole:
            assert p.edges * edge_bytes + (p.r1 - p.r0) * row_bytes <= capacity
        else:  # a cut row: its edges alone fill the piece
            assert p.edges * edge_bytes + row_bytes <= capacity
    assert e == off[-1]
    assert pieces[-1].r1 == len(degrees) or all(d == 0 for d in degrees[pieces[-1].r1:])


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("small", [True, False])
def test_edge_centric_pagerank_matches_resident(device, small):
    n, m, rooms = sized(device)
    g = memory_graph(n, m, weighted=False)
    room = rooms[0] // 2 if small else rooms[0]  # both leave room for part of the in-CSR
    out = streamed("pagerank", g, "edge_centric", room, device, damping=0.85, max_iterations=15)
    ref, _ = pagerank_ranks(g, 0.85, 15)
    np.testing.assert_allclose(out.columns["rank"], ref, rtol=1e-10, atol=1e-15)
    assert out.metrics["partitions"] > out.metrics["outer_iterations"]


@pytest.mark.parametrize("device", DEVICES)
def test_edge_centric_pagerank_cut_hub_and_tolerance(device):
    """An in-hub whose row spans several chunks, rows without in-edges, dangling vertices; the
    tolerance path (on the GPU one host wait an iteration)."""
    rng = np.random.default_rng(11)
    n, m, hub = (20_000, 150_000, 60_000) if device == "gpu" else (2_000, 10_000, 3_000)
    src = np.concatenate([rng.integers(0, n // 2, m), rng.integers(0, n // 2, hub)])
    dst = np.concatenate([rng.integers(0, n, m), np.full(hub, 5)])
    g = Graph.from_edges(src, dst, n)  # vertices >= n/2 have no out-edges: dangling
    room = 400_000 if device == "gpu" else 8_000
    out = streamed("pagerank", g, "edge_centric", room, device, max_iterations=15)
    ref, _ = pagerank_ranks(g, 0.85, 15)
    np.testing.assert_allclose(out.columns["rank"], ref, rtol=1e-10)
    assert out.metrics["chunk_bytes"] < hub * 4  # the hub's row is cut
    got = streamed("pagerank", g, "edge_centric", room, device, max_iterations=200,
                   tolerance=1e-9)
    ref, iters = pagerank_ranks(g, 0.85, 200, 1e-9)
    assert got.metrics["outer_iterations"] == iters < 200
    np.testing.assert_allclose(got.columns["rank"], ref, rtol=1e-9)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("directed", [True, False])
def test_edge_centric_cdlp_matches_reference(device, directed):
    g = memory_graph(300, m=1500, directed=directed, weighted=False)
    out = streamed("cdlp", g, "edge_centric", 4_000, device, max_iterations=5)
    np.testing.assert_array_equal(out.columns["label"], ref_cdlp(g, 5))
    assert out.metrics["partitions"] > out.metrics["outer_iterations"]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("directed", [True, False])
def test_page_streaming_bfs_and_pagerank(tmp_path, device, directed):
    n, m, _ = sized(device)
    g, mem, env, bm = stored_graph(tmp_path, n=n, m=m, directed=directed, pool_bytes=16 * 4096)
    try:
        # on the GPU: room for the stream buffers and a few cached pages; most pages stream
        room = 20 * n + 12 * 4096 if device == "gpu" else 5 * n
        out = streamed("bfs", g, "pages", room, device, source=0)
        depth, _ = bfs_depths(mem, 0)
        assert np.array_equal(dense(out, "depth", n, -1), depth)
        per_level = out.metrics["pages_per_level"]
        assert max(per_level) > 1 and per_level[0] < out.metrics["pages_total"]
        assert out.metrics["pages_total"] > 16  # more pages than the pool holds
        out = streamed("pagerank", g, "pages", 200_000 if device == "gpu" else 20 * n, device,
                       damping=0.85, max_iterations=8)
        ref, _ = pagerank_ranks(mem, 0.85, 8)
        np.testing.assert_allclose(out.columns["rank"], ref, rtol=1e-10, atol=1e-15)
        assert out.metrics["predicted_s"] > 0 and out.metrics["cache_hit_rate"] is not None
    finally:
        bm.close()
        env.close()


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", ["bfs", "pagerank"])
def test_page_streaming_refuses_a_record_id_that_lies(tmp_path, device, name):
    """A page whose record id names a slot beyond its page's vertices, sealed again: the CPU
    stream's decoding and the GPU kernels' own bounds check (rid_vertex) both refuse it, never
    reading outside the vertex state."""
    import struct

    from graphdb.storage.checksum import checksum
    from graphdb.storage.errors import CorruptData
    from graphdb.storage.pages import HEADER_BYTES, read_header

    n, m, _ = sized(device)
    g, _mem, env, bm = stored_graph(tmp_path, n=n, m=m, pool_bytes=16 * 4096)
    try:
        direction = "out" if name == "bfs" else "in"
        db = env.db("pages")
        with env.read_txn() as txn:
            key = f"g/{direction}/{0:010d}".encode()
            page = bytearray(bytes(txn.get(key, db=db)))
        header = read_header(page)
        at = HEADER_BYTES
        while struct.unpack_from("<I", page, at)[0] == 0:  # the first record with an edge
            at += 4
        rid = at + 4 + header.pid_bytes  # its first record id's slot: past every vertex
        page[rid:rid + header.slot_bytes] = b"\xff" * header.slot_bytes
        struct.pack_into("<I", page, 8, checksum(bytes(page[12:]), page[47]))
        env.write(lambda txn: txn.put(key, bytes(page), db=db))
        bm.forget("g")
        room = 20 * n + 12 * 4096 if device == "gpu" else 5 * n
        options = {"source": 0} if name == "bfs" else {"damping": 0.85, "max_iterations": 3}
        with pytest.raises(CorruptData):
            streamed(name, g, "pages", room if name == "bfs" else
                     (200_000 if device == "gpu" else 20 * n), device, **options)
    finally:
        bm.close()
        env.close()


def test_threaded_subcsr_gather_matches(monkeypatch):
    import graphdb.executor.operators.subway as sw

    monkeypatch.setattr(sw, "PARALLEL_GATHER_EDGES", 64)
    monkeypatch.setattr(sw, "GATHER_THREADS", 3)
    monkeypatch.setattr(sw, "_POOL", None)
    g = memory_graph(2000)
    out = subway("sssp", g, 3, 60_000, asynchronous=True, first_full=False)
    np.testing.assert_allclose(dense(out, "distance", 2000), ref_sssp(g, 3))
    assert out.metrics["per_iteration"][0]["mode"] == "subcsr"


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("max_depth", [0, 1, 2, 3])
def test_subway_bfs_max_depth_matches_resident(device, max_depth):
    n, m, rooms = sized(device)
    g = memory_graph(n, m, weighted=False)
    out = streamed("bfs", g, "subway", rooms[0], device, source=0, max_depth=max_depth)
    depth, _ = bfs_depths(g, 0, max_depth)
    np.testing.assert_array_equal(dense(out, "depth", n, -1), depth)


def test_every_streamed_operator_reports_the_instrumentation(tmp_path):
    keys = {"outer_iterations", "inner_iterations", "active_vertices", "active_edges",
            "bytes_to_device", "transfer_s", "kernel_s", "partitions", "cache_hit_rate",
            "per_iteration", "budget_bytes", "strategy", "wall_s"}
    g = memory_graph(2000)
    outs = [streamed("sssp", g, "subway", 60_000, source=0),
            streamed("pagerank", g, "edge_centric", 20_000, max_iterations=3)]
    sg, mem, env, bm = stored_graph(tmp_path, n=2000)
    try:
        outs.append(streamed("bfs", sg, "pages", 10_000, source=0))
    finally:
        bm.close()
        env.close()
    for out in outs:
        assert keys <= set(out.metrics), keys - set(out.metrics)
        assert len(out.metrics["per_iteration"]) == out.metrics["outer_iterations"]

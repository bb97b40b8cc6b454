"""The planner's choice among resident, Subway, edge-centric and page streaming, and its reasons."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest
from streaming_graphs import dense, memory_graph, ref_sssp

from graphdb.executor.device import Device
from graphdb.executor.errors import DeviceOutOfMemory
from graphdb.executor.streaming import planner

MiB = 1 << 20


def entry(n=1_000_000, m=16_000_000, weighted=True):
    csr = 8 * (n + 1) + (12 if weighted else 4) * m
    return SimpleNamespace(name="g", num_vertices=n, num_edges=m, directed=False,
                           weighted=weighted, stats={"csr_bytes": csr, "pages": 90,
                                                     "page_size": 2 * MiB})


@pytest.mark.parametrize("kind", ["cpu", "gpu"], ids=["budget-cpu", "budget-gpu"])
def test_choices_by_size(kind):
    e = entry()
    big = Device(kind, 1 << 34)
    assert planner.plan("sssp", e, big).variant == "resident"
    small = Device(kind, 64 * MiB)
    c = planner.plan("sssp", e, small)
    assert c.variant == "subway" and "190.7 MiB" in c.reason and "64.0 MiB" in c.reason
    assert planner.plan("pagerank", e, small).variant == "edge_centric"
    assert planner.plan("cdlp", e, small).variant == "edge_centric"
    tiny_host = planner.plan("bfs", e, small, host_budget=100 * MiB)
    assert tiny_host.variant == "pages" and "90 pages" in tiny_host.reason
    assert "GTS model" in tiny_host.reason
    assert planner.plan("pagerank", e, small, host_budget=100 * MiB).variant == "pages"
    with pytest.raises(DeviceOutOfMemory, match="no page-streamed variant"):
        planner.plan("sssp", e, small, host_budget=100 * MiB)
    assert planner.plan("lcc", e, small).variant == "resident"  # no streamed variant


def test_vertex_state_that_does_not_fit_is_an_error_naming_sizes():
    with pytest.raises(DeviceOutOfMemory, match=r"1000000 vertices x 40 B.*does not fit"):
        planner.plan("pagerank", entry(), Device("gpu", 16 * MiB))


def test_implementation_for_binds_device_and_budget():
    g = memory_graph(2000)
    e = SimpleNamespace(num_vertices=2000, num_edges=g.num_edges, directed=True, weighted=True,
                        stats={"csr_bytes": g.resident_bytes()})
    choice = planner.plan("sssp", e, Device("cpu", 60_000))
    assert choice.variant == "subway"
    assert planner.implementation_for(planner.plan("sssp", e, Device("cpu", 1 << 30)), "sssp") \
        is None
    out = planner.implementation_for(choice, "sssp")(g, source=5)
    np.testing.assert_allclose(dense(out, "distance", 2000), ref_sssp(g, 5))
    assert out.metrics["plan"] == "subway" and out.metrics["budget_bytes"] == 60_000

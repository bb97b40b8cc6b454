"""The cost model's choice of device and variant."""

from __future__ import annotations

from graphdb.catalog import GraphEntry
from graphdb.executor.cost import choose_for
from graphdb.executor.device import Device


def _entry(vertices: int, csr_bytes: int) -> GraphEntry:
    return GraphEntry(name="g", graph_id="x", directed=True, weighted=False,
                      num_vertices=vertices, num_edges=csr_bytes // 4, input_edges=csr_bytes // 4,
                      id_type="int64", created=0.0, stats={"csr_bytes": csr_bytes})


def test_algorithm_without_gpu_kernel_is_judged_against_the_cpu_budget():
    tiny_gpu = Device("gpu", 1000, name="small GPU", reason="test")
    choice = choose_for("khop", _entry(100, 10_000), tiny_gpu, gpu_impl=False)
    # The graph does not fit the GPU's 1000 bytes, but it runs on the CPU, where it fits.
    assert choice.device.kind == "cpu" and choice.variant == "resident"
    assert "no GPU kernel" in choice.reason and "1000 B" not in choice.reason


def test_gpu_kernel_and_fit_keeps_the_gpu():
    gpu = Device("gpu", 1 << 30, name="GPU", reason="test")
    choice = choose_for("bfs", _entry(100, 10_000), gpu, gpu_impl=True)
    assert choice.device is gpu and choice.variant == "resident"

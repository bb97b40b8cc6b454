"""The case of tests/gpu/test_gpu_writes.py (BFS, SSSP, PageRank, WCC on a changed graph, after
CHECKPOINT and after more writes, against a fresh ingest) on the CPU, resident and with a small
budget: it checks the case itself here, where the GPU run is skipped."""

from __future__ import annotations

import pytest

from ..gpu.test_gpu_writes import changed_graph_case


@pytest.mark.parametrize("budget", [None, "100KB"])
@pytest.mark.parametrize("undirected", [False, True])
def test_cpu_operators_on_a_changed_graph_answer_as_a_fresh_ingest(budget, undirected):
    changed_graph_case("cpu", budget, undirected)

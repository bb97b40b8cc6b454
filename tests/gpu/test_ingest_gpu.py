"""The ingest's sort on the GPU (CuPy) against the CPU's: the same stored bytes, for dense raw
ids, string ids, undirected graphs and edge properties; the keys went to the device during the
read (the spool was on it)."""

from __future__ import annotations

import numpy as np
import pytest

from graphdb.catalog.devicebuild import DeviceSpool, device_topology, device_xp
from tests.catalog.ingest_helpers import load
from tests.catalog.test_device_build import _input
from tests.catalog.test_ingest_external import _stored

pytestmark = pytest.mark.gpu


@pytest.mark.parametrize("ids", ["dense", "string"])
@pytest.mark.parametrize("options", [{}, {"undirected": True}])
def test_gpu_ingest_stores_what_the_cpu_stores(tmp_path, ids, options):
    path = _input(tmp_path, ids)
    cpu_cat, cpu = load(tmp_path / "db", path, name="cpu", device="cpu", **options)
    gpu_cat, gpu = load(tmp_path / "db", path, name="gpu", device="gpu", **options)
    assert gpu.stats["sort_device"] == "gpu"
    a, b = _stored(cpu_cat, cpu), _stored(gpu_cat, gpu)
    for name in a:
        np.testing.assert_array_equal(a[name], b[name], err_msg=name)
    assert cpu_cat.edge_table(cpu).equals(gpu_cat.edge_table(gpu))


def test_device_topology_with_cupy_equals_numpy():
    cp = device_xp("gpu")
    rng = np.random.default_rng(4)
    src, dst = rng.integers(0, 10**5, 10**6) * 2, rng.integers(0, 10**5, 10**6) * 2
    results = []
    for xp in (np, cp):
        spool = DeviceSpool(xp, {"src": np.int64, "dst": np.int64, "weight": np.float64}, 2)
        spool.append({"src": src[:400_000], "dst": dst[:400_000],
                      "weight": np.arange(400_000.0)}, 0)
        spool.append({"src": src[400_000:], "dst": dst[400_000:],
                      "weight": np.arange(400_000.0, 10**6)}, 1)
        results.append(device_topology(xp, spool, 2 * 10**5, undirected=False, renumber=True))
    for direction in ("out", "in"):
        for name, values in results[0].arrays[direction].items():
            np.testing.assert_array_equal(values, results[1].arrays[direction][name])

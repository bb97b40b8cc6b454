"""The GPU ingest's sort, run with numpy as its array module, against the CPU's sort: the same
arrays byte for byte (and so the same bytes on disk), for every shape of input it takes."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from graphdb.catalog.csrbuild import EdgeSource, build_topology
from graphdb.catalog.devicebuild import DeviceSpool, device_topology


def edges(seed: int, n: int, m: int, gaps: bool):
    rng = np.random.default_rng(seed)
    src, dst = rng.integers(0, n, m), rng.integers(0, n, m)
    src[: m // 10] = dst[: m // 10]  # self loops
    src[m // 10: m // 5] = 3  # a hub
    if gaps:  # raw ids with holes: renumbered by presence
        src, dst = src * 3 + 1, dst * 3 + 1
    return src, dst, rng.random(m), np.arange(m, dtype=np.int64)


@pytest.mark.parametrize("undirected", [False, True])
@pytest.mark.parametrize("payload", ["none", "weight", "both"])
@pytest.mark.parametrize("gaps", [False, True])
def test_device_sort_with_numpy_is_the_cpu_sort(tmp_path, undirected, payload, gaps):
    src, dst, w, rows = edges(7, 300, 5000, gaps)
    span = int(max(src.max(), dst.max())) + 1
    columns = {"src": np.int64, "dst": np.int64}
    if payload != "none":
        columns["weight"] = np.float64
    if payload == "both":
        columns["row"] = np.int64
    spool = DeviceSpool(np, columns, parts=2)
    chunks = []
    for part, (a, b) in enumerate([(0, 2000), (2000, 5000)]):
        for start in range(a, b, 700):
            stop = min(b, start + 700)
            chunk = {"src": src[start:stop], "dst": dst[start:stop], "weight": w[start:stop],
                     "row": rows[start:stop]}
            chunk = {k: v for k, v in chunk.items() if k in columns}
            spool.append(chunk, part)
            chunks.append(chunk)
    extra = [np.array([span + 5])]  # a vertex without edges (a vertex file's)
    device = device_topology(np, spool, span + 6, undirected=undirected, renumber=True,
                             extra_keys=extra)
    cpu = build_topology(EdgeSource(lambda: iter(chunks), len(src), True), span + 6,
                         undirected=undirected, weighted=payload != "none",
                         with_rows=payload == "both", merge=None, budget_bytes=1 << 30,
                         tmpdir=Path(tmp_path), renumber=True, extra_keys=lambda: iter(extra))
    assert device.renumber.n == cpu.renumber.n
    np.testing.assert_array_equal(np.concatenate(list(device.renumber.keys())),
                                  np.concatenate(list(cpu.renumber.keys())))
    for direction, csr in (("out", cpu.out), ("in", cpu.reverse)):
        if csr is None:
            assert direction not in device.arrays
            continue
        got = device.arrays[direction]
        expected = {"offsets": csr.offsets, "targets": csr.targets, "weight": csr.weights,
                    "row": csr.rows}
        assert set(got) == {k for k, v in expected.items() if v is not None}
        for name, values in got.items():
            np.testing.assert_array_equal(values, expected[name], err_msg=f"{direction} {name}")
            assert values.dtype == np.asarray(expected[name]).dtype, name


def test_keys_mapped_through_a_lookup_table(tmp_path):
    """String ids: keys are first-seen positions, mapped to their sorted ranks first."""
    rng = np.random.default_rng(3)
    n, m = 50, 800
    lut = rng.permutation(n).astype(np.int32)  # key -> rank
    src, dst = rng.integers(0, n, m), rng.integers(0, n, m)
    spool = DeviceSpool(np, {"src": np.int64, "dst": np.int64}, parts=1)
    spool.append({"src": src, "dst": dst})
    device = device_topology(np, spool, n, undirected=False, renumber=False, lut=lut)
    chunk = {"src": lut[src], "dst": lut[dst]}
    cpu = build_topology(EdgeSource(lambda: iter([chunk]), m, True), n, undirected=False,
                         weighted=False, with_rows=False, merge=None, budget_bytes=1 << 30,
                         tmpdir=Path(tmp_path), renumber=False)
    for direction, csr in (("out", cpu.out), ("in", cpu.reverse)):
        np.testing.assert_array_equal(device.arrays[direction]["offsets"], csr.offsets)
        np.testing.assert_array_equal(device.arrays[direction]["targets"], csr.targets)


# -- the ingest with its sort on the "device" (numpy standing in for CuPy) --------------------

import pyarrow as pa  # noqa: E402
import pyarrow.csv as pacsv  # noqa: E402

import graphdb.catalog.ingest as ingest  # noqa: E402
from graphdb.catalog import IngestError  # noqa: E402
from tests.catalog.ingest_helpers import load  # noqa: E402
from tests.catalog.test_ingest_external import _stored  # noqa: E402


def _input(tmp_path, ids: str):
    rng = np.random.default_rng(11)
    n, m = 2_000, 30_000
    src, dst = rng.integers(0, n, m), rng.integers(0, n, m)
    columns = {"s": src * 5, "d": dst * 5, "weight": rng.random(m), "tag": np.arange(m)}
    if ids == "string":
        columns["s"] = [f"v{x}" for x in src]
        columns["d"] = [f"v{x}" for x in dst]
    elif ids == "spread":
        columns["s"], columns["d"] = src * 10**12 - 7, dst * 10**12 - 7
    path = tmp_path / f"e-{ids}.csv"
    pacsv.write_csv(pa.table(columns), path)
    return path


@pytest.mark.parametrize("ids", ["dense", "string", "spread"])
@pytest.mark.parametrize("options", [{}, {"undirected": True}, {"duplicates": "merge"}])
def test_an_ingest_sorted_on_the_device_stores_what_the_cpu_stores(tmp_path, monkeypatch,
                                                                    ids, options):
    path = _input(tmp_path, ids)
    cpu_cat, cpu = load(tmp_path / "db", path, name="cpu", device="cpu", **options)
    monkeypatch.setattr(ingest, "device_xp", lambda preference: np)
    dev_cat, dev = load(tmp_path / "db", path, name="dev", device="gpu", **options)
    # merged duplicates and spread-out ids are the CPU's; the rest sorts on the device
    on_device = "duplicates" not in options and ids != "spread"
    assert dev.stats["sort_device"] == ("gpu" if on_device else "cpu")
    a, b = _stored(cpu_cat, cpu), _stored(dev_cat, dev)
    assert a.keys() == b.keys()
    for name in a:
        np.testing.assert_array_equal(a[name], b[name], err_msg=name)
    assert cpu_cat.vertex_ids(cpu).equals(dev_cat.vertex_ids(dev))
    assert cpu_cat.edge_table(cpu).equals(dev_cat.edge_table(dev))
    ignore = ("ingest_seconds", "sort_device")
    assert {k: v for k, v in cpu.stats.items() if k not in ignore} == \
        {k: v for k, v in dev.stats.items() if k not in ignore}


def test_device_gpu_without_one_says_so(tmp_path, monkeypatch):
    monkeypatch.setattr(ingest, "device_xp", lambda preference: None)
    with pytest.raises(IngestError, match="--device gpu: no GPU"):
        load(tmp_path / "db", _input(tmp_path, "dense"), device="gpu")

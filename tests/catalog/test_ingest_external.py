"""The external-sort path (a memory limit far below the input) against the in-memory path and
against scipy, on random graphs."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.csv as pacsv
import pytest

import graphdb.catalog.csrbuild as csrbuild
from graphdb.catalog.csrbuild import EdgeSource, build_topology
from tests.catalog.ingest_helpers import adjacency, csr_of, load

TINY = 1 << 20  # 1 MiB: tens of thousands of edges already spill and split into many buckets


def _random_edges(tmp_path, m, n, seed, strings=False, props=False):
    rng = np.random.default_rng(seed)
    src, dst = rng.integers(0, n, m), rng.integers(0, n, m)
    columns = {"s": src, "d": dst, "weight": rng.integers(1, 50, m).astype(float)}
    if strings:
        columns = {"s": [f"v{x}" for x in src], "d": [f"v{x}" for x in dst],
                   "weight": columns["weight"]}
    if props:
        columns["tag"] = np.arange(m)
    path = tmp_path / f"e{seed}.csv"
    pacsv.write_csv(pa.table(columns), path)
    return path, src, dst


def _stored(catalog, entry):
    names = [f"{side}_{array}" for side in ("out", "in") for array in
             ("offsets", "targets", "weights")]
    return {name: catalog.read_array(entry, name) for name in names
            if (name.startswith("out") or entry.directed)
            and (entry.weighted or not name.endswith("weights"))}


@pytest.mark.parametrize("options", [
    {}, {"undirected": True}, {"duplicates": "merge", "merge_weights": "sum"},
    {"self_loops": "drop"}, {"duplicates": "merge", "undirected": True},
])
def test_tiny_memory_limit_matches_in_memory_path(tmp_path, options, monkeypatch):
    path, src, dst = _random_edges(tmp_path, 60_000, 3_000, seed=len(options))
    mem_cat, mem = load(tmp_path / "db", path, name="mem", **options)
    spills = []
    real = csrbuild.Spool.append

    def spy(self, columns):
        real(self, columns)
        spills.append(self.spilled)

    monkeypatch.setattr(csrbuild.Spool, "append", spy)
    ext_cat, ext = load(tmp_path / "db", path, name="ext", memory_limit=TINY, **options)
    assert any(spills), "the tiny limit should force bucket files"
    a, b = _stored(mem_cat, mem), _stored(ext_cat, ext)
    assert a.keys() == b.keys()
    for name in a:
        np.testing.assert_array_equal(a[name], b[name], err_msg=name)
    assert mem.stats == {**ext.stats, "ingest_seconds": mem.stats["ingest_seconds"]}


@pytest.mark.parametrize("options", [{}, {"duplicates": "merge"}, {"undirected": True}])
def test_offsets_larger_than_the_limit_go_to_a_file(tmp_path, options, monkeypatch):
    """With more vertices than a share of the limit holds offsets for, the offsets are written
    bucket by bucket to a file (empty buckets included) and read back as a memory map: the
    same CSR and statistics as in memory."""
    rng = np.random.default_rng(17)
    n = 60_000  # 480 KB of offsets against a 128 KB share of 1 MiB
    src = rng.integers(0, n, 40_000)
    dst = np.where(rng.random(40_000) < 0.5, src // 7, rng.integers(0, n, 40_000))
    path = tmp_path / "wide.csv"
    pacsv.write_csv(pa.table({"s": src, "d": dst}), path)
    mem_cat, mem = load(tmp_path / "db", path, name="mem", **options)
    spilled = []
    real = csrbuild._Offsets.finish

    def spy(self):
        result = real(self)
        spilled.append(isinstance(result, np.memmap))
        return result

    monkeypatch.setattr(csrbuild._Offsets, "finish", spy)
    ext_cat, ext = load(tmp_path / "db", path, name="ext", memory_limit=TINY, **options)
    assert spilled and all(spilled)
    a, b = _stored(mem_cat, mem), _stored(ext_cat, ext)
    for name in a:
        np.testing.assert_array_equal(a[name], b[name], err_msg=name)
    assert mem.stats == {**ext.stats, "ingest_seconds": mem.stats["ingest_seconds"]}
    assert mem.stats["isolated_vertices"] == 0 and mem.stats["max_out_degree"] > 1


def test_offsets_writer_skips_empty_ranges(tmp_path):
    """Zero-degree runs longer than one write piece, in memory and in a file."""
    degrees = [np.array([2, 0, 1]), None, np.array([4])]
    for spill in (1 << 30, 0):
        offsets = csrbuild._Offsets(3 + 2_500_000 + 1, tmp_path / f"o{spill}", spill)
        for d in degrees:
            offsets.add(d) if d is not None else offsets.skip(2_500_000)
        out = offsets.finish()
        assert isinstance(out, np.memmap) == (spill == 0)
        assert out[:4].tolist() == [0, 2, 2, 3] and out[-2:].tolist() == [3, 7]
        assert len(out) == 2_500_005 and np.all(out[4:-1] == 3)


def test_external_path_against_scipy(tmp_path):
    path, src, dst = _random_edges(tmp_path, 50_000, 5_000, seed=7)
    catalog, entry = load(tmp_path / "db", path, memory_limit=TINY)
    ids = np.unique(np.concatenate([src, dst]))
    s, d = np.searchsorted(ids, src), np.searchsorted(ids, dst)
    assert adjacency(catalog, entry, "out") == csr_of(s, d, len(ids))
    assert adjacency(catalog, entry, "in") == csr_of(d, s, len(ids))


def test_external_path_with_string_ids_and_properties(tmp_path):
    path, src, dst = _random_edges(tmp_path, 30_000, 2_000, seed=3, strings=True, props=True)
    mem_cat, mem = load(tmp_path / "db", path, name="mem")
    ext_cat, ext = load(tmp_path / "db", path, name="ext", memory_limit=TINY)
    for cat, entry in ((mem_cat, mem), (ext_cat, ext)):
        table = cat.edge_table(entry)
        tags = np.asarray(table.column("tag"))
        # each stored edge carries the tag of its input row: the row's endpoints and weight
        assert table.column("src").to_pylist() == [f"v{x}" for x in src[tags]]
        assert table.column("dst").to_pylist() == [f"v{x}" for x in dst[tags]]
    assert mem_cat.edge_table(mem).equals(ext_cat.edge_table(ext))


@pytest.mark.parametrize("renumber", [False, True])
def test_bucketed_sort_directly(tmp_path, renumber):
    """Several buckets, a vertex heavier than a bucket, chunked input, both directions; with
    ``renumber`` the keys have gaps (every third key never occurs) that the sort drops."""
    rng = np.random.default_rng(1)
    n, m = 500, 20_000
    key = np.concatenate([rng.integers(0, n, m), np.full(5000, 7)])
    other = rng.integers(0, n, len(key))
    if renumber:
        key, other = key // 3 * 3, other // 3 * 3
    chunks = lambda: ({"src": key[i:i + 3000], "dst": other[i:i + 3000]}  # noqa: E731
                      for i in range(0, len(key), 3000))
    topology = build_topology(EdgeSource(chunks, len(key), False), n, undirected=False,
                              weighted=False, with_rows=False, merge=None,
                              budget_bytes=16 * 1024, tmpdir=tmp_path, renumber=renumber)
    ids = np.unique(np.concatenate([key, other])) if renumber else np.arange(n)
    assert topology.renumber.n == len(ids)
    for csr, k, o in ((topology.out, key, other), (topology.reverse, other, key)):
        k, o = np.searchsorted(ids, k), np.searchsorted(ids, o)
        order = np.argsort(k, kind="stable")
        expected = np.concatenate([[0], np.cumsum(np.bincount(k, minlength=len(ids)))])
        np.testing.assert_array_equal(csr.offsets, expected)
        np.testing.assert_array_equal(np.asarray(csr.targets), o[order])


def test_sparse_ids_under_a_tiny_limit(tmp_path):
    """Ids too spread out for a bitmap: sorted runs merged as they come, binary search."""
    rng = np.random.default_rng(5)
    space = np.unique(rng.integers(-2**62, 2**62, 4000))
    src = space[rng.integers(0, len(space), 40_000)]
    dst = space[rng.integers(0, len(space), 40_000)]
    path = tmp_path / "sparse.csv"
    pacsv.write_csv(pa.table({"s": src, "d": dst}), path)
    catalog, entry = load(tmp_path / "db", path, memory_limit=TINY)
    ids = np.unique(np.concatenate([src, dst]))
    assert catalog.vertex_ids(entry).to_pylist() == ids.tolist()
    s, d = np.searchsorted(ids, src), np.searchsorted(ids, dst)
    assert adjacency(catalog, entry, "out") == csr_of(s, d, len(ids))


@pytest.mark.slow
def test_rmat_under_a_tiny_limit_matches_in_memory(tmp_path):
    """About a million R-MAT edges (skewed degrees) through the external sort with 2 MiB."""
    from graphdb.generators import rmat

    src, dst = rmat(16, seed=3)
    path = tmp_path / "rmat.csv"
    pacsv.write_csv(pa.table({"src": src, "dst": dst}), path)
    mem_cat, mem = load(tmp_path / "db", path, name="mem")
    ext_cat, ext = load(tmp_path / "db", path, name="ext", memory_limit=2 << 20)
    a, b = _stored(mem_cat, mem), _stored(ext_cat, ext)
    for name in a:
        np.testing.assert_array_equal(a[name], b[name], err_msg=name)


@pytest.mark.parametrize("directed", [True, False])
def test_build_graph_arrays_equals_what_an_ingest_stores(tmp_path, directed):
    from graphdb.catalog.ingest import build_graph_arrays

    path, src, dst = _random_edges(tmp_path, 5_000, 300, seed=11)
    catalog, entry = load(tmp_path / "db", path, undirected=not directed)
    ids = catalog.vertex_ids(entry).to_numpy()
    weights = np.asarray(catalog.edge_table(entry).column("weight"))  # stored order
    w_input = pa.csv.read_csv(path).column("weight").to_numpy()
    arrays = build_graph_arrays(np.searchsorted(ids, src), np.searchsorted(ids, dst), len(ids),
                                w_input, directed)
    stored = _stored(catalog, entry)
    assert arrays.keys() == stored.keys()
    for name in arrays:
        np.testing.assert_array_equal(arrays[name], stored[name], err_msg=name)
    np.testing.assert_array_equal(arrays["out_weights"], weights)

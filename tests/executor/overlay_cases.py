"""A graph under random writes that keep its versions readable unmerged (new vertex ids after
the older ones, no vertex deleted), and its answers: shared by the CPU tests
(test_overlay.py) and the GPU's (tests/gpu/test_gpu_overlay.py)."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import scipy.sparse as sp
from scipy.sparse import csgraph

import graphdb

N = 1500


class Model:
    """The graph as plain arrays, changed by the writes' definitions."""

    def __init__(self, rng, directed: bool, n: int = N, m: int = 12000):
        self.directed = directed
        self.src = rng.integers(0, n, m)
        self.dst = rng.integers(0, n, m)
        self.weight = rng.integers(1, 9, m).astype(np.float64)
        self.ids = np.arange(n)

    def table(self) -> pa.Table:
        return pa.table({"src": self.src, "dst": self.dst, "weight": self.weight})

    def add(self, src, dst, weight=None) -> None:
        weight = np.ones(len(src)) if weight is None else weight
        self.src = np.concatenate([self.src, src])
        self.dst = np.concatenate([self.dst, dst])
        self.weight = np.concatenate([self.weight, weight])
        self.ids = np.union1d(self.ids, np.concatenate([src, dst]))

    def keep(self, mask) -> None:
        self.src, self.dst, self.weight = self.src[mask], self.dst[mask], self.weight[mask]

    def matrix(self):
        n = len(self.ids)
        s, d = np.searchsorted(self.ids, self.src), np.searchsorted(self.ids, self.dst)
        return sp.csr_array((np.ones(len(s)), (s, d)), shape=(n, n))


def write_step(con, model: Model, rng, step: int) -> None:
    """One write of a random kind, applied to the model too."""
    kind = step % 5
    top = int(model.ids.max()) + 1
    if kind == 0:  # a batch from Arrow, a few new vertices (ids after the others)
        k = 300
        known = np.append(model.ids, [top, top + 1, top + 2])
        src, dst = rng.choice(known, k), rng.choice(known, k)
        weight = rng.integers(1, 9, k).astype(np.float64)
        con.insert_edges("g", pa.table({"src": src, "dst": dst, "weight": weight}))
        model.add(src, dst, weight)
    elif kind == 1:  # delete by a predicate: stored and inserted edges alike
        mod = int(rng.integers(7, 13))
        con.execute(f"DELETE FROM g.edges WHERE (src * 7 + dst) % {mod} = 0")
        keep = (model.src * 7 + model.dst) % mod != 0
        if not model.directed:  # an undirected edge is a row both ways round
            keep &= (model.dst * 7 + model.src) % mod != 0
        model.keep(keep)
    elif kind == 2:  # re-insert edges like the deleted ones, single rows with parameters
        for _ in range(5):
            s, d = int(rng.choice(model.ids)), int(rng.choice(model.ids))
            con.execute("INSERT INTO g.edges VALUES (?, ?, ?)", [s, d, 2.0])
            model.add(np.array([s]), np.array([d]), np.array([2.0]))
    elif kind == 3:  # a new isolated vertex, and a property change
        con.execute("INSERT INTO g.vertices (id) VALUES (?)", [top + 10])
        model.ids = np.append(model.ids, top + 10)
        con.execute("UPDATE g.edges SET weight = weight + 1 WHERE src = ?", [int(model.src[0])])
        model.weight[model.src == model.src[0]] += 1
    else:  # every edge of one vertex
        v = int(rng.choice(model.src))
        con.execute("DELETE FROM g.edges WHERE src = ?", [v])
        model.keep(model.src != v if model.directed else
                   (model.src != v) & (model.dst != v))


def answers(con, source) -> dict:
    return {
        "bfs": sorted(con.execute(f"SELECT vertex, depth FROM bfs(g, {source})").fetchall()),
        "wcc": sorted(con.execute("SELECT vertex, component FROM wcc(g)").fetchall()),
        "pagerank": dict(con.execute("SELECT vertex, rank FROM pagerank(g)").fetchall()),
        # a vertex's rows read alone (base row without its deletions, then its delta entries)
        "neighbors": [sorted(con.execute(
            f"SELECT neighbor FROM neighbors(g, {v}, direction => '{d}')").fetchall())
            for v in (source, source + 1, source + 2) for d in ("out", "in", "both")],
    }


def same_answers(mine: dict, theirs: dict, rel: float = 1e-9) -> None:
    assert mine["bfs"] == theirs["bfs"]
    assert mine["wcc"] == theirs["wcc"]
    assert mine["neighbors"] == theirs["neighbors"]
    assert mine["pagerank"].keys() == theirs["pagerank"].keys()
    a = np.array([mine["pagerank"][k] for k in sorted(mine["pagerank"])])
    b = np.array([theirs["pagerank"][k] for k in sorted(theirs["pagerank"])])
    np.testing.assert_allclose(a, b, rtol=rel, atol=1e-15)


def fresh_graph(model: Model):
    fresh = graphdb.connect()
    fresh.ingest("g", model.table(), vertices=pa.table({"id": model.ids}),
                 undirected=not model.directed)
    return fresh


def scipy_answers(model: Model, source) -> dict:
    matrix = model.matrix()
    if not model.directed:
        matrix = matrix + matrix.T
    s = int(np.searchsorted(model.ids, source))
    depth = csgraph.shortest_path(matrix, unweighted=True, indices=s, directed=True)
    bfs = sorted((int(model.ids[v]), int(d)) for v, d in enumerate(depth) if np.isfinite(d))
    _, labels = csgraph.connected_components(matrix, directed=True, connection="weak")
    first = {}
    for v, label in enumerate(labels):  # each component by its smallest id
        first.setdefault(label, int(model.ids[v]))
    return {"bfs": bfs, "wcc": sorted((int(model.ids[v]), first[label])
                                      for v, label in enumerate(labels))}


def loaded(model: Model):
    """A connection to a new database holding ``model``'s graph as g, compacted only by
    CHECKPOINT."""
    con = graphdb.connect()
    con.ingest("g", model.table(), vertices=pa.table({"id": model.ids}),
               undirected=not model.directed)
    con.execute("SET compaction_threshold = 0")
    return con


def graph_of(con):
    """The executor's graph of g's current version, as operators read it."""
    return con.session.runner.graph(con.catalog.get("g"))


def versions(con, model: Model, rng, steps: int):
    """Write ``steps`` random writes (to the model too); yield (step, the graph after each)."""
    for step in range(steps):
        write_step(con, model, rng, step)
        yield step, graph_of(con)


def random_in_csr(rng, n, m, weighted=True):
    """An in-CSR with many equal (source, weight) entries in its rows, and deleted out-edges
    among its entries (some rows deleted from twice over): (in_off, sources, weights, u, v, w,
    skip), ``skip`` a bitmap of entries deleted before."""
    dst = np.sort(rng.integers(0, n, m))
    src = rng.integers(0, n // 4, m).astype(np.int32)  # few sources: equal entries in rows
    weights = rng.integers(1, 3, m).astype(np.float64) if weighted else None
    in_off = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(dst, minlength=n), out=in_off[1:])
    before = rng.choice(m, m // 10, replace=False)
    skip = np.zeros((m + 63) // 64, dtype=np.uint64)
    for p in before:
        skip[p >> 6] |= np.uint64(1) << np.uint64(p & 63)
    live = np.setdiff1d(np.arange(m), before)
    gone = rng.choice(live, len(live) // 3, replace=False)
    return (in_off, src, weights, src[gone].astype(np.int64), dst[gone],
            None if weights is None else weights[gone], skip)


def match_reference(in_off, src, weights, u, v, w, skip):
    """The positions a match takes: per (row, source, weight), the first live entries in
    stored order, as many as deletions of it."""
    want = {}
    for a, b, x in zip(v.tolist(), u.tolist(), (w if w is not None else [0] * len(u))):
        want[(a, b, float(x))] = want.get((a, b, float(x)), 0) + 1
    found = []
    for row in range(len(in_off) - 1):
        for p in range(in_off[row], in_off[row + 1]):
            if (int(skip[p >> 6]) >> (p & 63)) & 1:
                continue
            key = (row, int(src[p]), float(weights[p]) if weights is not None else 0.0)
            if want.get(key, 0):
                want[key] -= 1
                found.append(p)
    assert not any(want.values())
    return sorted(found)

"""ALL SHORTEST from the BFS DAG (one search for every start row, or from both ends of few
pairs) against a brute force over every walk, on random multigraphs with parallel edges, self
loops and masks of the edges, of the vertices a step leaves and of those it reaches."""

from __future__ import annotations

from collections import defaultdict

import numpy as np
import pytest

from graphdb.executor import path_search
from graphdb.executor.paths import TooManyPaths


class Stepper:
    """A hop's expansion over random edges in one direction (masks applied), and the brute
    force's view of the same steps: (from, to, edge) arcs."""

    def __init__(self, rng, n: int, m: int, masked: bool):
        self.n = n
        self.src = rng.integers(0, n, m)
        self.dst = rng.integers(0, n, m)
        self.keep_edge = rng.random(m) < (0.8 if masked else 1.0)
        self.leave = rng.random(n) < (0.85 if masked else 1.0)
        self.reach = rng.random(n) < (0.85 if masked else 1.0)

    def arcs(self, backwards: bool = False):
        out = []
        for e, (u, v) in enumerate(zip(self.src.tolist(), self.dst.tolist())):
            if self.keep_edge[e] and self.leave[u] and self.reach[v]:
                out.append((v, u, e) if backwards else (u, v, e))
        return out

    def expander(self, backwards: bool = False):
        by_vertex = defaultdict(list)
        for a, b, e in self.arcs(backwards):
            by_vertex[a].append((b, e))

        def step(vertices):
            idx, nbrs, edges = [], [], []
            for i, v in enumerate(vertices.tolist()):
                for b, e in by_vertex[v]:
                    idx.append(i)
                    nbrs.append(b)
                    edges.append(e)
            return (np.array(idx, dtype=np.int64), np.array(nbrs, dtype=np.int64),
                    np.array(edges, dtype=np.int64))

        return step


def brute(stepper: Stepper, source: int, low: int, high: int):
    """{end: sorted walks (vertices after the start, edges)} of the shortest walks of
    low..high edges from ``source``, from every walk."""
    by_vertex = defaultdict(list)
    for u, v, e in stepper.arcs():
        by_vertex[u].append((v, e))
    best: dict[int, list] = {}
    frontier = [(source, (), ())]  # (end, vertices after the start, edges)
    for length in range(high + 1):
        if length >= low:
            now = defaultdict(list)
            for end, vs, es in frontier:
                if end not in best:
                    now[end].append((vs, es))
            best.update(now)
        frontier = [(v, vs + (v,), es + (e,)) for end, vs, es in frontier
                    for v, e in by_vertex[end]]
    return {end: sorted(walks) for end, walks in best.items()}


def as_walks(found, rows, n):
    out = defaultdict(list)
    offsets = np.concatenate([[0], np.cumsum(found.length)])
    for i in range(found.row.size):
        vs = tuple(found.vertices[offsets[i]:offsets[i + 1]].tolist())
        es = tuple(found.edges[offsets[i]:offsets[i + 1]].tolist())
        out[(int(found.row[i]), int(found.end[i]))].append((vs, es))
    return {k: sorted(v) for k, v in out.items()}


@pytest.mark.parametrize("seed", range(60))
def test_shortest_walks_equal_brute_force(seed, monkeypatch):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 12))
    stepper = Stepper(rng, n, int(rng.integers(1, 4 * n)), masked=bool(seed % 2))
    start = rng.integers(0, n, int(rng.integers(1, 4)))
    low, high = int(rng.integers(0, 2)), int(rng.integers(1, 6))
    ends = rng.random(n) < 0.35 if seed % 3 else None
    expected = {}
    for row, s in enumerate(start.tolist()):
        for end, walks in brute(stepper, s, low, high).items():
            if ends is None or ends[end]:
                expected[(row, end)] = walks
    # both forms: a search from both ends where the pairs are few, one for all rows otherwise
    for pairs in (path_search.PAIRS_FROM_BOTH_ENDS, 0):
        monkeypatch.setattr(path_search, "PAIRS_FROM_BOTH_ENDS", pairs)
        found = path_search.search(
            stepper.expander(), stepper.expander(backwards=True), start, low, high, n, np,
            mode="all_shortest", ends=ends, limit=10**6, check=lambda: None,
            memory=lambda b, w: None)
        assert as_walks(found, start, n) == expected
        counted = path_search.search(
            stepper.expander(), stepper.expander(backwards=True), start, low, high, n, np,
            mode="all_shortest", ends=ends, want_walks=False, limit=10**6, check=lambda: None,
            memory=lambda b, w: None)
        got = defaultdict(int)
        for r, e in zip(counted.row.tolist(), counted.end.tolist()):
            got[(r, e)] += 1
        assert dict(got) == {k: len(v) for k, v in expected.items()}


def test_the_row_limit_refuses_before_building():
    # a ladder: 2^9 shortest walks from one end to the other
    src, dst = [], []
    for i in range(10):
        for a in (2 * i, 2 * i + 1):
            for b in (2 * i + 2, 2 * i + 3):
                src.append(a)
                dst.append(b)
    stepper = Stepper(np.random.default_rng(0), 22, 0, masked=False)
    stepper.src, stepper.dst = np.array(src), np.array(dst)
    stepper.keep_edge = np.ones(len(src), dtype=bool)
    ends = np.zeros(22, dtype=bool)
    ends[20] = True
    built = []

    def memory(nbytes, what):
        built.append(what)

    with pytest.raises(TooManyPaths, match="512 rows"):
        path_search.search(stepper.expander(), stepper.expander(backwards=True),
                           np.array([0]), 1, 30, 22, np, mode="all_shortest", ends=ends,
                           limit=511, check=lambda: None, memory=memory)
    assert not any(w.startswith("build") for w in built)
    found = path_search.search(stepper.expander(), stepper.expander(backwards=True),
                               np.array([0]), 1, 30, 22, np, mode="all_shortest", ends=ends,
                               limit=512, check=lambda: None, memory=memory)
    assert found.row.size == 512 and set(found.length.tolist()) == {10}


def every_walk(stepper: Stepper, source: int, low: int, high: int):
    """{end: [(vertices after the start, edges)]} of every walk of low..high edges."""
    by_vertex = defaultdict(list)
    for u, v, e in stepper.arcs():
        by_vertex[u].append((v, e))
    out = defaultdict(list)
    frontier = [(source, (), ())]
    for length in range(high + 1):
        if length >= low:
            for end, vs, es in frontier:
                out[end].append((vs, es))
        frontier = [(v, vs + (v,), es + (e,)) for end, vs, es in frontier
                    for v, e in by_vertex[end]]
    return out


@pytest.mark.parametrize("seed", range(60))
def test_any_k_walks_are_k_of_the_shortest(seed):
    """ANY k between few (start, end) pairs (walks counted by length from both ends): per
    pair, k distinct walks (fewer where fewer exist) whose lengths are the k smallest."""
    rng = np.random.default_rng(100 + seed)
    n = int(rng.integers(2, 10))
    stepper = Stepper(rng, n, int(rng.integers(1, 3 * n)), masked=bool(seed % 2))
    start = rng.integers(0, n, int(rng.integers(1, 3)))
    low, high = int(rng.integers(0, 2)), int(rng.integers(1, 6))
    k = int(rng.integers(1, 5))
    ends = np.zeros(n, dtype=bool)
    ends[rng.integers(0, n, int(rng.integers(1, 3)))] = True
    arcs = {(u, v, e) for u, v, e in stepper.arcs()}
    found = path_search.search(stepper.expander(), stepper.expander(backwards=True), start, low,
                               high, n, np, mode="any", k=k, ends=ends, limit=10**6,
                               check=lambda: None, memory=lambda b, w: None)
    got = as_walks(found, start, n)
    for row, s in enumerate(start.tolist()):
        walks = every_walk(stepper, s, low, high)
        for end in np.flatnonzero(ends).tolist():
            lengths = sorted(len(vs) for vs, _ in walks.get(end, []))[:k]
            mine = got.get((row, end), [])
            assert sorted(len(vs) for vs, _ in mine) == lengths, (row, end)
            assert len(set(mine)) == len(mine)  # distinct walks
            for vs, es in mine:  # each a walk from s to end over the allowed steps
                frm = (s,) + vs[:-1]
                assert all((u, v, e) in arcs for u, v, e in zip(frm, vs, es))
                assert (vs[-1] if vs else s) == end
    counted = path_search.search(stepper.expander(), stepper.expander(backwards=True), start,
                                 low, high, n, np, mode="any", k=k, ends=ends,
                                 want_walks=False, limit=10**6, check=lambda: None,
                                 memory=lambda b, w: None)
    assert sorted(zip(counted.row.tolist(), counted.end.tolist())) == sorted(
        zip(found.row.tolist(), found.end.tolist()))


def test_any_k_ends_where_walks_only_circle_away_from_the_end():
    """A cycle reachable from the start that never leads to the end: the search for more
    walks than exist stops (it continues only through vertices between the two ends)."""
    stepper = Stepper(np.random.default_rng(0), 5, 0, masked=False)
    # 0 -> 1 (the only walk to 1), 0 -> 2 -> 3 -> 2 ... (a cycle away from 1)
    stepper.src, stepper.dst = np.array([0, 0, 2, 3]), np.array([1, 2, 3, 2])
    stepper.keep_edge = np.ones(4, dtype=bool)
    ends = np.zeros(5, dtype=bool)
    ends[1] = True
    found = path_search.search(stepper.expander(), stepper.expander(backwards=True),
                               np.array([0]), 1, 10**6, 5, np, mode="any", k=3, ends=ends,
                               limit=10**6, check=lambda: None, memory=lambda b, w: None)
    assert found.row.tolist() == [0] and found.length.tolist() == [1]

"""Changed graph versions read unmerged (executor/overlay.py, operators/adjacency.py): BFS,
PageRank and WCC over base + delta answer what a fresh ingest of the changed graph answers,
what scipy answers, and what the same graph answers once compacted; the states carried over
from version to version equal states built from scratch; the merged arrays built from a state
are the catalog's merge (out) or the same rows (in); versions whose vertices no longer keep
the base's order fall back to the whole merge.

The graphs have thousands of edges so the compiled kernels run (tiny work would run their
Python source; a test below runs both on the same rows).
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

import graphdb
from graphdb.catalog import CorruptGraph
from graphdb.executor import overlay
from graphdb.executor.algorithms.bfs import cpu as bfs_cpu
from graphdb.executor.delta import DeltaGraph

from .overlay_cases import (
    Model,
    answers,
    fresh_graph,
    graph_of,
    loaded,
    same_answers,
    scipy_answers,
    versions,
    write_step,
)


# undirected unmerged versions against a fresh ingest: tests/graphdb/test_writes_random.py's
# TestUndirected, in the default run
@pytest.mark.parametrize("directed", [True, pytest.param(False, marks=pytest.mark.slow)])
def test_unmerged_versions_answer_as_fresh_ingest_scipy_and_compacted(directed):
    rng = np.random.default_rng(7 if directed else 8)
    model = Model(rng, directed)
    with loaded(model) as con:
        source = int(model.src[0])
        for step in range(10):
            write_step(con, model, rng, step)
            if step % 3 == 2:
                continue  # the next version carries over two writes at once
            graph = graph_of(con)
            assert isinstance(graph, DeltaGraph) and graph.version_delta() is not None
            mine = answers(con, source)
            with fresh_graph(model) as fresh:
                same_answers(mine, answers(fresh, source))
            reference = scipy_answers(model, source)
            assert mine["bfs"] == reference["bfs"] and mine["wcc"] == reference["wcc"]
        before = answers(con, source)
        con.execute("CHECKPOINT g")
        assert not con.catalog.get("g").changed
        same_answers(before, answers(con, source))


@pytest.mark.parametrize("directed", [True, False])
def test_merged_arrays_from_the_state_are_the_catalogs_merge(directed):
    rng = np.random.default_rng(3)
    model = Model(rng, directed)
    with loaded(model) as con:
        for step in range(4):
            write_step(con, model, rng, step)
        graph = graph_of(con)
        assert graph.version_delta() is not None
        for direction in ("out", "in") if directed else ("out",):
            mine = graph.csr(direction, weights=True)
            theirs = con.catalog.read_csr(graph.entry, direction, weights=True)
            # the same order (g.edges' rows and properties rely on it for the out-CSR; the
            # in-CSR deletes the same stored entries as the catalog's match)
            np.testing.assert_array_equal(mine.offsets, theirs.offsets)
            np.testing.assert_array_equal(mine.targets, theirs.targets)
            np.testing.assert_array_equal(mine.weights, theirs.weights)
            assert np.array_equal(np.diff(mine.offsets), graph.version_delta().out_degree
                                  if direction == "out" else graph.version_delta().in_degree)


def test_states_carried_over_equal_states_built_from_scratch():
    rng = np.random.default_rng(11)
    model = Model(rng, True)
    with loaded(model) as con:
        for _step, graph in versions(con, model, rng, 8):
            carried = graph.version_delta()  # from the previous step's state
            graph.residency.forget(graph.key)
            graph.residency.forget(graph.base.key, prefix="overlay:chain")
            scratch = graph_of(con).version_delta()
            assert carried is not scratch
            for name in ("positions", "out_degree", "in_degree", "tomb", "in_tomb"):
                a, b = getattr(carried, name), getattr(scratch, name)
                assert (a is None) == (b is None), name
                if a is not None:
                    np.testing.assert_array_equal(a, b)
            for direction in ("out", "in"):
                a, b = carried.rows(direction), scratch.rows(direction)
                for name in ("offsets", "targets", "weights", "edges"):
                    np.testing.assert_array_equal(getattr(a, name), getattr(b, name))
            assert (carried.num_vertices, carried.num_edges) == \
                (scratch.num_vertices, scratch.num_edges)


def test_compiled_kernels_and_their_python_source_agree_on_a_version():
    rng = np.random.default_rng(5)
    model = Model(rng, True, n=300, m=2000)
    with loaded(model) as con:
        for step in range(5):
            write_step(con, model, rng, step)
        graph = graph_of(con)
        out, inn = graph.adjacency("out"), graph.adjacency("in")
        assert out.tomb.size and out.dtargets.size and inn.tomb.size
        results = []
        for kernels in (bfs_cpu.KERNELS.load(), bfs_cpu.KERNELS.python):
            n = graph.num_vertices
            queue, depth = np.empty(n, np.int32), np.empty(n, np.int32)
            visited = np.zeros((n + 63) // 64, dtype=np.uint64)
            source = int(model.src[0])
            visited[source >> 6] = np.uint64(1) << np.uint64(source & 63)
            queue[0], depth[0] = source, 0
            state = np.array([0, 1, 0, graph.num_edges, 1, 0], dtype=np.int64)
            # bottom-up from the first level of two vertices on
            kernels.bfs_kernel(out, inn, True, visited, queue, depth, state, n, 10**9, n)
            reached = int(state[1])
            results.append(dict(zip(queue[:reached].tolist(), depth[:reached].tolist())))
            assert state[5] > 0  # levels ran bottom-up, over the in-edges
        assert results[0] == results[1]


def test_a_deleted_vertex_falls_back_to_the_whole_merge():
    rng = np.random.default_rng(9)
    model = Model(rng, True)
    with loaded(model) as con:
        write_step(con, model, rng, 0)
        v = int(model.ids[5])
        con.execute("DETACH DELETE FROM g.vertices WHERE id = ?", [v])
        model.keep((model.src != v) & (model.dst != v))
        model.ids = model.ids[model.ids != v]
        graph = graph_of(con)
        assert graph.version_delta() is None and graph.adjacency("out") is None
        assert graph.new_ids() is None  # the log knows it without building a state
        source = int(model.src[0])
        with fresh_graph(model) as fresh:
            same_answers(answers(con, source), answers(fresh, source))


def test_a_new_id_sorting_among_the_base_falls_back():
    with graphdb.connect() as con:
        con.ingest("g", pa.table({"src": [10, 20, 30], "dst": [20, 30, 10]}))
        con.execute("INSERT INTO g.edges VALUES (40, 10)")  # after the base: kept unmerged
        graph = graph_of(con)
        assert graph.version_delta() is not None
        assert graph.new_ids().to_pylist() == [40]
        con.execute("INSERT INTO g.edges VALUES (35, 40)")  # before the newer 40
        graph = graph_of(con)
        assert graph.new_ids() is None and graph.version_delta() is None
        assert sorted(con.execute("SELECT vertex, depth FROM bfs(g, 35)").fetchall()) == \
            [(10, 2), (20, 3), (30, 4), (35, 0), (40, 1)]
        con.execute("CHECKPOINT g")
        con.execute("INSERT INTO g.edges VALUES (15, 10)")  # among the base's ids
        graph = graph_of(con)
        assert graph.version_delta() is None
        assert sorted(con.execute("SELECT vertex, depth FROM bfs(g, 15)").fetchall()) == \
            [(10, 1), (15, 0), (20, 2), (30, 3)]


def test_a_state_that_does_not_fit_its_records_is_refused():
    base = overlay.BaseArrays(3, 2, True, False, np.dtype(np.int32), np.array([0, 1, 2, 2]),
                              np.array([1, 2], dtype=np.int32), np.array([0, 0, 1, 2]))
    start = overlay.empty_delta(base, overlay.HostOps)
    twice = _changes(edge_deletes=np.array([0, 0]))
    with pytest.raises(CorruptGraph, match="twice"):
        overlay.advance(start, twice, 1, base, overlay.HostOps, "records")
    missing = _changes(edge_deletes=np.array([-1]), deleted_src=np.array([0]),
                       deleted_dst=np.array([1]))
    with pytest.raises(CorruptGraph, match="not there"):
        overlay.advance(start, missing, 1, base, overlay.HostOps, "records")
    outside = _changes(src=np.array([0]), dst=np.array([7]))
    with pytest.raises(CorruptGraph, match="does not exist"):
        overlay.advance(start, outside, 1, base, overlay.HostOps, "records")


def _changes(**given):
    from graphdb.catalog.delta import LogChanges

    empty = np.zeros(0, dtype=np.int64)
    fields = dict(vertex_ranks=empty, vertex_ids=pa.array([], pa.int64()), first_edge=0,
                  src=empty, dst=empty, weights=None, edge_deletes=empty, deleted_src=empty,
                  deleted_dst=empty, vertex_deletes=empty)
    fields.update(given)
    return LogChanges(**fields)


def test_versions_read_the_stored_in_csr_without_the_deleted_entries():
    """Inserts, then deletes, since the base (here a compacted one, whose rows are not
    sorted): the in-edges are always the stored in-CSR, a deleted edge's entry matched there
    (no transposition of the base); the state carries the in-bitmap from version to version.
    Every answer is a fresh ingest's and scipy's, the merged in-CSR the catalog's merge."""
    rng = np.random.default_rng(31)
    model = Model(rng, True)
    with loaded(model) as con:
        source = int(model.src[0])
        write_step(con, model, rng, 0)
        con.execute("CHECKPOINT g")
        for step in (0, 2, 1, 2):  # inserts (a batch, single rows), then a delete
            write_step(con, model, rng, step)
            graph = graph_of(con)
            deletes = len(graph.version_delta().positions) > 0
            mine = answers(con, source)
            assert not [e for e in graph.residency.entries() if "transpose" in e[2]]
            in_tomb = graph.in_tombstones()
            assert (in_tomb is not None) == deletes, step
            if deletes:
                assert int(sum(bin(int(x)).count("1") for x in in_tomb)) == \
                    len(graph.version_delta().positions)
            with fresh_graph(model) as fresh:
                same_answers(mine, answers(fresh, source))
            reference = scipy_answers(model, source)
            assert mine["bfs"] == reference["bfs"] and mine["wcc"] == reference["wcc"]
            merged = graph.csr("in", weights=True)
            theirs = con.catalog.read_csr(graph.entry, "in", weights=True)
            np.testing.assert_array_equal(merged.targets, theirs.targets)
            np.testing.assert_array_equal(merged.weights, theirs.weights)
            with fresh_graph(model) as fresh:
                want = graph_of(fresh).csr("in", weights=True)
                np.testing.assert_array_equal(merged.offsets, want.offsets)
                for row in rng.choice(len(want.offsets) - 1, 50):
                    a, b = slice(*want.offsets[row:row + 2]), slice(*merged.offsets[row:row + 2])
                    assert sorted(zip(merged.targets[b], merged.weights[b])) == \
                        sorted(zip(want.targets[a], want.weights[a]))


@pytest.mark.parametrize("directed", [True, False])
def test_neighbors_after_a_write_read_the_row_without_merging(directed):
    rng = np.random.default_rng(41)
    model = Model(rng, directed)
    with loaded(model) as con:
        for step, graph in versions(con, model, rng, 5):
            v = int(model.src[step])
            got = {d: sorted(r[0] for r in con.execute(
                f"SELECT neighbor FROM neighbors(g, {v}, direction => '{d}')").fetchall())
                for d in ("out", "in", "both")}
            for name in ("out_targets", "in_targets"):  # no merged array was built
                assert graph.residency.peek(graph.key, "cpu", f"array:{name}") is None
            out = sorted(model.dst[model.src == v].tolist())
            inn = sorted(model.src[model.dst == v].tolist())
            if directed:
                assert got == {"out": out, "in": inn, "both": sorted(out + inn)}
            else:  # an undirected edge is one neighbour relation (a self-loop once)
                both = sorted(out + [u for u in inn if u != v])
                assert got["out"] == got["in"] == got["both"] == both


def test_a_weighted_match_reads_weights_only_where_a_parallel_edge_stays():
    """A deleted edge's in-entry is found by its source alone while every live parallel edge
    of it goes too (no weight read: BFS after such a delete leaves the base's weights
    unread); a delete that keeps some of a pair's parallel edges (here by weight) is matched
    by weight. Either way the merged in-CSR holds a fresh ingest's (source, weight) entries
    in every row, and the answers are a fresh ingest's."""
    rng = np.random.default_rng(7)
    model = Model(rng, True, n=40, m=3000)  # about two parallel edges per pair
    with loaded(model) as con:
        source = int(model.src[0])
        con.execute("CHECKPOINT g")  # a base read from storage: nothing resident yet
        for where, keep in (("(src * 7 + dst) % 5 = 0", lambda: (model.src * 7 + model.dst)
                             % 5 != 0),
                            ("weight = 3", lambda: model.weight != 3)):
            con.execute(f"DELETE FROM g.edges WHERE {where}")
            model.keep(keep())
            graph = graph_of(con)
            con.execute(f"SELECT count(*) FROM bfs(g, {source})").fetchall()
            held = graph.residency.peek(graph.base.key, "cpu", "array:in_weights") is not None
            assert held == (where == "weight = 3"), where
            with fresh_graph(model) as fresh:
                same_answers(answers(con, source), answers(fresh, source))
                want = graph_of(fresh).csr("in", weights=True)
            merged = graph.csr("in", weights=True)
            np.testing.assert_array_equal(merged.offsets, want.offsets)
            for row in range(len(want.offsets) - 1):
                a, b = slice(*want.offsets[row:row + 2]), slice(*merged.offsets[row:row + 2])
                assert sorted(zip(merged.targets[b], merged.weights[b])) == \
                    sorted(zip(want.targets[a], want.weights[a])), (where, row)

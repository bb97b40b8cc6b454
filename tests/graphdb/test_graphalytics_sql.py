"""Every LDBC Graphalytics validation case, loaded with the public ingest and run through SQL,
under every device present and every kind of variant: the one Graphalytics harness.

Inputs given as .v/.e files are ingested as they are; adjacency inputs (``v n1 n2 ...``) are
written out as the edge and vertex files a user would have, then ingested the same way. Each
case then runs with the cost model's choice, and with every graph operator forced onto its
streamed variants (Subway, edge chunks) and onto page streaming (``SET debug_variant``, which
also cuts the budget so that they stream in several pieces), on the CPU and, where there is
one, on the GPU.
"""

from __future__ import annotations

import numpy as np
import pytest

import graphdb
from tests.graphalytics import CASES, DATA_DIR, compare, load_input

#: (device, debug_variant) of every run of the cases
MODES = [pytest.param(device, variant, id=f"{device}-{variant}",
                      marks=[pytest.mark.gpu] if device == "gpu" else [])
         for device in ("cpu", "gpu")
         for variant in ("auto", "streamed", "pages", "partitioned")]
#: Ranks of the 'partitioned' mode: simulated in the process (debug_ranks).
RANKS = 3


def _sql_literal(value) -> str:
    return repr(value) if not isinstance(value, str) else "'" + value.replace("'", "''") + "'"


@pytest.fixture(scope="module")
def loaded(tmp_path_factory):
    """A database holding every case's input graph, loaded once: (connection, case -> graph)."""
    tmp = tmp_path_factory.mktemp("graphalytics")
    with graphdb.connect(tmp / "db", device="cpu") as con:
        names = {}
        for case in CASES:
            name = "g_" + "".join(c if c.isalnum() else "_" for c in case.name)
            if len(case.inputs) == 2:
                vertices, edges = (DATA_DIR / p for p in case.inputs)
            else:
                graph = load_input(case)
                vertices, edges = tmp / f"{name}.v", tmp / f"{name}.e"
                np.savetxt(vertices, graph.vertices, fmt="%d")
                np.savetxt(edges, np.column_stack([graph.src, graph.dst]), fmt="%d")
            con.ingest(name, edges, vertices=str(vertices), undirected=not case.directed)
            names[case.name] = name
        yield con, names


def _run(con, graph: str, case) -> dict:
    args = "".join(f", {k} => {_sql_literal(v)}" for k, v in case.params.items())
    rows = con.execute(f"SELECT vertex, {case.value_column} FROM {case.algorithm}({graph}{args})"
                       ).fetchall()
    actual = dict(rows)
    assert len(actual) == len(rows), "a vertex reported twice"
    return actual


def test_every_case_of_the_suite_is_listed():
    listed = {f for case in CASES for f in (*case.inputs, case.expected)}
    on_disk = {str(p.relative_to(DATA_DIR)) for p in DATA_DIR.rglob("*")
               if p.is_file() and p.suffix != ".md"}
    assert on_disk == listed
    assert len(CASES) == 24


@pytest.mark.parametrize("device,variant", MODES)
@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_case(loaded, case, device, variant):
    con, names = loaded
    con.execute(f"SET device = '{device}'")
    con.execute(f"SET debug_variant = '{variant}'")
    if variant == "partitioned":
        con.execute(f"SET debug_ranks = {RANKS}")
    try:
        problems = compare(case, _run(con, names[case.name], case))
    finally:
        con.execute("RESET ALL")
    assert not problems, f"{case.name} ({device}, {variant}): " + "; ".join(problems)


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_comparison_rejects_a_wrong_output(loaded, case):
    """The rules must catch a changed value, else the cases above could never fail."""
    con, names = loaded
    actual = _run(con, names[case.name], case)
    victim = max(actual)
    wrong = dict(actual)
    if case.rule == "equivalence":
        alone = sum(label == actual[victim] for label in actual.values()) == 1
        wrong[victim] = actual[min(actual)] if alone else -1  # merge it, or split it off
        assert compare(case, wrong)
        return
    wrong[victim] = actual[victim] * 1.01 + 1
    assert compare(case, wrong)
    del wrong[victim]
    if case.algorithm not in ("bfs", "sssp"):
        assert compare(case, wrong), "a missing vertex must be reported"


def test_vertices_without_edges_are_kept(loaded):
    """Vertices listed only in the .v file are in the graph (PageRank reports every vertex)."""
    con, names = loaded
    graph = names["example-directed-pagerank"]
    n_vertices = len((DATA_DIR / "example" / "example-directed.v").read_text().split())
    assert len(con.execute(f"SELECT * FROM pagerank({graph})").fetchall()) == n_vertices

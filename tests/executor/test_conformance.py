"""Every LDBC Graphalytics validation case, run at the executor level on the CPU.

User ids are mapped to dense internal ids in ascending order, as the catalog does, and the
output's vertex columns are mapped back before comparing under the case's rule.
"""

from __future__ import annotations

import numpy as np
import pytest

from graphdb.executor.algorithms import REGISTRY
from graphdb.executor.graph import Graph
from tests.executor.support import run_cpu
from tests.graphalytics import CASES, Case, compare, load_input


def _run_case(case: Case) -> dict[int, float]:
    data = load_input(case)
    ids = data.vertices  # sorted: internal id i is the i-th smallest user id
    graph = Graph.from_edges(
        np.searchsorted(ids, data.src),
        np.searchsorted(ids, data.dst),
        len(ids),
        directed=data.directed,
        weights=data.weights,
        name=case.name,
    )
    options = dict(case.params)
    if "source" in options:
        options["source"] = int(np.searchsorted(ids, options["source"]))
    columns = run_cpu(case.algorithm, graph, **options)
    algorithm = REGISTRY[case.algorithm]
    for column in algorithm.columns:
        if column.vertex:
            columns[column.name] = ids[columns[column.name]]
    return dict(zip(columns["vertex"].tolist(), columns[case.value_column].tolist()))


def test_every_case_of_the_suite_is_listed():
    listed = {f for case in CASES for f in (*case.inputs, case.expected)}
    from tests.graphalytics import DATA_DIR

    on_disk = {
        str(p.relative_to(DATA_DIR))
        for p in DATA_DIR.rglob("*")
        if p.is_file() and p.suffix != ".md"
    }
    assert on_disk == listed
    assert len(CASES) == 24


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_graphalytics_case(case: Case):
    problems = compare(case, _run_case(case))
    assert not problems, f"{case.name}: " + "; ".join(problems)


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_comparison_rejects_a_wrong_output(case: Case):
    """The rules must catch a changed value, else the case above could never fail."""
    actual = _run_case(case)
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

"""The LDBC Graphalytics validation cases as data, their input parsers and validation rules.

Shared by the executor-level conformance test (``tests/executor/test_conformance.py``) and the
SQL-level one, so it depends on numpy only, never on the engine. The files live in
``tests/data/graphalytics`` (see its NOTICE.md for source and license).

Each :class:`Case` names the algorithm with its SQL-facing name and parameters (source vertices
are the user's vertex ids from the files), the input files, the expected output file and the
rule that compares an output with it:

- ``exact``: equal values; for BFS an unreachable vertex is 9223372036854775807 in the file.
- ``relative``: relative error at most 1e-4; for SSSP an unreachable vertex is ``Infinity``.
- ``equivalence``: the same partition of the vertices, whatever the labels.

For BFS and SSSP an implementation may leave unreachable vertices out of its output (the
engine does); :func:`compare` treats a missing vertex as unreachable for those two algorithms.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

__all__ = [
    "CASES",
    "DATA_DIR",
    "RELATIVE_TOLERANCE",
    "UNREACHABLE_DEPTH",
    "VALUE_COLUMNS",
    "Case",
    "GraphInput",
    "compare",
    "load_expected",
    "load_input",
]

DATA_DIR = Path(__file__).resolve().parent / "data" / "graphalytics"

#: Graphalytics' marker for a vertex that BFS cannot reach (Long.MAX_VALUE).
UNREACHABLE_DEPTH = 9223372036854775807
RELATIVE_TOLERANCE = 1e-4

#: Validation rule of each algorithm (from the benchmark's validation tests).
RULES = {
    "bfs": "exact",
    "cdlp": "exact",
    "pagerank": "relative",
    "sssp": "relative",
    "lcc": "relative",
    "wcc": "equivalence",
}
#: The output column (of the SQL table function) that holds each algorithm's value.
VALUE_COLUMNS = {
    "bfs": "depth",
    "cdlp": "label",
    "pagerank": "rank",
    "sssp": "distance",
    "lcc": "coefficient",
    "wcc": "component",
}
#: Algorithms whose outputs report reachable vertices only.
REACHABILITY = ("bfs", "sssp")


@dataclass(frozen=True)
class Case:
    """One validation case: run ``algorithm(graph, **params)`` and compare with ``expected``."""

    name: str
    algorithm: str
    directed: bool
    inputs: tuple[str, ...]  # paths under DATA_DIR: one adjacency file, or a .v and a .e file
    expected: str  # path under DATA_DIR
    params: dict[str, Any] = field(default_factory=dict)

    @property
    def rule(self) -> str:
        return RULES[self.algorithm]

    @property
    def value_column(self) -> str:
        return VALUE_COLUMNS[self.algorithm]

    @property
    def weighted(self) -> bool:
        return any(p.endswith(".e") for p in self.inputs)


@dataclass(frozen=True)
class GraphInput:
    """A parsed input graph in the user's ids; ``vertices`` sorted ascending."""

    vertices: np.ndarray  # int64
    src: np.ndarray  # int64, user ids
    dst: np.ndarray  # int64, user ids
    weights: np.ndarray | None  # float64 or None
    directed: bool


def _inputs(algorithm: str, adjacency: str, stem: str) -> tuple[str, ...]:
    """SSSP reads the weighted ``stem.v``/``stem.e`` pair; the others the adjacency file."""
    return (f"{stem}.v", f"{stem}.e") if algorithm == "sssp" else (adjacency,)


def _cases() -> tuple[Case, ...]:
    cases: list[Case] = []
    # (algorithm, folder, parameters for the dir/undir validation graphs)
    folders = {
        "bfs": ("bfs", {"dir": {"source": 1}, "undir": {"source": 1}}),
        "cdlp": ("cdlp", {"dir": {"max_iterations": 5}, "undir": {"max_iterations": 5}}),
        "lcc": ("lcc", {"dir": {}, "undir": {}}),
        "pagerank": (
            "pr",
            {
                "dir": {"damping": 0.85, "max_iterations": 14},
                "undir": {"damping": 0.85, "max_iterations": 26},
            },
        ),
        "sssp": ("sssp", {"dir": {"source": 1}, "undir": {"source": 1}}),
        "wcc": ("wcc", {"dir": {}, "undir": {}}),
    }
    for algorithm, (folder, by_kind) in folders.items():
        for kind, params in by_kind.items():
            cases.append(
                Case(
                    f"{folder}-{kind}",
                    algorithm,
                    kind == "dir",
                    _inputs(algorithm, f"{folder}/{kind}-input", f"{folder}/{kind}-input"),
                    f"{folder}/{kind}-output",
                    dict(params),
                )
            )
    # The example graphs: one output file per algorithm; sources differ per graph.
    suffix = {
        "bfs": "BFS",
        "cdlp": "CDLP",
        "lcc": "LCC",
        "pagerank": "PR",
        "sssp": "SSSP",
        "wcc": "WCC",
    }
    for kind, source in (("directed", 1), ("undirected", 2)):
        example_params = {
            "bfs": {"source": source},
            "cdlp": {"max_iterations": 2},
            "lcc": {},
            "pagerank": {"damping": 0.85, "max_iterations": 2},
            "sssp": {"source": source},
            "wcc": {},
        }
        for algorithm, params in example_params.items():
            cases.append(
                Case(
                    f"example-{kind}-{algorithm}",
                    algorithm,
                    kind == "directed",
                    _inputs(algorithm, f"example/example-{kind}-input", f"example/example-{kind}"),
                    f"example/example-{kind}-{suffix[algorithm]}",
                    dict(params),
                )
            )
    return tuple(cases)


CASES: tuple[Case, ...] = _cases()


def _lines(path: str) -> list[list[str]]:
    text = (DATA_DIR / path).read_text()
    return [line.split() for line in text.splitlines() if line.strip()]


def load_input(case: Case) -> GraphInput:
    """Parse a case's input files into user-id edge arrays.

    Adjacency files (``v n1 n2 ...``) of undirected graphs list every edge under both ends; the
    edge is kept once. ``.v``/``.e`` files list vertices, and edges (``src dst [weight]``) once.
    """
    if len(case.inputs) == 2:
        vertex_file, edge_file = case.inputs
        vertices = np.array([int(r[0]) for r in _lines(vertex_file)], dtype=np.int64)
        rows = _lines(edge_file)
        src = np.array([int(r[0]) for r in rows], dtype=np.int64)
        dst = np.array([int(r[1]) for r in rows], dtype=np.int64)
        weights = np.array([float(r[2]) for r in rows]) if rows and len(rows[0]) > 2 else None
    else:
        rows = _lines(case.inputs[0])
        heads = [int(r[0]) for r in rows]
        pairs = [(int(r[0]), int(n)) for r in rows for n in r[1:]]
        src = np.array([p[0] for p in pairs], dtype=np.int64)
        dst = np.array([p[1] for p in pairs], dtype=np.int64)
        vertices = np.array(heads, dtype=np.int64)
        weights = None
        if not case.directed and src.size:
            lo, hi = np.minimum(src, dst), np.maximum(src, dst)
            unique = np.unique(np.stack([lo, hi], axis=1), axis=0)
            src, dst = unique[:, 0], unique[:, 1]
    vertices = np.union1d(vertices, np.concatenate([src, dst]))  # sorted, distinct
    return GraphInput(vertices, src, dst, weights, case.directed)


def load_expected(case: Case) -> dict[int, float | int]:
    """Expected value per user vertex id (ints for ``exact`` rules, floats otherwise)."""
    parse = int if case.rule == "exact" or case.rule == "equivalence" else float
    return {int(r[0]): parse(r[1]) for r in _lines(case.expected)}


def _unreachable(case: Case) -> float | int:
    return UNREACHABLE_DEPTH if case.algorithm == "bfs" else math.inf


def compare(case: Case, actual: dict[int, float | int]) -> list[str]:
    """Mismatches between ``actual`` (user vertex id -> value) and the expected output.

    An empty list means the case passes under its rule.
    """
    expected = load_expected(case)
    problems: list[str] = []
    actual = dict(actual)
    if case.algorithm in REACHABILITY:
        for v in expected:
            actual.setdefault(v, _unreachable(case))
    extra = sorted(set(actual) - set(expected))
    missing = sorted(set(expected) - set(actual))
    if extra:
        problems.append(f"unexpected vertices {extra[:10]}")
    if missing:
        problems.append(f"missing vertices {missing[:10]}")
    common = sorted(set(expected) & set(actual))
    if case.rule == "equivalence":
        forward: dict[Any, Any] = {}
        backward: dict[Any, Any] = {}
        for v in common:
            e, a = expected[v], actual[v]
            if forward.setdefault(e, a) != a or backward.setdefault(a, e) != e:
                problems.append(f"vertex {v}: component {a} does not match expected partition")
        return problems
    for v in common:
        e, a = expected[v], actual[v]
        if case.rule == "exact":
            ok = int(a) == int(e)
        elif math.isinf(e) or math.isinf(a):
            ok = e == a
        else:
            ok = a == e or abs(a - e) <= RELATIVE_TOLERANCE * abs(e)
        if not ok:
            problems.append(f"vertex {v}: expected {e!r}, got {a!r}")
    return problems

"""Integers at the edges of every argument: an answer or graphdb's own error, never a raw one.

Hypothesis feeds 0, ±1, the edges of 32, 53, 63 and 64 bits, and far beyond, to every
parameter of every graph function (SQL and the Python handle, taken from the registry, so a
new function is covered when it is registered), to SQL parameters, LIMIT, OFFSET and pattern
quantifiers, to every setting, to connect()'s and ingest()'s options, and to INSERT values. The
property: the call returns, or raises a ``graphdb.Error`` that is not an InternalError. (The
audit found ``INSERT ... VALUES (18446744073709551616)`` raising OverflowError, and
``connect(gpus=2**63)`` a MemoryError.)
"""

from __future__ import annotations

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import graphdb
from graphdb.executor.algorithms import REGISTRY
from graphdb.executor.algorithms.spec import REQUIRED

EDGES = [0, 1, -1, 2, 3, 2**31 - 1, 2**31, -2**31, -2**31 - 1, 2**32, 2**53 + 1, 2**63 - 1,
         2**63, -2**63, -2**63 - 1, 2**64, -2**64, 10**30, 10**40, -10**40]
INTEGERS = st.one_of(st.sampled_from(EDGES), st.integers(-2**70, 2**70))
SETTINGS = ["threads", "memory_limit", "buffer_pool_size", "host_memory_limit", "gpus",
            "debug_ranks", "max_path_rows", "compaction_threshold", "device", "debug_variant"]
FAST = settings(max_examples=60, deadline=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture,
                                       HealthCheck.too_slow])


@pytest.fixture(scope="module")
def con():
    with graphdb.connect() as connection:
        connection.ingest("g", pa.table({"src": [1, 2, 3, 1, 4], "dst": [2, 3, 4, 4, 1],
                                         "weight": [1.0, 2.0, 1.5, 5.0, 0.5]}))
        connection.ingest("s", pa.table({"src": ["a", "b"], "dst": ["b", "c"]}))
        yield connection


def _answers_or_refuses(call) -> None:
    try:
        result = call()
        if hasattr(result, "fetchall"):
            result.fetchall()
    except graphdb.Error as exc:
        assert not isinstance(exc, graphdb.InternalError), exc


def _valid(param, graph: str) -> str:
    if param.kind == "vertex":
        return "1" if graph == "g" else "'a'"
    if param.default is not REQUIRED:
        return repr(param.default)
    return "1"


CALLS = [(name, param) for name, spec in sorted(REGISTRY.items()) for param in spec.params]


@FAST
@given(call=st.sampled_from(CALLS), value=INTEGERS, graph=st.sampled_from(["g", "s"]))
def test_every_graph_function_argument(con, call, value, graph):
    name, chosen = call
    spec = REGISTRY[name]
    positional, keywords = [], []
    for param in spec.params:
        text = str(value) if param is chosen else _valid(param, graph)
        if param.default is REQUIRED:
            positional.append(text)
        elif param is chosen:
            keywords.append(f"{param.name} => {text}")
    sql = f"SELECT * FROM {name}({', '.join([graph] + positional + keywords)})"
    _answers_or_refuses(lambda: con.execute(sql))
    handle = getattr(con.graph(graph), name, None)
    if handle is not None:
        kwargs = {p.name: (value if p is chosen else 1 if p.kind == "vertex" and graph == "g"
                           else "a" if p.kind == "vertex" else 1)
                  for p in spec.params if p is chosen or p.default is REQUIRED}
        _answers_or_refuses(lambda: handle(**kwargs))


@FAST
@given(value=INTEGERS, which=st.integers(0, 9))
def test_sql_positions_parameters_and_writes(con, value, which):
    statements = [
        (f"SELECT * FROM g.edges LIMIT {value}", None),
        (f"SELECT * FROM g.edges LIMIT 1 OFFSET {value}", None),
        ("SELECT count(*) FROM GRAPH_TABLE (g MATCH (a)-[]->{1," + str(value) + "}(b) "
         "COLUMNS (a.id AS x))", None),
        ("SELECT * FROM bfs(g, ?)", [value]),
        ("SELECT * FROM g.edges WHERE src = ?", [value]),
        ("SELECT $x + 1", {"x": value}),
        (f"INSERT INTO g.edges VALUES ({value}, 1, 1.0)", None),
        ("INSERT INTO g.edges VALUES (?, ?, ?)", [1, value, 1.0]),
        (f"INSERT INTO g.edges VALUES (1, 2, {value})", None),
        (f"DELETE FROM g.edges WHERE src = {value} AND dst = -7", None),
    ]
    sql, parameters = statements[which]
    _answers_or_refuses(lambda: con.execute(sql, parameters))
    _answers_or_refuses(lambda: con.executemany("INSERT INTO g.edges VALUES (?, ?, ?)",
                                                [[9, 9, 1.0], [value, 9, 1.0]]))


@FAST
@given(name=st.sampled_from(SETTINGS), value=INTEGERS)
def test_every_setting(con, name, value):
    _answers_or_refuses(lambda: con.execute(f"SET {name} = {value}"))
    con.execute(f"RESET {name}")


@FAST
@given(option=st.sampled_from(["memory_limit", "buffer_pool_size", "page_size", "mode",
                               "gpus", "cluster_timeout"]), value=INTEGERS)
def test_every_connect_option(option, value):
    def call():
        graphdb.connect(**{option: value}).close()

    _answers_or_refuses(call)


@FAST
@given(option=st.sampled_from(["memory_limit", "weight", "src", "dst"]), value=INTEGERS)
def test_every_ingest_option(con, option, value):
    table = pa.table({"src": [1, 2], "dst": [2, 3], "weight": [1.0, 2.0]})
    _answers_or_refuses(lambda: con.ingest("x", table, replace=True, **{option: value}))

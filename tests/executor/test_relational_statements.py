"""The relational engine keeps the DuckDB relation of a query it ran (executor.relational): run
again, it must read the rows registered now, under the names the text reads, and compute each
volatile value again; rows DuckDB computed at once (a PIVOT) are never kept."""

import pyarrow as pa

from graphdb.executor.relational import KEPT_STATEMENTS, SQLEngine


def test_a_kept_statement_reads_the_rows_registered_now():
    engine = SQLEngine(threads=1)
    sql = "SELECT sum(x) AS s FROM r"
    for rows in ([1, 2], [10], [5, 5, 5]):  # a statement's own inputs, registered each time
        table, _ = engine.run(sql, {"r": pa.table({"x": rows})})
        assert table.column("s").to_pylist() == [sum(rows)]
    kept = pa.table({"x": [7]})  # kept registrations, replaced by another object
    assert engine.run(sql.replace("r", "k"), {}, {"k": kept})[0].to_pylist() == [{"s": 7}]
    assert engine.run(sql.replace("r", "k"), {}, {"k": pa.table({"x": [8, 9]})}
                      )[0].to_pylist() == [{"s": 17}]
    # another schema under the same name: a relation of its own
    table, _ = engine.run("SELECT * FROM r", {"r": pa.table({"y": ["a"], "z": [1.5]})})
    assert table.column_names == ["y", "z"]
    engine.close()


def test_volatile_values_and_computed_rows_are_not_kept():
    engine = SQLEngine(threads=1)
    draws = {engine.run("SELECT random() AS r", {})[0].column("r")[0].as_py() for _ in range(5)}
    assert len(draws) > 1
    pivot = "PIVOT r ON k USING sum(v)"
    first, _ = engine.run(pivot, {"r": pa.table({"k": ["a", "b"], "v": [1, 2]})})
    second, _ = engine.run(pivot, {"r": pa.table({"k": ["a", "b"], "v": [30, 40]})})
    assert first.to_pylist() == [{"a": 1, "b": 2}] and second.to_pylist() == [{"a": 30, "b": 40}]
    for i in range(KEPT_STATEMENTS + 5):  # bounded
        engine.run(f"SELECT {i} AS i", {})
    assert engine.run("SELECT 3 AS i", {})[0].to_pylist() == [{"i": 3}]
    engine.close()

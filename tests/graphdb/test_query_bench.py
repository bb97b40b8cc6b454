"""A small run of tools/bench_query.py: the three engines must agree (slow: Kuzu and DuckDB)."""

from __future__ import annotations

import json

import pytest


@pytest.mark.slow
def test_bench_query_small_run_agrees_across_engines(tmp_path, capsys):
    pytest.importorskip("kuzu")
    pytest.importorskip("duckdb")
    from tools.bench_query import main

    out = tmp_path / "bench.json"
    assert main(["--scale", "9", "--edge-factor", "8", "--repeats", "1", "--out", str(out)]) == 0
    report = json.loads(out.read_text())
    assert all(row["answers_agree"] for row in report["khop"])
    assert all(row["plan_ms"] > 0 for row in report["planning"])
    assert "| source | answer |" in capsys.readouterr().out

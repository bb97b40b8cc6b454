"""`graphdb ingest` as a user types it, and `con.ingest` with the same options."""

from __future__ import annotations

import pytest

import graphdb
from graphdb.cli import main


def _write(path, text):
    path.write_text(text)
    return str(path)


def test_cli_ingest_with_options_then_query_by_string_id(tmp_path, capsys):
    e = _write(tmp_path / "e.csv", "a;b;w;since\nann;bob;2;2001\nbob;cid;1;2002\nann;ann;5;2003\n"
                                  "ann;bob;7;2004\n")
    db = str(tmp_path / "db")
    rc = main(["ingest", db, "g", e, "--delimiter", ";", "--weight", "w", "--self-loops", "drop",
               "--duplicates", "merge", "--merge-weights", "max", "--memory-limit", "64MB"])
    assert rc == 0
    out = capsys.readouterr().out
    assert "Loaded graph 'g'" in out and "3 vertices, 4 edges" in out
    with graphdb.connect(db) as con:
        rows = con.execute("SELECT * FROM bfs(g, 'ann')").fetchall()
        assert sorted(rows) == [("ann", 0), ("bob", 1), ("cid", 2)]
        entry = con.catalog.get("g")
        assert entry.num_edges == 2
        edges = con.catalog.edge_table(entry)
        assert sorted(zip(edges.column("src").to_pylist(), edges.column("w").to_pylist(),
                          edges.column("since").to_pylist())) == [("ann", 7.0, 2001),
                                                                  ("bob", 1.0, 2002)]


def test_cli_quiet_and_errors_exit_non_zero(tmp_path, capsys):
    db = str(tmp_path / "db")
    good = _write(tmp_path / "e.txt", "# snap\n1\t2\n2\t3\n")
    assert main(["ingest", db, "g", good, "--quiet"]) == 0
    assert capsys.readouterr().out == ""
    bad = _write(tmp_path / "bad.csv", "s,d\n1,2\n1,2,3\n")
    assert main(["ingest", db, "h", bad]) == 1
    err = capsys.readouterr().err
    assert f"{bad}:3:" in err and "expected 2 fields" in err
    assert main(["ingest", db, "g", good]) == 1
    assert "already exists" in capsys.readouterr().err
    assert main(["ingest", db, "g", good, "--replace", "--undirected"]) == 0
    assert main(["ingest", db, "x", str(tmp_path / "missing.csv")]) == 1
    assert "missing.csv: file does not exist" in capsys.readouterr().err


def test_cli_glob_vertices_and_no_header(tmp_path, capsys):
    _write(tmp_path / "p1.csv", "1,2\n")
    _write(tmp_path / "p2.csv", "2,3\n")
    v = _write(tmp_path / "v.csv", "id,name\n1,a\n2,b\n3,c\n4,d\n")
    db = str(tmp_path / "db")
    assert main(["ingest", db, "g", str(tmp_path / "p*.csv"), "--no-header", "--vertices", v]) == 0
    with graphdb.connect(db) as con:
        vt = con.catalog.vertex_table(con.catalog.get("g"))
        assert vt.column("name").to_pylist() == ["a", "b", "c", "d"]
        assert con.catalog.get("g").input_edges == 2


def test_connection_ingest_summary_and_bad_options(tmp_path):
    e = _write(tmp_path / "e.csv", "s,d\n1,2\n2,2\n1,2\n")
    with graphdb.connect(tmp_path / "db") as con:
        summary = con.ingest("g", e, self_loops="drop", duplicates="merge", memory_limit="8MB")
        assert (summary["vertices"], summary["edges"], summary["stored_edges"]) == (2, 3, 1)
        assert summary["self_loops_dropped"] == 1 and summary["duplicates_merged"] == 1
        assert summary["bytes_stored"] > 0 and summary["edges_per_second"] > 0
        with pytest.raises(graphdb.IngestError, match="duplicates must be one of"):
            con.ingest("h", e, duplicates="drop")
        with pytest.raises(graphdb.InvalidInputError):
            con.ingest("h", e, memory_limit="lots")


def test_progress_object_sees_phases(tmp_path):
    from graphdb.catalog.progress import Progress

    seen = []

    class Record(Progress):
        def phase(self, name, total=None):
            seen.append(name)

    e = _write(tmp_path / "e.csv", "s,d\n1,2\n")
    with graphdb.connect(tmp_path / "db") as con:
        con.ingest("g", e, progress=Record())
    assert seen[0] == "read" and seen[-1] == "commit"


def _graphdb(*args, stdin: bytes | None = None, cwd=None):
    import subprocess
    import sys

    return subprocess.run([sys.executable, "-m", "graphdb", *args], input=stdin, cwd=cwd,
                          capture_output=True, timeout=300)


def test_standard_input_is_read_as_a_file(tmp_path):
    """``-`` and ``/dev/stdin`` (a pipe) are read once, their format told by their bytes
    (gzip, delimiter); a bad line is named as <stdin>:line, and nothing is written."""
    import gzip

    db = str(tmp_path / "db")
    done = _graphdb("ingest", db, "g", "-", stdin=b"src,dst\n1,2\n2,3\n")
    assert done.returncode == 0, done.stderr
    done = _graphdb("ingest", db, "z", "/dev/stdin", stdin=gzip.compress(b"a\tb\n5\t6\n"))
    assert done.returncode == 0, done.stderr
    bad = _graphdb("ingest", db, "h", "-", stdin=b"src,dst\n1,2\n2,x\n")
    assert bad.returncode == 1
    assert b"<stdin>:3: vertex id 'x'" in bad.stderr and b"Traceback" not in bad.stderr
    shown = _graphdb("query", db, "SELECT name, edges FROM graphs() ORDER BY name",
                     "--format", "csv")
    assert shown.stdout.decode().split() == ["name,edges", "g,2", "z,1"]

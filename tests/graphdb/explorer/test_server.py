"""The explorer's server without a browser: the token, the host and origin checks, the
read-only refusals, many clients at once, fairness, and what a closed tab leaves behind."""

from __future__ import annotations

import itertools
import json
import threading
import time
import urllib.error
import urllib.request

import pytest
from websockets.exceptions import InvalidStatus
from websockets.sync.client import connect as ws_connect

import graphdb
from graphdb.explorer import Server
from graphdb.explorer.app import CSP
from tests._copies import copy_database
from tests.graphdb.explorer.conftest import karate


class Tab:
    """A WebSocket client speaking the page's protocol."""

    _ids = itertools.count(1)

    def __init__(self, server, **headers):
        self.ws = ws_connect(f"ws://127.0.0.1:{server.port}/ws?token={server.token}",
                             additional_headers=headers or None).__enter__()
        self.hello = json.loads(self.ws.recv(10))
        self.answers: dict[int, dict] = {}  # read while waiting for another

    def send(self, op, **fields) -> int:
        ident = next(self._ids)
        self.ws.send(json.dumps({"op": op, "id": ident, **fields}))
        return ident

    def answer(self, ident, timeout=60):
        while ident not in self.answers:
            message = json.loads(self.ws.recv(timeout))
            if message["type"] != "progress":
                self.answers[message.get("id")] = message
        return self.answers.pop(ident)

    def ask(self, op, **fields):
        return self.answer(self.send(op, **fields))

    def close(self):
        self.ws.close()


def http(url, headers=None):
    request = urllib.request.Request(url, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, dict(response.headers), response.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, dict(exc.headers), exc.read().decode()


def test_every_request_needs_the_token(server):
    base = f"http://127.0.0.1:{server.port}"
    status, headers, body = http(server.url)
    assert status == 200 and "graphdb explorer" in body
    assert headers["content-security-policy"] == CSP
    assert "script-src 'self'" in CSP and "unsafe-eval" not in CSP
    cookie = headers["set-cookie"].split(";")[0]
    assert "HttpOnly" in headers["set-cookie"] and "SameSite=Strict" in headers["set-cookie"]
    for path in ("/", "/static/explorer.js", "/?token=" + "x" * len(server.token)):
        assert http(base + path)[0] == 403
    assert http(base + "/static/explorer.js", {"Cookie": cookie})[0] == 200
    assert http(base + "/static/explorer.js", {"Authorization": f"token {server.token}"})[0] \
        == 200
    with pytest.raises(InvalidStatus):
        ws_connect(f"ws://127.0.0.1:{server.port}/ws").__enter__()
    with pytest.raises(InvalidStatus):
        ws_connect(f"ws://127.0.0.1:{server.port}/ws?token=wrong").__enter__()


def test_another_host_name_or_origin_is_refused(server):
    base = f"http://127.0.0.1:{server.port}"
    assert http(base + "/", {"Host": f"evil.example:{server.port}",
                             "Authorization": f"token {server.token}"})[0] == 403
    with pytest.raises(InvalidStatus):
        Tab(server, Origin="http://evil.example")
    tab = Tab(server, Origin=f"http://127.0.0.1:{server.port}")
    assert tab.hello["write"] is False
    tab.close()


REFUSED = {
    "INSERT INTO karate.edges (src, dst) VALUES (0, 33)": "read-only",
    "DELETE FROM karate.edges": "read-only",
    "DROP GRAPH karate": "read-only",
    "CREATE GRAPH h (EDGES (weight DOUBLE))": "read-only",
    "CREATE GRAPH h AS GRAPH karate": "read-only",
    "COPY (SELECT 1) TO '/tmp/graphdb-explorer-leak.csv'": "read-only",
    "VACUUM": "read-only",
    "CHECKPOINT karate": "read-only",
    "SELECT * FROM read_csv('/etc/passwd')": "file system operations are disabled",
    "SELECT count(*) FROM glob('/*')": "file system operations are disabled",
    "SELECT * FROM '/etc/hostname'": "",
    "SET threads = 1": "not run by the explorer",
    "BEGIN": "not run by the explorer",
}


def test_read_only_refuses_writes_ddl_copy_and_files(server, explorer_db):
    tab = Tab(server)
    for sql, why in REFUSED.items():
        answer = tab.ask("run", sql=sql)
        assert answer["type"] == "error", sql
        assert why in answer["message"], (sql, answer["message"])
    tab.close()
    with graphdb.connect(explorer_db, read_only=True) as con:
        assert con.graphs() == ["karate", "roads"]
        assert con.execute("SELECT count(*) FROM karate.edges").fetchone() == (78,)


def test_write_mode_writes(explorer_db, tmp_path):
    copy = tmp_path / "db"
    copy_database(explorer_db, copy)
    with Server(copy, port=0, write=True) as server:
        tab = Tab(server)
        assert tab.hello["write"] is True
        answer = tab.ask("run", sql="INSERT INTO karate.edges (src, dst, weight) VALUES "
                                    "(0, 33, 1.0), (1, 33, 1.0)")
        assert answer["type"] == "result", answer
        assert tab.ask("run", sql="SET threads = 1")["type"] == "error"
        tab.close()
    with graphdb.connect(copy, read_only=True) as con:
        assert con.execute("SELECT count(*) FROM karate.edges").fetchone() == (80,)


def test_many_clients_at_once_all_answered_right(server):
    tabs = [Tab(server) for _ in range(5)]
    sent = {}
    for t, tab in enumerate(tabs):  # every tab sends all of its statements before reading
        for q in range(20):
            sql = f"SELECT {t} * 1000 + {q} AS x, count(*) AS n FROM karate.edges"
            sent[(t, tab.send("run", sql=sql))] = t * 1000 + q
    for (t, ident), expected in sent.items():
        answer = tabs[t].answer(ident)
        assert answer["type"] == "result", answer
        assert answer["page"] == [[expected, 78]]
    for tab in tabs:
        tab.close()


def test_one_tab_cannot_starve_another(server):
    busy = Tab(server)
    long = busy.send("run", sql="SELECT count(*) FROM pagerank(karate, max_iterations => "
                                "1000000, tolerance => 0)")
    queued = [busy.send("run", sql=f"SELECT {i} AS i") for i in range(30)]
    time.sleep(0.3)
    other = Tab(server)
    start = time.monotonic()
    answer = other.ask("run", sql="SELECT 42 AS answer")
    assert answer["page"] == [[42]]
    assert time.monotonic() - start < 5  # not behind the long statement, nor the 30 queued
    busy.send("cancel", target=long)
    assert "cancelled" in busy.answer(long)["message"]
    assert [busy.answer(i)["page"] for i in queued] == [[[i]] for i in range(30)]
    busy.close()
    other.close()


def test_a_closed_tab_cancels_its_statement_and_frees_its_results(server):
    tab = Tab(server)
    first = tab.ask("run", sql="SELECT * FROM generate_series(1, 100000) t(n)")
    assert first["rows"] == 100000 and len(first["page"]) == 100
    kept = len(server.store)
    tab.send("run", sql="SELECT count(*) FROM pagerank(karate, max_iterations => 1000000, "
                        "tolerance => 0)")
    deadline = time.monotonic() + 10
    while server.pool.busy == 0 and time.monotonic() < deadline:
        time.sleep(0.01)
    tab.close()
    deadline = time.monotonic() + 10
    while server.pool.busy and time.monotonic() < deadline:
        time.sleep(0.01)
    assert server.pool.busy == 0
    assert len(server.store) == kept - 1


def test_pages_sort_and_charts_come_from_the_kept_result(server):
    tab = Tab(server)
    result = tab.ask("run", sql="SELECT vertex, degree FROM degree(karate)")
    degrees = dict(karate().degree)
    page = tab.ask("page", result=result["result"], offset=0, limit=40, sort="degree",
                   desc=True)["rows"]
    assert [d for _, d in page] == sorted(degrees.values(), reverse=True)
    chart = tab.ask("chart", result=result["result"], value="degree")
    assert sum(chart["counts"]) == 34
    assert tab.ask("page", result=10 ** 9, offset=0)["type"] == "error"
    tab.close()


def test_large_drawings_come_laid_out_and_the_page_can_ask_again(server):
    from graphdb.explorer.layout import SERVER_LAYOUT_FROM

    tab = Tab(server)
    small = tab.ask("run", sql="SELECT src, dst FROM karate.edges")["result"]
    assert "positions" not in tab.ask("graph", result=small)  # fCoSE in the page
    n = SERVER_LAYOUT_FROM + 50
    large = tab.ask("run", sql=f"SELECT i AS src, (i + 1) % {n} AS dst FROM range({n}) t(i)")
    drawing = tab.ask("graph", result=large["result"])
    assert len(drawing["positions"]) == len(drawing["nodes"]) == n
    assert len({tuple(p) for p in drawing["positions"]}) == n  # no two in one place
    again = tab.ask("layout", count=3, edges=[[0, 1], [1, 2]])
    assert len(again["positions"]) == 3
    for bad in ({"count": 2, "edges": [[0, 5]]}, {"count": -1, "edges": []},
                {"count": 10 ** 9, "edges": []}, {"count": 2, "edges": "x"}):
        assert tab.ask("layout", **bad)["type"] == "error"
    tab.close()


def test_a_tab_cannot_read_another_tab_s_result(server):
    one, two = Tab(server), Tab(server)
    result = one.ask("run", sql="SELECT 1 AS x")["result"]
    answer = two.ask("page", result=result, offset=0)
    assert answer["type"] == "error" and "no longer kept" in answer["message"]
    one.close()
    two.close()


def test_schema_lists_graphs_tables_columns_and_functions(server):
    tab = Tab(server)
    schema = tab.ask("schema")
    karate_entry = next(g for g in schema["graphs"] if g["name"] == "karate")
    assert karate_entry["vertices"] == 34 and karate_entry["edges"] == 78
    tables = {t["name"]: [c["name"] for c in t["columns"]] for t in karate_entry["tables"]}
    assert tables["vertices"] == ["id", "club"] and tables["edges"][:2] == ["src", "dst"]
    assert {"pagerank", "bfs", "shortest_path"} <= {f["name"] for f in schema["table_functions"]}
    assert "lower" in schema["functions"]
    tab.close()


def test_the_command_prints_the_address_and_serves(explorer_db):
    import os
    import signal
    import subprocess
    import sys

    process = subprocess.Popen([sys.executable, "-m", "graphdb", "serve", str(explorer_db),
                                "--port", "0", "--no-browser"], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    try:
        url = None
        for line in process.stdout:
            if "?token=" in line:
                url = line.strip()
                break
        assert url and url.startswith("http://127.0.0.1:")
        assert http(url)[0] == 200
        assert http(url.split("?")[0])[0] == 403
    finally:
        process.send_signal(signal.SIGINT)
        assert process.wait(30) == 0
    assert threading.active_count() < 50 and os.path.exists(explorer_db)

"""The explorer's speed in headless Chromium, against the engine's own time (the ratios).

    python -m tools.bench_explorer [--clients 10] [--queries 50] [--parts page,query,draw,clients]
                                   [--out FILE]

Measures, on a database it builds in a temporary folder:

- page ready: from navigation to the editor, the WebSocket and the schema being there;
- a 100-row query: from Ctrl+Enter to the rows in the table, beside the engine's own time of
  the statement (``Result.elapsed`` on the server) and the same statement through the Python
  API in this process; the overhead is the difference;
- a graph drawing: a 2,000-vertex, 10,000-edge result (G(n, m), src/dst rows) drawn and laid out
  (elements, fCoSE layout, styles, first frame), and a 20,000-edge one, which is cut with a note;
- many clients: ``--clients`` WebSockets each sending ``--queries`` statements at once (each
  with an answer known in advance), every answer checked, and the process's resident memory
  before and after (results kept on the server are bounded per tab and in bytes).

Needs Chromium (Debian's ``chromium``) and playwright (the dev extra).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

import networkx as nx
import pyarrow as pa

import graphdb
from graphdb.explorer import Server
from tools.explorer_browser import CHROMIUM_FLAGS, chromium_path, run_sql, until


def _rss() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    return 0


def build(path: Path) -> None:
    with graphdb.connect(path) as con:
        for name, n, m in (("g2k", 2000, 10000), ("g4k", 4000, 20000), ("big", 50000, 400000)):
            g = nx.gnm_random_graph(n, m, seed=7, directed=True)
            con.ingest(name, pa.table({"src": [a for a, _ in g.edges],
                                       "dst": [b for _, b in g.edges]}))
        grid = nx.convert_node_labels_to_integers(nx.grid_2d_graph(45, 45))
        con.ingest("grid", pa.table({"src": [a for a, _ in grid.edges],
                                     "dst": [b for _, b in grid.edges]}), undirected=True)


def run_query(page, sql: str) -> dict:
    run_sql(page, sql)
    return page.evaluate("({roundtrip: window.explorer.lastRoundTrip, engine: "
                         "window.explorer.result.engine_ms, rows: window.explorer.result.rows,"
                         " shown: document.querySelectorAll('#rows tbody tr').length})")


#: The drawings measured: G(n, m) at the drawing's cap, one past it (cut), a grid (its
#: layout's quality is seen at a glance in --screenshots).
DRAWINGS = (("2000x10000", "SELECT src, dst FROM g2k.edges"),
            ("4000x20000", "SELECT src, dst FROM g4k.edges"),
            ("grid_45x45", "SELECT src, dst FROM grid.edges"))


def _browser_cpu() -> float:
    """CPU seconds Chromium's processes have used (what a drawing costs whatever else the
    machine runs)."""
    total = 0.0
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and "chrom" in (entry / "comm").read_text():
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
                total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
        except OSError:
            continue
    return total


def draw(page, sql: str) -> dict:
    run_query(page, sql)
    cpu = _browser_cpu()
    start = time.perf_counter()
    page.click("#views [data-view=graph]")
    until(page, "window.explorer.graph && window.explorer.cy && "
                 "window.explorer.graph.result === window.explorer.result.result")
    drawn = time.perf_counter()
    # one frame after the layout: what the user sees
    seen = page.evaluate("new Promise(r => requestAnimationFrame(() => requestAnimationFrame("
                         "() => r(performance.now() - window.explorer.selectedAt))))")
    total = time.perf_counter() - start
    return {"seconds": total, "browser_cpu_s": _browser_cpu() - cpu, "in_page_s": seen / 1000, "first_frame_s": total - (drawn - start),
            "layout_ms": page.evaluate("window.explorer.drawMs"),
            "server_ms": page.evaluate("window.explorer.graphAskMs"),
            "timings": page.evaluate("window.explorer.timings"),
            "vertices": page.evaluate("window.explorer.cy.nodes().length"),
            "edges": page.evaluate("window.explorer.cy.edges().length"),
            "note": page.evaluate("window.explorer.graph.note")}


def clients(server: Server, count: int, queries: int) -> dict:
    from websockets.sync.client import connect

    answers: dict = {}
    errors: list[str] = []

    def client(c: int) -> None:
        with connect(f"ws://127.0.0.1:{server.port}/ws?token={server.token}",
                     max_size=1 << 24) as ws:
            json.loads(ws.recv(30))
            expected = {}
            for q in range(queries):
                k = (c * queries + q) % 2000
                ws.send(json.dumps({"op": "run", "id": q, "sql":
                                    f"SELECT {c} AS c, {q} AS q, count(*) AS n FROM g2k.edges "
                                    f"WHERE src < {k}"}))
                expected[q] = k
            while expected:
                message = json.loads(ws.recv(300))
                if message["type"] == "progress":
                    continue
                if message["type"] != "result":
                    errors.append(message.get("message", str(message)))
                    expected.pop(message.get("id"), None)
                    continue
                answers[(c, message["id"])] = (expected.pop(message["id"]), message["page"][0])

    before = _rss()
    start = time.perf_counter()
    threads = [threading.Thread(target=client, args=(c,)) for c in range(count)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    seconds = time.perf_counter() - start
    with graphdb.connect(server.path, read_only=True) as con:
        src = con.execute("SELECT src FROM g2k.edges").arrow().column(0).to_numpy()
    wrong = [key for key, (k, row) in answers.items()
             if row != [key[0], key[1], int((src < k).sum())]]
    return {"clients": count, "queries": count * queries, "answered": len(answers),
            "wrong": len(wrong), "errors": errors[:5], "seconds": seconds,
            "rss_before": before, "rss_after": _rss(), "kept_results": len(server.store),
            "kept_bytes": server.store.bytes}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clients", type=int, default=10)
    parser.add_argument("--queries", type=int, default=50)
    parser.add_argument("--repeat", type=int, default=20, help="runs of the 100-row query")
    parser.add_argument("--parts", default="page,query,draw,clients",
                        help="what to measure (comma-separated; default all)")
    parser.add_argument("--screenshots", help="save each drawing as a PNG in this folder")
    parser.add_argument("--out", help="write the figures as JSON here")
    args = parser.parse_args(argv)
    parts = set(args.parts.split(","))
    from playwright.sync_api import sync_playwright

    figures: dict = {}
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "db"
        build(path)
        sql = "SELECT * FROM big.edges WHERE src < 5000 LIMIT 100"
        with Server(path, port=0) as server, sync_playwright() as p:
            browser = p.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_FLAGS)
            page = browser.new_page(viewport={"width": 1280, "height": 800})
            ready = []
            for _ in range(5 if "page" in parts else 1):
                start = time.perf_counter()
                page.goto(server.url)
                until(page, "window.explorer && window.explorer.schema && "
                             "document.querySelector('.cm-content')")
                ready.append(time.perf_counter() - start)
            if "page" in parts:
                figures["page_ready_s"] = {"first": ready[0], "median": statistics.median(ready),
                                           **page_timings(page)}
            if "query" in parts:
                figures["query_100_rows_ms"] = query_figures(page, path, sql, args.repeat)
            if "draw" in parts:
                for name, sql_draw in DRAWINGS:
                    figures[f"draw_{name}"] = draw(page, sql_draw)
                    if args.screenshots:
                        Path(args.screenshots).mkdir(parents=True, exist_ok=True)
                        page.locator("#cy").screenshot(
                            path=str(Path(args.screenshots) / f"{name}.png"))
            browser.close()
            if "clients" in parts:
                figures["many_clients"] = clients(server, args.clients, args.queries)
    print(json.dumps(figures, indent=2))
    print("\n" + summary(figures), file=sys.stderr)
    if args.out:
        Path(args.out).write_text(json.dumps(figures, indent=2))
    c = figures.get("many_clients")
    return 0 if c is None or (c["wrong"] == 0 and c["answered"] == c["queries"]) else 1


def page_timings(page) -> dict:
    """The last load's navigation timings (ms from its start)."""
    return page.evaluate("""(() => {
        const n = performance.getEntriesByType("navigation")[0];
        return {dom_content_loaded_ms: n.domContentLoadedEventEnd, load_ms: n.loadEventEnd,
                schema_ms: window.explorer.schemaAt || null};
    })()""")


def query_figures(page, path: Path, sql: str, repeat: int) -> dict:
    with graphdb.connect(path, read_only=True) as con:
        con.execute(sql)
        api = []
        for _ in range(repeat):
            start = time.perf_counter()
            con.execute(sql).arrow()
            api.append((time.perf_counter() - start) * 1000)
    run_query(page, sql)
    runs = [run_query(page, sql) for _ in range(repeat)]
    assert all(r["shown"] == 100 for r in runs)
    roundtrip = statistics.median(r["roundtrip"] for r in runs)
    engine = statistics.median(r["engine"] for r in runs)
    return {"browser_roundtrip": roundtrip, "engine": engine,
            "python_api": statistics.median(api), "overhead": roundtrip - engine,
            "ratio_to_engine": roundtrip / engine}


def summary(figures: dict) -> str:
    lines = []
    if "page_ready_s" in figures:
        r = figures["page_ready_s"]
        lines.append(f"page ready {r['median']:.2f} s (first {r['first']:.2f} s)")
    if "query_100_rows_ms" in figures:
        q = figures["query_100_rows_ms"]
        lines.append(f"100 rows: browser {q['browser_roundtrip']:.1f} ms vs engine "
                     f"{q['engine']:.1f} ms (+{q['overhead']:.1f} ms, "
                     f"x{q['ratio_to_engine']:.2f}), Python API {q['python_api']:.1f} ms")
    for name, _ in DRAWINGS:
        d = figures.get(f"draw_{name}")
        if d:
            lines.append(f"{name} drawn in {d['seconds']:.2f} s (in the page: from the click to "
                         f"the first frame {d['in_page_s']:.2f} s, Chromium's CPU "
                         f"{d['browser_cpu_s']:.2f} s; {d['vertices']} vertices, "
                         f"{d['edges']} edges; server {d['server_ms']:.0f} ms, page "
                         f"{d['layout_ms']:.0f} ms, first frame {d['first_frame_s']:.2f} s)")
    c = figures.get("many_clients")
    if c:
        lines.append(f"{c['queries']} statements from {c['clients']} clients in "
                     f"{c['seconds']:.1f} s, {c['answered']} answered, {c['wrong']} wrong, "
                     f"RSS {c['rss_before'] >> 20} -> {c['rss_after'] >> 20} MiB, "
                     f"{c['kept_results']} results kept ({c['kept_bytes'] >> 10} KiB)")
    return "; ".join(lines)


if __name__ == "__main__":
    sys.exit(main())

"""The explorer in a real browser (headless Chromium): what a user does, checked against the
database's own answers and networkx."""

from __future__ import annotations

import threading
import time
import urllib.error
import urllib.request

import networkx as nx
import numpy as np
import pytest

import graphdb
from tests.graphdb.explorer.conftest import SCREENSHOT, karate, roads, run_sql, until


def draw(page, sql: str) -> None:
    """Run ``sql``, switch to the graph view, wait for the drawing of this result (not an
    earlier one)."""
    run_sql(page, sql)
    page.click("#views [data-view=graph]")
    until(page, "window.explorer.cy && window.explorer.graph && "
                "window.explorer.graph.result === window.explorer.result.result")


def table_cells(page) -> list[list[str]]:
    return page.evaluate("""() => [...document.querySelectorAll('#rows tbody tr')]
        .map(tr => [...tr.cells].map(td => td.textContent))""")


def test_a_query_fills_the_table_and_pages_through_a_million_rows(page):
    status = run_sql(page, "SELECT vertex, degree FROM degree(karate) ORDER BY degree DESC, "
                           "vertex LIMIT 5")
    expected = sorted(karate().degree, key=lambda vd: (-vd[1], vd[0]))[:5]
    assert status.startswith("5 rows")
    assert table_cells(page) == [[str(v), str(d)] for v, d in expected]
    headers = page.evaluate("[...document.querySelectorAll('#rows th')].map(th => th.firstChild"
                            ".textContent)")
    assert headers == ["vertex", "degree"]

    status = run_sql(page, "SELECT * FROM generate_series(1, 1200000) t(n)")
    assert status.startswith("1,200,000 rows")
    assert page.inner_text("#range") == "rows 1–100 of 1,200,000"
    assert len(table_cells(page)) == 100  # one page reached the browser, not the rows
    page.click("#last")
    until(page, "document.querySelector('#range').textContent.startsWith('rows 1,200,001') "
                "|| document.querySelector('#range').textContent.startsWith('rows 1,199,901')")
    cells = table_cells(page)
    assert cells[-1] == ["1200000"] and len(cells) == 100
    page.click("#rows th")  # sort by n: ascending, again: descending
    until(page, "document.querySelector('#rows th .type').textContent.includes('▲')")
    page.click("#rows th")
    until(page, "document.querySelector('#rows th .type').textContent.includes('▼')")
    assert table_cells(page)[0] == ["1200000"]


def completions(page, text: str) -> list[str]:
    page.click(".cm-content")
    page.keyboard.press("Control+a")
    page.keyboard.press("Delete")
    page.keyboard.insert_text(text[:-2])
    page.keyboard.type(text[-2:])  # completion opens as one types
    until(page, "document.querySelector('.cm-tooltip-autocomplete')")
    shown = page.evaluate("[...document.querySelectorAll('.cm-tooltip-autocomplete li')]"
                          ".map(li => li.querySelector('.cm-completionLabel').textContent)")
    page.keyboard.press("Escape")
    return shown


def test_the_editor_completes_graphs_tables_columns_and_functions(page):
    assert "karate" in completions(page, "SELECT * FROM kar")
    assert "vertices" in completions(page, "SELECT * FROM karate.ver")
    assert "club" in completions(page, "SELECT karate.vertices.cl")
    assert "pagerank" in completions(page, "SELECT * FROM pager")
    assert "k_shortest_paths" in completions(page, "SELECT * FROM k_sh")


def test_a_pattern_result_is_drawn_as_its_graph(page):
    draw(page, "SELECT * FROM GRAPH_TABLE (karate MATCH (a)-[e]->(b) WHERE a.id < 5 "
               "COLUMNS (a.id AS src, b.id AS dst))")
    drawn = page.evaluate("""() => ({
        nodes: window.explorer.cy.nodes().map(n => n.data('value')).sort((a, b) => a - b),
        edges: window.explorer.cy.edges().map(e => [e.source().data('value'),
                                                    e.target().data('value')])})""")
    g = karate()
    pairs = {(a, b) for a in g if a < 5 for b in g[a]}  # undirected: both ways from a
    assert {tuple(e) for e in drawn["edges"]} == pairs
    assert drawn["nodes"] == sorted({v for p in pairs for v in p})


def test_a_large_result_is_drawn_where_the_server_laid_it_out(page):
    """200 vertices and more are laid out by the server (graphdb.explorer.layout) and drawn
    where it put them: a cycle as a ring; the relayout button asks the server again."""
    draw(page, "SELECT i AS src, (i + 1) % 300 AS dst FROM range(300) AS t(i)")
    drawn = page.evaluate("""() => ({
        server: window.explorer.graph.positions,
        ids: window.explorer.graph.nodes.map(n => n.id),
        values: window.explorer.graph.nodes.map(n => n.value),
        edges: window.explorer.cy.edges().length})""")
    assert drawn["server"] is not None and drawn["edges"] == 300
    shown = page.evaluate("ids => ids.map(id => { const p = window.explorer.cy.getElementById(id)"
                          ".position(); return [p.x, p.y]; })", drawn["ids"])
    assert np.allclose(shown, drawn["server"])
    xy = np.array(shown)[np.argsort(drawn["values"])]  # vertex i at row i
    radius = np.hypot(*(xy - xy.mean(axis=0)).T)
    assert radius.std() < 0.15 * radius.mean()  # a ring (round, or nearly)
    steps = np.hypot(*(xy - np.roll(xy, 1, axis=0)).T)
    assert steps.std() < 0.25 * steps.mean()  # neighbours about evenly apart
    page.evaluate("window.explorer.cy.nodes().positions(() => ({x: 0, y: 0}))")
    page.click("#relayout")
    until(page, "window.explorer.cy.nodes().some(n => n.position().x !== 0)")
    again = np.array(page.evaluate("ids => ids.map(id => { const p = window.explorer.cy"
                                   ".getElementById(id).position(); return [p.x, p.y]; })",
                                   drawn["ids"]))
    assert np.allclose(again, drawn["server"])


def test_a_shortest_path_is_drawn_and_a_vertex_expands_and_shows_its_properties(
        page, explorer_db):
    with graphdb.connect(explorer_db, read_only=True) as con:
        path = [v for (v,) in con.execute("SELECT vertex FROM shortest_path(roads, 0, 35) "
                                          "ORDER BY step").fetchall()]
    grid = roads()
    assert nx.path_weight(grid, path, "weight") == nx.shortest_path_length(grid, 0, 35, "weight")
    draw(page, "SELECT * FROM shortest_path(roads, 0, 35)")
    edges = page.evaluate("window.explorer.cy.edges().map(e => [e.source().data('value'), "
                          "e.target().data('value')])")
    assert sorted(map(tuple, edges)) == sorted(zip(path, path[1:]))
    # double-click the start: its neighbours in the grid join the drawing
    before = page.evaluate("window.explorer.cy.nodes().length")
    page.evaluate("void window.explorer.cy.getElementById('0').emit('dbltap')")
    until(page, "document.querySelector('#graph-note').textContent.startsWith('added')")
    ids = set(page.evaluate("window.explorer.cy.nodes().map(n => n.data('value'))"))
    assert ids == set(path) | set(grid.successors(0)) | set(grid.predecessors(0))
    assert len(ids) >= before
    page.evaluate("void window.explorer.cy.getElementById('0').emit('tap')")
    until(page, "document.querySelector('#vertex-panel').textContent.includes('distance')")


def test_karate_colours_by_community_and_shows_a_vertex_s_properties(page):
    draw(page, "SELECT vertex, component FROM wcc(karate)")
    counts = page.evaluate("[window.explorer.cy.nodes().length, window.explorer.cy.edges()"
                           ".length]")
    assert counts == [34, 78]  # the vertices, and the graph's edges between them
    assert page.input_value("#color-by") == "component"
    page.evaluate("void window.explorer.cy.getElementById('0').emit('tap')")
    until(page, "document.querySelector('#vertex-panel').textContent.includes('Mr. Hi')")


def test_a_chart_of_the_degree_distribution(page):
    run_sql(page, "SELECT vertex, degree FROM degree(karate)")
    page.click("#views [data-view=chart]")
    until(page, "window.explorer.chart")
    chart = page.evaluate("window.explorer.chart")
    degrees = [d for _, d in karate().degree]
    assert chart["kind"] == "histogram" and chart["discrete"]
    assert dict(zip(chart["bins"], chart["counts"])) == {
        float(d): degrees.count(d) for d in set(degrees)}
    assert page.locator("#chart rect.bar").count() == len(set(degrees))
    # a top k: bars labelled by vertex
    run_sql(page, "SELECT vertex, rank FROM pagerank(karate) ORDER BY rank DESC LIMIT 5")
    until(page, "window.explorer.chart && window.explorer.chart.kind === 'bars'")
    assert page.locator("#chart rect.bar").count() == 5


def _preorder(node):
    yield node
    for child in node.inputs:
        yield from _preorder(child)


def test_explain_analyze_is_drawn_as_the_plan_tree(page, explorer_db):
    run_sql(page, "EXPLAIN ANALYZE SELECT vertex, rank FROM pagerank(karate) ORDER BY rank "
                  "DESC LIMIT 3")
    assert page.is_visible("#view-plan")
    labels = page.evaluate("[...document.querySelectorAll('#plan .op .label')].map(e => "
                           "e.textContent)")
    with graphdb.connect(explorer_db, read_only=True) as con:
        plan = con.plan("SELECT vertex, rank FROM pagerank(karate) ORDER BY rank DESC LIMIT 3")
    assert labels == [node.label for node in _preorder(plan)]
    operator = page.locator("#plan .op", has_text="pagerank(karate")
    chips = operator.locator(".chip").all_inner_texts()
    assert chips[0] in ("cpu", "gpu") and chips[1] == "resident"
    assert any(c.endswith(" ms") for c in chips) and "3 rows" in chips and "iterations 20" in chips[-1]


def test_cancel_stops_a_long_query(page):
    page.click(".cm-content")
    page.keyboard.press("Control+a")
    page.keyboard.insert_text("SELECT count(*) FROM pagerank(karate, max_iterations => "
                              "1000000, tolerance => 0)")
    finished = page.evaluate("window.explorer.finished")
    page.keyboard.press("Control+Enter")
    until(page, "document.querySelector('#status').textContent.includes('running')")
    time.sleep(0.5)
    start = time.monotonic()
    page.click("#cancel")
    until(page, f"window.explorer.finished > {finished}", timeout=10)
    assert time.monotonic() - start < 5
    assert "cancelled" in page.inner_text("#status")


def test_a_write_is_refused_in_read_only_mode(page, explorer_db):
    status = run_sql(page, "INSERT INTO karate.edges (src, dst) VALUES (0, 33)")
    assert "read-only" in status
    run_sql(page, "SELECT count(*) FROM read_csv('/etc/passwd')")
    assert "file system operations are disabled" in page.inner_text("#status")
    with graphdb.connect(explorer_db, read_only=True) as con:
        assert con.execute("SELECT count(*) FROM karate.edges").fetchone() == (78,)


def test_the_page_needs_the_token(browser, server):
    context = browser.new_context()
    page = context.new_page()
    base = server.url.split("?")[0]
    for url in (base, base + "?token=wrong" + server.token[5:]):
        response = page.goto(url)
        assert response.status == 403
        assert "token" in page.inner_text("body")
    context.close()
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(base + "static/explorer.js")
    assert refused.value.code == 403


def test_closing_the_tab_cancels_its_statement(browser, server):
    context = browser.new_context()
    page = context.new_page()
    page.goto(server.url)
    until(page, "window.explorer && window.explorer.schema")
    page.click(".cm-content")
    page.keyboard.press("Control+a")
    page.keyboard.insert_text("SELECT count(*) FROM pagerank(karate, max_iterations => "
                              "1000000, tolerance => 0)")
    page.keyboard.press("Control+Enter")
    until(page, "document.querySelector('#status').textContent.includes('running')")
    deadline = time.monotonic() + 5
    while server.pool.busy == 0 and time.monotonic() < deadline:
        time.sleep(0.02)
    assert server.pool.busy == 1
    context.close()
    deadline = time.monotonic() + 5
    while server.pool.busy and time.monotonic() < deadline:
        time.sleep(0.02)
    assert server.pool.busy == 0
    assert threading.active_count() < 50


def test_the_readme_screenshot(page, tmp_path):
    """The graph view of communities and ranks: the README's picture (written to the path in
    GRAPHDB_EXPLORER_SCREENSHOT, e.g. docs/explorer.png, when it is set)."""
    run_sql(page, "SELECT v.id AS vertex, v.club, p.rank FROM karate.vertices v "
                  "JOIN pagerank(karate) p ON p.vertex = v.id")
    page.click("#views [data-view=graph]")
    until(page, "window.explorer.cy && window.explorer.cy.nodes().length === 34")
    page.select_option("#color-by", "club")
    page.select_option("#size-by", "rank")
    sizes = page.evaluate("window.explorer.cy.nodes().map(n => [n.data('value'), "
                          "n.data('size')])")
    ranks = dict(nx.pagerank(karate(), weight="weight").items())
    biggest = max(sizes, key=lambda vs: vs[1])[0]
    assert biggest in sorted(ranks, key=ranks.get)[-2:]  # the hubs are drawn largest
    colours = page.evaluate("window.explorer.cy.nodes().map(n => [n.data('club'), "
                            "n.data('color')])")
    assert len({c for _, c in colours}) == 2 == len({club for club, _ in colours})
    assert page.evaluate("window.explorer.cy.edges()[0].style('target-arrow-shape')") == "none"
    page.evaluate("void window.explorer.cy.getElementById('33').emit('tap')")
    until(page, "document.querySelector('#vertex-panel').textContent.includes('Officer')")
    path = SCREENSHOT or str(tmp_path / "explorer.png")
    page.screenshot(path=path)
    with open(path, "rb") as png:
        assert png.read(8) == b"\x89PNG\r\n\x1a\n"

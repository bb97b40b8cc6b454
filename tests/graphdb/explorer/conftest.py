"""The explorer's fixtures: a small database, a server on it, a headless Chromium.

The browser is Debian's ``chromium`` (``.ci/run`` installs it), driven by Playwright without its
own browser download. Its tests skip, saying why, only where no Chromium is installed.
"""

from __future__ import annotations

import os
import shutil
import time

import networkx as nx
import pytest

import graphdb

#: Chromium as the explorer's tests and benchmark run it: headless, nothing from the network.
CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                  "--disable-component-update", "--disable-sync", "--no-first-run"]


def chromium_path() -> str | None:
    for name in ("chromium", "chromium-browser"):
        found = shutil.which(name)
        if found:
            return found
    return None


def karate() -> nx.Graph:
    return nx.karate_club_graph()


def roads() -> nx.DiGraph:
    """A directed grid with weights: shortest paths with a unique answer."""
    g = nx.DiGraph()
    for i in range(6):
        for j in range(6):
            v = 6 * i + j
            if j < 5:
                g.add_edge(v, v + 1, weight=1 + (v % 3))
            if i < 5:
                g.add_edge(v, v + 6, weight=2 + (v % 2))
    return g


@pytest.fixture(scope="package")
def explorer_db(tmp_path_factory):
    """A database with 'karate' (undirected, vertex property 'club') and 'roads' (a weighted
    directed grid)."""
    path = tmp_path_factory.mktemp("explorer") / "db"
    with graphdb.connect(path) as con:
        con.from_networkx("karate", karate())
        con.from_networkx("roads", roads())
    return path


@pytest.fixture(scope="package")
def server(explorer_db):
    from graphdb.explorer import Server

    with Server(explorer_db, port=0) as running:
        yield running


@pytest.fixture(scope="package")
def browser():
    path = chromium_path()
    if path is None:
        pytest.skip("no Chromium is installed (apt-get install chromium; .ci/run does)")
    playwright = pytest.importorskip("playwright.sync_api", reason="playwright is not installed "
                                     "(pip install -e '.[dev]')")
    with playwright.sync_playwright() as p:
        launched = p.chromium.launch(executable_path=path, args=CHROMIUM_FLAGS)
        yield launched
        launched.close()


def until(page, expression: str, timeout: float = 30.0):
    """Poll ``expression`` in the page until it is truthy (the page's Content-Security-Policy
    forbids the string evaluation Playwright's wait_for_function uses)."""
    end = time.monotonic() + timeout
    while True:
        value = page.evaluate(expression)
        if value:
            return value
        if time.monotonic() > end:
            raise AssertionError(f"timed out waiting for {expression}")
        time.sleep(0.02)


@pytest.fixture(scope="package")
def page(browser, server):
    """One tab for the tests that only run statements in it (a new tab costs seconds)."""
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    opened = context.new_page()
    errors: list[str] = []
    opened.on("pageerror", lambda exc: errors.append(str(exc)))
    opened.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    opened.goto(server.url)
    until(opened, "window.explorer && window.explorer.schema")
    opened.errors = errors
    yield opened
    context.close()
    assert not [e for e in errors if "Content Security Policy" in e], errors


def run_sql(page, sql: str, timeout: float = 60.0) -> str:
    """Type ``sql`` into the editor, run it with Ctrl+Enter, wait for its answer; the status."""
    page.click(".cm-content")
    page.keyboard.press("Control+a")
    page.keyboard.press("Delete")
    page.keyboard.insert_text(sql)
    finished = page.evaluate("window.explorer.finished")
    page.keyboard.press("Control+Enter")
    until(page, f"window.explorer.finished > {finished}", timeout)
    return page.inner_text("#status")


SCREENSHOT = os.environ.get("GRAPHDB_EXPLORER_SCREENSHOT")

"""The explorer's fixtures: a small database, a server on it, a headless Chromium.

The browser is Debian's ``chromium`` (``.ci/run`` installs it), driven by Playwright without its
own browser download. Its tests skip, saying why, only where no Chromium is installed.
"""

from __future__ import annotations

import os

import networkx as nx
import pytest

import graphdb
from tools.explorer_browser import CHROMIUM_FLAGS, chromium_path, run_sql, until

__all__ = ["karate", "roads", "run_sql", "until", "SCREENSHOT"]

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


SCREENSHOT = os.environ.get("GRAPHDB_EXPLORER_SCREENSHOT")

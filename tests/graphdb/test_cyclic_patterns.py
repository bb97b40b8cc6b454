"""Cyclic patterns (triangles, squares, a hop back to any bound vertex), whose last hops are an
edge lookup and an intersection of neighbour lists, against a brute force over every binding:
random multigraphs with parallel edges and self loops, directed and undirected, each hop out, in
or both ways, from one start or from all, with edge conditions."""

from __future__ import annotations

import random
import re
from collections import Counter

import pyarrow as pa
import pytest

import graphdb


def arcs(edges, directed: bool, direction: str):
    """(from, to, edge index) of every step a hop in ``direction`` may take: a self-loop
    taken either way is one step (as PostgreSQL's SQL/PGQ reports a looping edge once under
    an any-direction edge pattern, and as an undirected graph has it)."""
    out = []
    for i, (u, v) in enumerate(edges):
        if not directed or direction == "both":
            out += [(u, v, i)] + ([(v, u, i)] if u != v else [])
        else:
            out += {"out": [(u, v, i)], "in": [(v, u, i)]}[direction]
    return out


def brute(n, edges, directed, hops, start=None, keep=lambda hop, i: True):
    """Every binding of a linear pattern: ``hops`` = (direction, target variable), variables
    named by letters, ``a`` first; rows (vertex per variable in order, edge per hop)."""
    rows = [({"a": a}, ()) for a in range(n) if start is None or a == start]
    for h, (direction, target) in enumerate(hops):
        steps = arcs(edges, directed, direction)
        current = "a" if h == 0 else hops[h - 1][1]
        new = []
        for bound, used in rows:
            for u, v, i in steps:
                if u != bound[current] or not keep(h, i):
                    continue
                if target in bound and bound[target] != v:
                    continue
                new.append(({**bound, target: v}, used + (i,)))
        rows = new
    names = sorted({"a"} | {t for _, t in hops})
    return Counter(tuple(b[x] for x in names) + used for b, used in rows)


SHAPES = {
    "triangle": (("b",), ("c",), ("a",)),
    "square": (("b",), ("c",), ("d",), ("a",)),
    "back to b": (("b",), ("c",), ("b",)),
    "two-cycle": (("b",), ("a",)),
    "self loop": (("a",),),
}
ARROW = {"out": "-[{e}]->", "in": "<-[{e}]-", "both": "-[{e}]-"}


@pytest.fixture(scope="module")
def con():
    with graphdb.connect() as c:
        yield c


@pytest.mark.parametrize("shape", sorted(SHAPES))
@pytest.mark.parametrize("directed", [True, False])
@pytest.mark.parametrize("seed", range(6))
def test_cycles_equal_brute_force(con, seed, directed, shape):
    rng = random.Random(seed * 31 + len(shape))
    n = rng.randint(2, 9)
    edges = [(rng.randrange(n), rng.randrange(n)) for _ in range(rng.randint(1, 4 * n))]
    weights = [rng.randint(0, 3) for _ in edges]
    con.ingest("g", pa.table({"src": [u for u, _ in edges], "dst": [v for _, v in edges],
                              "w": weights, "i": list(range(len(edges)))}),
               vertices=pa.table({"id": list(range(n))}), undirected=not directed,
               replace=True)
    hops = [(rng.choice(["out", "in", "both"]), t) for (t,) in SHAPES[shape]]
    start = rng.choice([None, rng.randrange(n)])
    condition = rng.random() < 0.5  # a condition on the second edge (a mask from every start)
    text = "(a)"
    for h, (direction, target) in enumerate(hops):
        inner = f"e{h}" + (" WHERE e1.w >= 1" if condition and h == 1 else "")
        text += ARROW[direction].format(e=inner) + f"({target})"
    names = sorted({"a"} | {t for _, t in hops})
    columns = ", ".join([f"{x}.id AS {x}" for x in names]
                        + [f"e{h}.i AS i{h}" for h in range(len(hops))])
    where = f" WHERE a.id = {start}" if start is not None else ""
    got = Counter(con.execute(f"SELECT * FROM GRAPH_TABLE (g MATCH {text}{where} "
                              f"COLUMNS ({columns}))").fetchall())
    def keep(h, i):
        return not condition or h != 1 or weights[i] >= 1

    assert got == brute(n, edges, directed, hops, start, keep)
    count = con.execute(f"SELECT count(*) FROM GRAPH_TABLE (g MATCH {text}{where} "
                        f"COLUMNS (a.id AS a))").fetchone()[0]
    assert count == sum(got.values())


def test_triangles_through_a_hub_are_found_from_the_shorter_lists(con):
    """A hub of 2,000 friends whose friends know each other in a ring: the triangles through
    it (each ring edge twice, once per direction round it), without gathering every
    friend's friends' friends."""
    hub, ring = 0, list(range(1, 2001))
    edges = [(hub, v) for v in ring] + [(v, ring[(k + 1) % len(ring)])
                                        for k, v in enumerate(ring)]
    con.ingest("hub", pa.table({"src": [u for u, _ in edges], "dst": [v for _, v in edges]}),
               undirected=True, replace=True)
    sql = ("SELECT count(*) FROM GRAPH_TABLE (hub MATCH (a WHERE a.id = 0)-[]-(b)-[]-(c)-[]-(a) "
           "COLUMNS (b.id AS b))")
    assert con.execute(sql).fetchone()[0] == 2 * len(ring)
    plan = con.execute("EXPLAIN ANALYZE " + sql).fetchall()
    text = "\n".join(r[0] for r in plan)
    scanned = int(re.search(r"edges scanned ([\d,]+)", text).group(1).replace(",", ""))
    assert scanned < 20 * len(ring)  # the hub's list and its friends' (3 each), not 2000 each

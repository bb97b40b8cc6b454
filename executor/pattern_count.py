"""``count(*)`` over a pattern, counted without building its rows.

A query that only counts a pattern's rows (``SELECT count(*) FROM GRAPH_TABLE (...)``) needs
their number, not the rows: one per walk for SQL/PGQ's default, which for ``(a)-[]->{1,4}(b)``
from every vertex of a 60 k-edge graph is billions. Where the rows of a pattern are its walks
(no path search prefix) and no hop returns to a vertex bound before it, a row's identity never
matters again once it reaches a vertex: the walks are counted per vertex, a weight vector that
each hop carries one step along its edges (``w'[v] = sum over allowed steps u -> v of w[u]``),
quantified hops summing the steps ``m..n``, and the conditions on a hop's end multiplying it out:
``O(hops x edges)`` whatever the count, and never refused by ``max_path_rows`` (no row is
made). Other patterns (a cycle back to a bound vertex, ``ANY``/``ALL SHORTEST``) are matched and
their bindings counted, their walks not built.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from .errors import InvalidArgument
from .plan import PatternMatch

__all__ = ["countable_by_vertex", "walks_by_vertex"]

#: Counts up to this are exact in float64 weights: a vertex's weight is the sum of its
#: predecessors' (each no larger), so every partial sum of a count below it is an exact integer.
EXACT = float(2**53)

#: Levels a quantified hop walks beyond the graph's vertex count. Walks still alive after ``n``
#: steps go round a cycle and stay alive to the quantifier's bound, a pass per level: a bound
#: this far past ``n`` is refused at once rather than walked for hours.
LEVELS = 1_000_000


def countable_by_vertex(node: PatternMatch) -> bool:
    """Whether the rows of ``node`` can be counted per vertex: walks (no prefix) that never
    return to a vertex bound before them."""
    if node.mode != "walk":
        return False
    bound = {node.start}
    for hop in node.hops:
        if hop.target in bound:
            return False
        bound.add(hop.target)
    return True


def walks_by_vertex(xp, n: int, start, hops: list[tuple[Any, int, int, Any]],
                    check: Callable[[], None], exact: bool = True) -> int | float:
    """The number of walks through ``hops`` ((step, low, high, ends) each: ``step(vertices)``
    gives (index into them, neighbour, position) with the hop's masks applied; ``ends`` a bool
    per vertex or None) from one walk at each of ``start`` (repeats count again); with
    ``exact`` False, a float however large."""
    # Weights are capped: a capped weight either vanishes under a later condition (times 0)
    # or keeps the count above the cap, so the count stays exact below 2^53 (refused above it)
    # and finite when not exact, where uncapped weights overflow to inf and inf x 0 is nan.
    cap = 2 * EXACT if exact else 1e300
    vertices, weights = xp.unique(xp.asarray(start, dtype=np.int64), return_counts=True)
    weights = weights.astype(np.float64)
    for step, low, high, ends in hops:
        total = xp.zeros(n, dtype=np.float64)
        for length in range(high + 1):
            check()
            if length >= low:
                total[vertices] += weights
            if length == high or vertices.size == 0:
                break
            if length == n + 1 and high - length > LEVELS:
                raise InvalidArgument(
                    f"the quantifier's upper bound {high} goes round a cycle: walks are counted "
                    f"a level at a time, and bounds up to {n + LEVELS} are counted on this "
                    "graph; give a smaller bound, or select paths (ANY SHORTEST, ALL "
                    "SHORTEST, ANY k)")
            idx, nbrs, _ = step(vertices)
            gained = xp.minimum(xp.bincount(nbrs, weights=weights[idx], minlength=n), cap)
            vertices = xp.flatnonzero(gained)
            weights = gained[vertices]
        if ends is not None:
            total *= ends
        xp.minimum(total, cap, out=total)
        vertices = xp.flatnonzero(total)
        weights = total[vertices]
    count = float(weights.sum()) if weights.size else 0.0
    if not exact:
        return count
    if count > EXACT:
        raise InvalidArgument(f"the pattern has about {count:.3g} rows, more than graphdb counts "
                              "exactly without building them (2^53)")
    return int(count)

"""Where the vertices of a large drawing go, computed on the server with numpy and scipy.

A force-directed layout in the browser (Cytoscape's fCoSE) takes tens of seconds on a few
thousand vertices; the explorer draws those at the positions this module computes (Cytoscape's
``preset`` layout) and leaves fCoSE to small drawings. The method is sparse stress
(Ortmann, Klimenta and Brandes, "A Sparse Stress Model", GD 2016), in three vectorized steps:

1. **Pivots.** In each connected component, up to :data:`PIVOTS` vertices chosen farthest
   first (each the vertex farthest from those chosen), and the breadth-first distances from
   them (``scipy.sparse.csgraph``). A component of at most :data:`PIVOTS` vertices has all of
   them as pivots, so its stress is the full one.
2. **Start: pivot MDS** (Brandes and Pich, "Eigensolver Methods for Progressive
   Multidimensional Scaling of Large Data", GD 2006): the double-centred squared distances
   to the pivots, projected on the two leading eigenvectors of their small Gram matrix.
3. **Stress majorization** on the sparse terms: every edge (length 1), and every vertex to
   every pivot of its component (their graph distance, weighted by the size of the pivot's
   region over the squared distance), a few Jacobi steps; then vertices that ended up on top
   of each other (leaves of one hub look alike to every pivot) are pushed apart
   (``scipy.spatial.cKDTree``).

The components are laid out apart and packed in rows, largest first. Last, the drawing is
scaled so that the typical vertex is :data:`NEAREST` pixels from its nearest one (a graph of
small diameter is drawn by stress in a small disc, crowded), and vertices nearer than
:data:`APART` of that are pushed apart (leaves of one hub look alike to every pivot, and the
middle of a small-world graph is crowded): the vertices keep their room at any size.
"""

from __future__ import annotations

import threading

import numpy as np

__all__ = ["positions", "prepare_layout", "NEAREST", "PIVOTS", "SERVER_LAYOUT_FROM"]

#: Drawings of this many vertices or more are laid out here; smaller ones by fCoSE in the page.
SERVER_LAYOUT_FROM = 200

#: The typical distance from a vertex to its nearest one, in pixels (before the view is
#: fitted to the window; the page draws a large drawing's vertices 7 pixels wide).
NEAREST = 10.0
#: Pivots per component (the sparse stress model's k).
PIVOTS = 24
#: Pivots of a component chosen farthest first (the others at random).
FARTHEST = 4
#: Stress majorization steps.
STEPS = 30
#: Vertices closer than this (a share of the typical distance to the nearest vertex) are pushed
#: apart at the end.
APART = 0.6
#: Vertices of small components whose distances are computed at once.
CHUNK = 512
#: Space between packed components, in edge lengths.
MARGIN = 1.5


_PREPARED = threading.Event()


def prepare_layout() -> None:
    """Import what :func:`positions` uses in a background thread, once (scipy's graph and
    spatial modules take a second to load: before a drawing is asked for, not while it is)."""
    if _PREPARED.is_set():
        return
    _PREPARED.set()

    def load() -> None:
        import scipy.sparse.csgraph  # noqa: F401
        import scipy.spatial  # noqa: F401

    threading.Thread(target=load, name="graphdb-explorer-layout", daemon=True).start()


def positions(count: int, sources, targets, *, seed: int = 0) -> np.ndarray:
    """The positions (``count`` x 2, pixels) of a drawing of ``count`` vertices whose edges go
    from ``sources[i]`` to ``targets[i]`` (vertex numbers; direction and repeats do not
    matter)."""
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components

    xy = np.zeros((count, 2))
    if count == 0:
        return xy
    s = np.asarray(sources, dtype=np.int64)
    t = np.asarray(targets, dtype=np.int64)
    keep = s != t
    s, t = s[keep], t[keep]
    adjacency = coo_matrix((np.ones(2 * len(s), dtype=np.int8), (np.r_[s, t], np.r_[t, s])),
                           shape=(count, count)).tocsr()
    adjacency.data[:] = 1  # repeated edges summed: one edge
    components, labels = connected_components(adjacency, directed=False)
    sizes = np.bincount(labels, minlength=components)
    rank = np.argsort(sizes, kind="stable")  # the components, smallest first
    place = np.empty(components, dtype=np.int64)
    place[rank] = np.arange(components)
    order = np.argsort(place[labels], kind="stable")  # each component's vertices together
    starts = np.r_[0, np.cumsum(sizes[rank])]
    members = [order[starts[k]:starts[k + 1]] for k in range(components)]
    grouped = adjacency[order][:, order].tocsr()
    rng = np.random.default_rng(seed)
    # small components: all their pairs are terms; each starts at random in a disc of its
    # size (the full stress untangles it)
    small = int((sizes <= PIVOTS).sum())
    terms = _small_terms(grouped, order, starts[:small + 1])
    first = order[:starts[small]]
    xy[first] = rng.normal(size=(len(first), 2)) * np.sqrt(sizes[labels[first]])[:, None] / 2
    for k in range(small, components):  # large ones: pivots, pivot MDS, the pivots' terms
        block = grouped[starts[k]:starts[k + 1], starts[k]:starts[k + 1]]
        pivots, d = _pivots(block, rng)  # d: pivots x members
        xy[members[k]] = _pivot_mds(d, rng)
        terms.append(_pivot_terms(members[k], pivots, d))
    xy = _stress(xy, s, t, terms)
    return _apart(_typical(_pack(xy, members)), rng) * NEAREST


def _typical(xy: np.ndarray) -> np.ndarray:
    """The layout scaled so that the typical (median) vertex is 1 from its nearest one."""
    from scipy.spatial import cKDTree

    if len(xy) < 2:
        return xy
    typical = float(np.median(cKDTree(xy).query(xy, k=2)[0][:, 1]))
    return xy / typical if typical > 0 else xy


def _small_terms(grouped, order: np.ndarray, starts: np.ndarray) -> list[tuple]:
    """The terms of the small components (every pair of vertices of one, at its distance),
    their distances computed a few hundred vertices at a time."""
    terms = []
    k = 0
    while k + 1 < len(starts):
        a = starts[k]
        last = max(k + 1, int(np.searchsorted(starts, a + CHUNK, side="right")) - 1)
        b = starts[last]
        d = _distances(grouped[a:b, a:b], np.arange(b - a))
        ii, jj = np.nonzero(np.isfinite(d) & (d > 0))
        dij = d[ii, jj]
        terms.append((order[a + ii], order[a + jj], dij, 1 / dij ** 2))
        k = last
    return terms


def _distances(adjacency, sources: np.ndarray) -> np.ndarray:
    from scipy.sparse.csgraph import shortest_path

    return shortest_path(adjacency, method="D", directed=False, unweighted=True,
                         indices=sources)


def _pivots(adjacency, rng) -> tuple[np.ndarray, np.ndarray]:
    """:data:`PIVOTS` vertices of one large component (numbered from 0) and their distances
    to every vertex: the first :data:`FARTHEST` farthest first (each the vertex farthest from
    those chosen: they span the drawing), the others at random (Brandes and Pich found both
    good; farthest-first costs a search each)."""
    n = adjacency.shape[0]
    chosen = [0]
    rows = [_distances(adjacency, np.array([0]))[0]]
    nearest = rows[0]
    for _ in range(FARTHEST - 1):
        chosen.append(int(np.argmax(nearest)))
        rows.append(_distances(adjacency, np.array(chosen[-1:]))[0])
        nearest = np.minimum(nearest, rows[-1])
    others = np.setdiff1d(np.arange(n), chosen)
    rest = rng.choice(others, PIVOTS - FARTHEST, replace=False)
    return np.r_[chosen, rest], np.vstack(rows + [_distances(adjacency, rest)])


def _pivot_mds(d: np.ndarray, rng) -> np.ndarray:
    """Pivot MDS of one component from its pivots' distances ``d`` (pivots x members)."""
    c = d ** 2
    c = c - c.mean(axis=0) - c.mean(axis=1, keepdims=True) + c.mean()
    c *= -0.5
    values, vectors = np.linalg.eigh(c @ c.T)  # ascending
    xy = c.T @ vectors[:, -2:][:, ::-1]
    spread = np.abs(xy).max()
    if spread > 0:  # scale to the graph's distances: the farthest pivot pair's
        xy *= d.max() / (2 * spread)
    return xy + rng.normal(scale=0.05, size=xy.shape)  # identical rows (a hub's leaves) apart


def _pivot_terms(members: np.ndarray, pivots: np.ndarray, d: np.ndarray):
    """The sparse stress model's terms of one component: each member towards each pivot, at
    their distance, weighted by the size of the pivot's region over the squared distance."""
    region = np.bincount(np.argmin(d, axis=0), minlength=len(pivots)).astype(float)
    i = np.tile(members, len(pivots))
    j = np.repeat(members[pivots], len(members))
    dij = d.ravel()
    keep = dij > 0
    w = np.repeat(region, len(members))[keep] / dij[keep] ** 2
    return i[keep], j[keep], dij[keep], w


def _stress(xy, s, t, terms) -> np.ndarray:
    """Localized stress majorization (Jacobi steps) on the edges (length 1) and ``terms``."""
    edges = (np.r_[s, t], np.r_[t, s], np.ones(2 * len(s)), np.ones(2 * len(s)))
    i, j, d, w = (np.concatenate(part) for part in zip(edges, *terms))
    total = np.bincount(i, w, minlength=len(xy))
    moving = total > 0
    share = np.where(moving, 1 / np.where(moving, total, 1), 0)  # each term's part of its end
    x, y = xy[:, 0].copy(), xy[:, 1].copy()
    for _ in range(STEPS):
        dx, dy = x[i] - x[j], y[i] - y[j]
        scale = w * d / np.maximum(np.sqrt(dx * dx + dy * dy), 1e-9)
        nx = np.bincount(i, w * x[j] + scale * dx, minlength=len(x)) * share
        ny = np.bincount(i, w * y[j] + scale * dy, minlength=len(y)) * share
        x = np.where(moving, nx, x)
        y = np.where(moving, ny, y)
    return np.column_stack((x, y))


def _apart(xy: np.ndarray, rng, rounds: int = 10) -> np.ndarray:
    """Push vertices closer than :data:`APART` (after :func:`_typical`) away from each other."""
    from scipy.spatial import cKDTree

    for _ in range(rounds):
        pairs = cKDTree(xy).query_pairs(APART, output_type="ndarray")
        if not len(pairs):
            break
        a, b = pairs[:, 0], pairs[:, 1]
        dx, dy = xy[a, 0] - xy[b, 0], xy[a, 1] - xy[b, 1]
        norm = np.sqrt(dx * dx + dy * dy)
        same = norm < 1e-9
        if same.any():  # on top of each other: apart in a random direction
            angle = rng.uniform(0, 2 * np.pi, int(same.sum()))
            dx[same], dy[same], norm[same] = np.cos(angle), np.sin(angle), 1.0
        push = (APART - np.minimum(norm, APART)) / (2 * norm)
        n = len(xy)
        xy = xy + np.column_stack((np.bincount(a, push * dx, n) - np.bincount(b, push * dx, n),
                                   np.bincount(a, push * dy, n) - np.bincount(b, push * dy, n)))
    return xy


def _pack(xy: np.ndarray, members: list[np.ndarray]) -> np.ndarray:
    """The components side by side in rows (largest first), about 1.6 times as wide as high."""
    boxes = []
    for m in members:
        part = xy[m]
        low = part.min(axis=0)
        size = part.max(axis=0) - low + MARGIN
        boxes.append((low, size))
    area = sum(float(size[0] * size[1]) for _, size in boxes)
    width = max(max(float(size[0]) for _, size in boxes), np.sqrt(area * 1.6))
    out = np.empty_like(xy)
    x = y = row = 0.0
    for c in sorted(range(len(members)), key=lambda c: -len(members[c])):
        low, size = boxes[c]
        if x > 0 and x + size[0] > width:
            x, y, row = 0.0, y + row, 0.0
        out[members[c]] = xy[members[c]] - low + (x, y)
        x += size[0]
        row = max(row, float(size[1]))
    return out

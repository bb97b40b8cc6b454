"""Side-by-side benchmark of the CPU graph functions against scipy, igraph and networkx, each
called directly and through SQL.

One process run builds each graph once (R-MAT directed, a 2-D grid undirected), builds every
peer's own structure from it, ingests it into a real database (``graphdb.connect(device="cpu")``
and ``Connection.ingest`` of a Parquet edge list, weights included, parallel edges and self loops
kept), and then times only the functions: the best of ``--repeats`` runs, after the load,
interleaved across contenders. Every graph function of the registry runs twice for us:

- **direct**: ``graphdb.executor.algorithms.run(name, graph, options)`` on an in-memory graph;
- **SQL**: ``con.execute("SELECT vertex, depth FROM bfs(g, s)").arrow()`` and the like: the
  whole statement (parse, bind, plan, the graph read from storage on first use, the operator,
  the id mapping, the Arrow result). The SQL result is checked against the direct one.

The target is **SQL / fastest peer <= 1.0** for every function: every graph function through
SQL at least as fast as the faster of scipy and igraph answering the same question. A function
with no peer that answers the same question (sswp, cdlp; lcc on a directed graph) shows its
times with no ratio.

Our compiled kernels (numba) are loaded, or compiled on a cold cache, once on a tiny graph before
any timing (``kernel_warmup_s`` in the JSON). Our first call on each graph is reported too: it
includes building the forms we cache (unsigned CSR views, inverse degrees, bucket widths) and,
through SQL, reading the graph from storage. Our PageRank runs on the threads of ``--threads``
(default all cores); the peers are single-threaded, except what igraph does inside.

Peers, each with its fastest input form (scipy on an int32 ``csr_matrix``):

- bfs: scipy ``breadth_first_order`` (order only, no depths), igraph ``bfs``;
- khop (k = ``--khop``): scipy ``dijkstra(unweighted=True, limit=k)``, igraph
  ``neighborhood(order=k)``;
- sssp: scipy ``dijkstra``, igraph ``distances``; shortest_path (source to a far vertex): scipy
  ``dijkstra`` with predecessors and the path walked back, igraph ``get_shortest_path``;
- wcc: scipy ``connected_components`` (the faster of 'weak' and, on a symmetric graph,
  'strong'), igraph ``connected_components``;
- pagerank (20 iterations): a plain scipy loop ``x = M @ x`` (no teleport, no dangling term: the
  floor any scipy PageRank pays); igraph ``pagerank`` (PRPACK, solved to convergence: shown for
  scale only);
- lcc on an undirected graph: scipy ``(B @ B) * B`` row sums over d(d-1), igraph
  ``transitivity_local_undirected``;
- neighbors (of the highest out-degree vertex): scipy's CSR slice, igraph ``neighbors``.
- networkx: once per function (bfs, sssp, wcc, pagerank), on graphs where it finishes in
  seconds to a minute: R-MAT scale ``--nx-scale`` and the grid ``--nx-grid``, next to our direct
  timings on the same graphs (target: at least 50x faster).

Usage (defaults: about 5 minutes on 2 cores)::

    python -m tools.bench_cpu [--scale 18] [--grid 700] [--repeats 3] [--threads N] [--out r.json]
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import scipy
import scipy.sparse as sp
from scipy.sparse import csgraph

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from graphdb.executor.algorithms import REGISTRY, run
from graphdb.executor.graph import Graph
from graphdb.generators import grid, random_weights, rmat

#: The functions of the networkx table (networkx answers these on its own graphs).
ALGORITHMS = ("bfs", "sssp", "wcc", "pagerank")
#: Every graph function, in the table's order (the registry's functions, checked in main).
FUNCTIONS = ("bfs", "khop", "sssp", "shortest_path", "k_shortest_paths", "sswp", "wcc",
             "pagerank", "cdlp", "lcc", "neighbors", "degree")
#: timed by another benchmark, not in the default run: Yen's spur searches over a whole R-MAT
#: 18 graph (ours and igraph's) take minutes; tools/bench_graph_language.py times it on a social
#: graph beside networkx
ELSEWHERE = {"k_shortest_paths"}
#: k of k_shortest_paths
K_PATHS = 3
#: Our PageRank pinned to one thread, next to the default (all cores) one.
ONE_THREAD = "pagerank, 1 thread"
PAGERANK_ITERATIONS = 20
CDLP_ITERATIONS = 10


@dataclass
class Workload:
    """One graph in every form the contenders need, built before any timing."""

    name: str
    src: np.ndarray
    dst: np.ndarray
    n: int
    directed: bool
    source: int
    khop: int = 2
    #: the functions timed on this graph (all by default)
    functions: tuple[str, ...] = FUNCTIONS
    graph: Graph = field(init=False)
    weighted: Graph = field(init=False)

    def __post_init__(self) -> None:
        w = random_weights(len(self.src), seed=0)
        self.weights = w
        self.graph = Graph.from_edges(
            self.src, self.dst, self.n, directed=self.directed, name=self.name
        )
        self.weighted = Graph.from_edges(
            self.src,
            self.dst,
            self.n,
            directed=self.directed,
            weights=w,
            name=self.name + "-weighted",
        )
        for g in (self.graph, self.weighted):  # the stored topology: out- and in-CSR
            _ = g.out_csr, g.in_csr
        #: neighbors() asks for the highest out-degree vertex (the most work for everyone)
        self.hub = int(np.argmax(self.graph.out_degrees()))
        #: shortest_path() goes to the vertex the BFS from the source reaches last (far away)
        order = csgraph.breadth_first_order(self.graph.out_csr.to_scipy(), self.source,
                                            directed=True, return_predecessors=False)
        self.target = int(order[-1])

    @property
    def edges(self) -> int:
        return len(self.src)

    def calls(self) -> dict[str, tuple[Graph, dict[str, Any], str]]:
        """Per function: (our in-memory graph, the direct call's options, the SQL statement on
        the ingested graph named like the workload)."""
        g, s = self.name, self.source
        calls = {
            "bfs": (self.graph, {"source": s}, f"SELECT vertex, depth FROM bfs({g}, {s})"),
            "khop": (self.graph, {"source": s, "k": self.khop},
                     f"SELECT vertex, hops FROM khop({g}, {s}, {self.khop})"),
            "sssp": (self.weighted, {"source": s},
                     f"SELECT vertex, distance FROM sssp({g}, {s})"),
            "shortest_path": (self.weighted, {"source": s, "target": self.target},
                              f"SELECT step, vertex, distance FROM shortest_path({g}, {s}, "
                              f"{self.target})"),
            "k_shortest_paths": (self.weighted, {"source": s, "target": self.target, "k": K_PATHS},
                                 f"SELECT path, step, vertex, distance FROM k_shortest_paths("
                                 f"{g}, {s}, {self.target}, {K_PATHS})"),
            "sswp": (self.weighted, {"source": s}, f"SELECT vertex, width FROM sswp({g}, {s})"),
            "wcc": (self.graph, {}, f"SELECT vertex, component FROM wcc({g})"),
            "pagerank": (self.graph, {"max_iterations": PAGERANK_ITERATIONS},
                         f"SELECT vertex, rank FROM pagerank({g}, max_iterations => "
                         f"{PAGERANK_ITERATIONS})"),
            "cdlp": (self.graph, {"max_iterations": CDLP_ITERATIONS},
                     f"SELECT vertex, label FROM cdlp({g}, max_iterations => {CDLP_ITERATIONS})"),
            "lcc": (self.graph, {}, f"SELECT vertex, coefficient FROM lcc({g})"),
            "neighbors": (self.graph, {"vertex": self.hub},
                          f"SELECT neighbor FROM neighbors({g}, {self.hub})"),
            "degree": (self.graph, {}, f"SELECT vertex, degree FROM degree({g})"),
        }
        return {k: v for k, v in calls.items() if k in self.functions}


# --- contenders -----------------------------------------------------------------------------


def one_thread(fn: Callable[[], Any]) -> Callable[[], Any]:
    """``fn`` with our kernels on one thread (they follow Arrow's CPU count), like for like with
    the single-threaded scipy loop."""

    def call() -> Any:
        import pyarrow as pa

        threads = pa.cpu_count()
        pa.set_cpu_count(1)
        try:
            return fn()
        finally:
            pa.set_cpu_count(threads)

    return call


def ours(work: Workload) -> dict[str, Callable[[], Any]]:
    """Direct calls of every function on the in-memory graphs."""
    table = {name: (lambda name=name, g=g, o=o: run(name, g, o))
             for name, (g, o, _) in work.calls().items()}
    if "pagerank" in table:
        table[ONE_THREAD] = one_thread(table["pagerank"])
    return table


def ingest(con, work: Workload) -> float:
    """Store ``work``'s graph (weights included, parallel edges and self loops kept, every
    vertex 0..n-1 listed so that isolated ones exist and internal ids equal the user's) as a
    graph named like the workload; returns the seconds."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="bench-cpu-") as tmp:
        edges, vertices = Path(tmp) / "edges.parquet", Path(tmp) / "vertices.parquet"
        pq.write_table(pa.table({"src": pa.array(work.src, pa.int64()),
                                 "dst": pa.array(work.dst, pa.int64()),
                                 "weight": pa.array(work.weights, pa.float64())}), edges)
        pq.write_table(pa.table({"id": pa.array(np.arange(work.n, dtype=np.int64))}), vertices)
        con.ingest(work.name, edges, vertices=str(vertices), undirected=not work.directed,
                   format="parquet", src="src", dst="dst", weight="weight")
    return time.perf_counter() - start


def sql(con, work: Workload) -> dict[str, Callable[[], Any]]:
    """The same functions as SQL statements on the ingested graph, fetched as Arrow."""
    table = {name: (lambda q=q: con.execute(q).arrow()) for name, (_, _, q) in work.calls().items()}
    if "pagerank" in table:
        table[ONE_THREAD] = one_thread(table["pagerank"])
    return table


def same_answer(name: str, direct, arrow) -> bool:
    """Whether the SQL rows are the direct call's (ids are equal: ingested as 0..n-1)."""
    cols = direct.columns
    for column in arrow.column_names:
        ours_ = np.asarray(cols[column])
        theirs = arrow.column(column).to_numpy()
        if name in ("bfs", "khop", "sssp", "sswp"):  # rows of reached vertices, any order
            order, o2 = np.argsort(np.asarray(cols["vertex"])), np.argsort(
                arrow.column("vertex").to_numpy())
            ours_, theirs = ours_[order], theirs[o2]
        if ours_.shape != theirs.shape:
            return False
        if ours_.dtype.kind == "f" and not np.allclose(ours_, theirs, rtol=1e-12, atol=0):
            return False
        if ours_.dtype.kind != "f" and not np.array_equal(ours_, theirs):
            return False
    return True


def _scipy_matrix(graph: Graph, weights: np.ndarray | None = None) -> sp.csr_matrix:
    csr = graph.out_csr
    data = np.ones(csr.num_edges) if weights is None else weights
    return sp.csr_matrix(
        (data, csr.targets.astype(np.int32), csr.offsets.astype(np.int32)),
        shape=(graph.num_vertices, graph.num_vertices),
    )


def scipy_peer(work: Workload) -> dict[str, Callable[[], Any]]:
    unit = _scipy_matrix(work.graph)
    weighted = _scipy_matrix(work.weighted, work.weighted.csr("out", weights=True).weights)
    out_degree = np.diff(unit.indptr)
    inverse = np.divide(1.0, out_degree, out=np.zeros(work.n), where=out_degree > 0)
    incsr = work.graph.in_csr  # M[v, u] = 1/outdeg(u) per edge u->v, parallel edges kept
    pull = sp.csr_matrix(
        (inverse[incsr.targets], incsr.targets.astype(np.int32), incsr.offsets.astype(np.int32)),
        shape=(work.n, work.n),
    )

    def wcc() -> Any:
        return csgraph.connected_components(unit, directed=True, connection="weak")

    def wcc_symmetric() -> Any:  # the same components on a graph that stores both directions
        return csgraph.connected_components(unit, directed=True, connection="strong")

    def matvec_loop() -> np.ndarray:
        x = np.full(work.n, 1.0 / work.n)
        for _ in range(PAGERANK_ITERATIONS):
            x = pull @ x
        return x

    def shortest_path() -> list[int]:
        _, pred = csgraph.dijkstra(weighted, directed=True, indices=work.source,
                                   return_predecessors=True)
        path, v = [], work.target
        while v >= 0:
            path.append(v)
            v = pred[v]
        return path[::-1]

    def neighbors() -> np.ndarray:
        return unit.indices[unit.indptr[work.hub]:unit.indptr[work.hub + 1]].copy()

    peers = {
        "bfs": lambda: csgraph.breadth_first_order(
            unit, work.source, directed=True, return_predecessors=False
        ),
        "khop": lambda: csgraph.dijkstra(unit, directed=True, indices=work.source,
                                         unweighted=True, limit=work.khop),
        "sssp": lambda: csgraph.dijkstra(weighted, directed=True, indices=work.source),
        "shortest_path": shortest_path,
        "wcc": wcc,
        "pagerank": matvec_loop,
        "neighbors": neighbors,
        "degree": lambda: np.diff(unit.indptr),
    }
    if not work.directed:
        peers["wcc (strong, symmetric)"] = wcc_symmetric
        simple = unit.copy()
        simple.data[:] = 1.0
        simple.setdiag(0)
        simple.eliminate_zeros()
        simple = (simple > 0).astype(np.float64).tocsr()

        def lcc() -> np.ndarray:  # Graphalytics LCC of an undirected graph: 2 triangles/(d(d-1))
            d = np.diff(simple.indptr).astype(np.float64)
            closed = np.asarray((simple @ simple).multiply(simple).sum(axis=1)).ravel()
            return np.divide(closed, d * (d - 1), out=np.zeros(work.n), where=d > 1)

        peers["lcc"] = lcc
    return {k: v for k, v in peers.items() if k.split(" ")[0] in work.functions}


def igraph_peer(work: Workload) -> dict[str, Callable[[], Any]] | None:
    try:
        import igraph
    except ImportError:
        return None
    g = igraph.Graph(n=work.n, edges=np.column_stack([work.src, work.dst]).tolist(),
                     directed=work.directed)
    g.es["weight"] = work.weights.tolist()
    peers = {
        "bfs": lambda: g.bfs(work.source, mode="out"),
        "khop": lambda: g.neighborhood(work.source, order=work.khop, mode="out"),
        "sssp": lambda: g.distances(work.source, weights="weight", mode="out"),
        "shortest_path": lambda: g.get_shortest_path(work.source, work.target, weights="weight",
                                                     mode="out", output="vpath"),
        "wcc": lambda: g.connected_components(mode="weak"),
        "pagerank": lambda: g.pagerank(damping=0.85, directed=work.directed),
        "neighbors": lambda: g.neighbors(work.hub, mode="out"),
        "degree": lambda: g.degree(mode="out"),
        "k_shortest_paths": lambda: g.get_k_shortest_paths(work.source, work.target, k=K_PATHS,
                                                           weights="weight", mode="out"),
    }
    if not work.directed:  # igraph's LCC is the undirected one
        peers["lcc"] = lambda: g.transitivity_local_undirected(mode="zero")
    return {k: v for k, v in peers.items() if k in work.functions}


def networkx_peer(work: Workload) -> dict[str, Callable[[], Any]] | None:
    try:
        import networkx as nx
    except ImportError:
        return None
    g = nx.DiGraph() if work.directed else nx.Graph()
    g.add_nodes_from(range(work.n))
    g.add_weighted_edges_from(zip(work.src.tolist(), work.dst.tolist(), work.weights.tolist()))

    def pagerank() -> Any:
        try:  # tol=0 would never converge: 20 iterations then the exception
            return nx.pagerank(g, alpha=0.85, max_iter=PAGERANK_ITERATIONS, tol=1e-300)
        except nx.PowerIterationFailedConvergence:
            return None

    wcc = nx.weakly_connected_components if work.directed else nx.connected_components
    return {
        "bfs": lambda: nx.single_source_shortest_path_length(g, work.source),
        "sssp": lambda: nx.single_source_dijkstra_path_length(g, work.source, weight="weight"),
        "wcc": lambda: list(wcc(g)),
        "pagerank": pagerank,
    }


# --- running and reporting ------------------------------------------------------------------


def race(
    contenders: dict[str, dict[str, Callable[[], Any]] | None], repeats: int, once: tuple = ()
) -> dict[str, dict[str, dict]]:
    """Time every contender's tasks, interleaved: repeat r of a task runs for all contenders
    before repeat r + 1, so a change in machine load hits them alike. Entries of ``once``
    (a contender, or ``contender:task``) run a single time. Returns contender -> task ->
    first/best seconds and the last result.
    """
    results: dict[str, dict[str, dict]] = {name: {} for name in contenders}
    tasks = dict.fromkeys(t for tasks in contenders.values() for t in (tasks or {}))
    for task in tasks:
        for r in range(max(1, repeats)):
            for name, table in contenders.items():
                single = name in once or f"{name}:{task}" in once
                if not table or task not in table or (single and r > 0):
                    continue
                start = time.perf_counter()
                value = table[task]()
                seconds = time.perf_counter() - start
                entry = results[name].setdefault(task, {"first_s": seconds, "best_s": seconds})
                entry["best_s"] = min(entry["best_s"], seconds)
                entry["result"] = value
    return results


def rmat_workload(scale: int, edge_factor: int, khop: int,
                  functions: tuple[str, ...] = FUNCTIONS) -> Workload:
    src, dst = rmat(scale, edge_factor)
    return Workload(f"rmat{scale}", src, dst, 1 << scale, True, int(src[0]), khop, functions)


def grid_workload(side: int, khop: int) -> Workload:
    src, dst = grid(side, side)
    return Workload(f"grid{side}x{side}", src, dst, side * side, False, 0, khop,
                    tuple(f for f in FUNCTIONS if f not in ELSEWHERE))


def main_table(workloads: list[Workload], repeats: int, con) -> list[dict]:
    """Ours (direct and through SQL) against scipy and igraph, one row per graph and function."""
    rows = []
    for work in workloads:
        log(f"{work.name}: {work.n} vertices, {work.edges} edges; ingesting, building the "
            "peers' graphs")
        ingest_s = ingest(con, work)
        contenders = {"ours": ours(work), "sql": sql(con, work), "scipy": scipy_peer(work),
                      "igraph": igraph_peer(work)}
        log(f"{work.name}: ingested in {ingest_s:.1f} s; timing")
        timed = race(contenders, repeats, once=("igraph:pagerank",))  # shown for scale only
        mine, via_sql, sci, igr = (timed[k] for k in ("ours", "sql", "scipy", "igraph"))
        functions = [f for f in (*FUNCTIONS, ONE_THREAD) if f in mine]
        if "wcc (strong, symmetric)" in sci:
            sci["wcc"] = min(
                sci.pop("wcc (strong, symmetric)"), sci["wcc"], key=lambda r: r["best_s"]
            )
        if "pagerank" in sci:
            sci[ONE_THREAD] = sci["pagerank"]
        for function in functions:
            peers = {}
            if function in sci:
                peers["scipy"] = sci[function]["best_s"]
            if function in igr and function != "pagerank":  # PRPACK solves, not 20 iterations
                peers["igraph"] = igr[function]["best_s"]
            bar_name = min(peers, key=peers.get) if peers else None
            row = {
                "graph": work.name,
                "function": function,
                "ours_s": mine[function]["best_s"],
                "ours_first_s": mine[function]["first_s"],
                "sql_s": via_sql[function]["best_s"],
                "sql_first_s": via_sql[function]["first_s"],
                "sql_matches_direct": same_answer(function.split(",")[0],
                                                  mine[function]["result"],
                                                  via_sql[function]["result"]),
                "scipy_s": sci.get(function, {}).get("best_s"),
                "igraph_s": igr.get(function, {}).get("best_s"),
                "bar": bar_name,
                "bar_s": peers.get(bar_name),
                "ingest_s": ingest_s,
            }
            row["ratio"] = row["ours_s"] / row["bar_s"] if peers else None
            row["sql_ratio"] = row["sql_s"] / row["bar_s"] if peers else None
            row["met"] = None if not peers else row["sql_ratio"] <= 1.0
            rows.append(row)
        for table in timed.values():  # the results are only for the check above
            for entry in table.values():
                entry.pop("result", None)
    return rows


def networkx_table(workloads: list[Workload], repeats: int) -> list[dict]:
    """Ours against networkx (one run each), timed side by side on the same graphs."""
    rows = []
    for work in workloads:
        log(f"{work.name}: networkx (one run each)")
        timed = race(
            {"ours": {k: v for k, v in ours(work).items() if k in ALGORITHMS},
             "networkx": networkx_peer(work)}, repeats, once=("networkx",)
        )
        mine, nxr = timed["ours"], timed["networkx"]
        for algorithm in ALGORITHMS:
            if algorithm in nxr:
                ratio = nxr[algorithm]["best_s"] / mine[algorithm]["best_s"]
                rows.append(
                    {
                        "graph": work.name,
                        "algorithm": algorithm,
                        "ours_s": mine[algorithm]["best_s"],
                        "networkx_s": nxr[algorithm]["best_s"],
                        "speedup": ratio,
                        "met": ratio >= 50,
                    }
                )
    return rows


def fmt(seconds: float | None) -> str:
    return "-" if seconds is None else f"{seconds:.4f}"


def render(rows: list[dict], nx_rows: list[dict]) -> str:
    lines = [
        (
            "| graph | function | SQL (s) | SQL, 1st (s) | direct (s) | direct, 1st (s) "
            "| scipy (s) | igraph (s) | SQL / fastest peer | direct / fastest peer "
            "| SQL <= peer |"
        ),
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        if r["bar"] is None:
            peer, ratio, direct, met = "no peer", "-", "-", "-"
        else:
            peer = "scipy matvec loop" if r["function"].startswith("pagerank") else r["bar"]
            ratio, direct = f"{r['sql_ratio']:.2f} ({peer})", f"{r['ratio']:.2f}"
            met = "yes" if r["met"] else "no"
        check = "" if r["sql_matches_direct"] else " (SQL result differs!)"
        lines.append(
            f"| {r['graph']} | {r['function']} | {fmt(r['sql_s'])} | {fmt(r['sql_first_s'])} "
            f"| {fmt(r['ours_s'])} | {fmt(r['ours_first_s'])} | {fmt(r['scipy_s'])} "
            f"| {fmt(r['igraph_s'])} | {ratio} | {direct} | {met}{check} |"
        )
    met = [r for r in rows if r["met"] is not None]
    lines += ["", f"SQL at least as fast as the fastest peer: {sum(r['met'] for r in met)} of "
              f"{len(met)} (graph, function) pairs with a peer.", ""]
    lines += [
        "| graph (networkx size) | algorithm | ours (s) | networkx (s) | speedup | >= 50x |",
        "|---|---|---|---|---|---|",
    ]
    for r in nx_rows:
        lines.append(
            f"| {r['graph']} | {r['algorithm']} | {fmt(r['ours_s'])} | {fmt(r['networkx_s'])} "
            f"| {r['speedup']:.0f}x | {'yes' if r['met'] else 'no'} |"
        )
    return "\n".join(lines)


def warm_up_kernels() -> float:
    """Run every function once on a tiny graph so that no timing includes loading (or, on a
    cold cache, compiling) the numba kernels; returns the seconds that took."""
    from graphdb.executor.algorithms.bfs import cpu as bfs
    from graphdb.executor.algorithms.pagerank import cpu as pagerank
    from graphdb.executor.algorithms.sssp import cpu as sssp
    from graphdb.executor.algorithms.wcc import cpu as wcc

    src, dst = np.array([0, 1, 2, 2]), np.array([1, 2, 0, 3])
    tiny = Graph.from_edges(src, dst, 4, directed=True, weights=np.ones(4), name="warm-up")
    start = time.perf_counter()
    for module in (bfs, pagerank, sssp, wcc):  # a graph this small would otherwise run the
        module.KERNELS.load()  # kernels interpreted
    work = Workload.__new__(Workload)  # the calls of a real workload, on the tiny graph
    work.name, work.source, work.khop, work.hub, work.target = "warm", 0, 2, 2, 3
    work.graph = work.weighted = tiny
    for name, (g, options, _) in work.calls().items():
        run(name, g, options)
    return time.perf_counter() - start


def log(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scale", type=int, default=18, help="R-MAT scale (2**scale vertices)")
    parser.add_argument("--edge-factor", type=int, default=16)
    parser.add_argument("--grid", type=int, default=700, help="grid side")
    parser.add_argument("--khop", type=int, default=2, help="k of the khop() query")
    parser.add_argument("--lcc-scale", type=int, default=0,
                        help="R-MAT scale of lcc() on a directed graph when it should differ "
                        "from --scale; 0 (default): time it on the --scale graph")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--nx-scale", type=int, default=16, help="R-MAT scale for networkx")
    parser.add_argument("--nx-grid", type=int, default=500, help="grid side for networkx")
    parser.add_argument("--threads", type=int, help="our kernels' threads (default: all cores)")
    parser.add_argument("--out", type=Path, help="write the results as JSON here")
    args = parser.parse_args(argv)
    missing = set(REGISTRY) - set(FUNCTIONS) - ELSEWHERE
    if missing:  # a new graph function must get its row (and its peers, if any)
        raise SystemExit(f"bench_cpu does not time {sorted(missing)}; add them to FUNCTIONS")

    import graphdb

    if args.threads:
        import pyarrow as pa  # the 'threads' setting; the kernels follow Arrow's CPU count

        pa.set_cpu_count(args.threads)
    warmup = warm_up_kernels()
    log(f"kernels loaded (or compiled) in {warmup:.2f} s")
    log("generating graphs")
    separate_lcc = bool(args.lcc_scale) and args.lcc_scale != args.scale
    rmat_functions = tuple(f for f in FUNCTIONS if f not in ELSEWHERE
                           and (f != "lcc" or not separate_lcc))
    big = [rmat_workload(args.scale, args.edge_factor, args.khop, rmat_functions),
           grid_workload(args.grid, args.khop)]
    if separate_lcc:
        big.append(rmat_workload(args.lcc_scale, args.edge_factor, args.khop, ("lcc",)))
    with graphdb.connect(device="cpu") as con:  # a temporary database
        rows = main_table(big, args.repeats, con)
    known = {w.name: w for w in big if set(ALGORITHMS) <= set(w.functions)}
    side = args.nx_grid
    small = [
        known.get(f"rmat{args.nx_scale}") or rmat_workload(args.nx_scale, args.edge_factor,
                                                           args.khop),
        known.get(f"grid{side}x{side}") or grid_workload(side, args.khop),
    ]
    nx_rows = networkx_table(small, args.repeats)
    print(render(rows, nx_rows))
    if args.out:
        args.out.write_text(
            json.dumps(
                {
                    "machine": {
                        "python": platform.python_version(),
                        "numpy": np.__version__,
                        "scipy": scipy.__version__,
                        "processor": platform.processor(),
                        "cpus": __import__("os").cpu_count(),
                        "numba": __import__("numba").__version__,
                        "threads": __import__("numba").get_num_threads(),
                    },
                    "kernel_warmup_s": warmup,
                    "parameters": vars(args) | {"out": str(args.out)},
                    "results": rows,
                    "networkx": nx_rows,
                },
                indent=2,
            )
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

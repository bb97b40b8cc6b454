"""The graph handle that every operator receives.

A :class:`Graph` is one version of a graph as the executor sees it: dense internal vertex ids
``0..V-1``, its sizes, and its arrays: the out-CSR, the in-CSR (for an undirected graph the same
object) and the edge weights aligned with each. Operators never see the user's ids: the runner
maps them in (sources) and out (result columns).

Nothing is loaded until an operator asks, and then only what it asks for: ``graph.csr("out")``
reads offsets and targets, never the weights (``graph.csr("out", weights=True)`` adds them); the
in-edges of a directed graph are read only by an operator that needs them. What is read or built
(kernel views, a derived in-CSR, device copies) is held by the residency owner
(:mod:`graphdb.executor.residency`) under the graph's key, never on the handle: two handles of one
version share it, and its bytes count against the budget.
"""

from __future__ import annotations

import uuid
import weakref
from collections.abc import Callable, Hashable, Iterator
from dataclasses import dataclass
from typing import Any, TypeVar

import numpy as np

from graphdb.catalog import CorruptGraph
from graphdb.catalog.validation import offsets_problem, targets_problem

from .arrays import to_numpy
from .residency import RESIDENCY, Residency

__all__ = ["CSR", "Graph", "StoredGraph", "index_dtype"]

T = TypeVar("T")


def index_dtype(num_vertices: int) -> np.dtype:
    """Vertex-id dtype of the stored targets: int32 while V < 2**31, else int64."""
    return np.dtype(np.int32) if num_vertices < 2**31 else np.dtype(np.int64)


@dataclass(frozen=True)
class CSR:
    """Compressed sparse rows: ``targets[offsets[v]:offsets[v+1]]`` are v's neighbours."""

    offsets: np.ndarray  # int64, length V + 1
    targets: np.ndarray  # int32 (int64 when V >= 2**31), length E
    weights: np.ndarray | None = None  # float64, length E, aligned with targets

    def __post_init__(self):
        # A graph's arrays are shared by every statement that reads its version (the residency
        # owner caches them): nothing may write them. Read-only makes a stray in-place write
        # (scipy's sum_duplicates on a view, say) fail loudly instead of corrupting later
        # answers.
        for array in (self.offsets, self.targets, self.weights):
            if isinstance(array, np.ndarray):
                array.flags.writeable = False

    @property
    def num_vertices(self) -> int:
        return len(self.offsets) - 1

    @property
    def num_edges(self) -> int:
        return len(self.targets)

    def degrees(self) -> np.ndarray:
        return np.diff(self.offsets)

    def sources(self) -> np.ndarray:
        """The source of every stored edge (COO row array), in CSR order."""
        return np.repeat(np.arange(self.num_vertices, dtype=self.targets.dtype), self.degrees())

    def to_scipy(self, *, weighted: bool = False):
        """A ``scipy.sparse.csr_array`` view (data are weights, or ones)."""
        import scipy.sparse as sp

        n = self.num_vertices
        if weighted and self.weights is not None:
            data = self.weights
        else:
            data = np.ones(self.num_edges, dtype=np.float64)
        return sp.csr_array((data, self.targets, self.offsets), shape=(n, n))

    @property
    def nbytes(self) -> int:
        w = 0 if self.weights is None else self.weights.nbytes
        return self.offsets.nbytes + self.targets.nbytes + w

    @classmethod
    def from_edges(
        cls, src: np.ndarray, dst: np.ndarray, num_vertices: int, weights: np.ndarray | None = None
    ) -> "CSR":
        """Build a CSR from COO arrays (stable: edges of one source keep their input order)."""
        src = np.asarray(src, dtype=np.int64)
        dst = np.asarray(dst)
        order = np.argsort(src, kind="stable")
        counts = np.bincount(src, minlength=num_vertices)
        offsets = np.zeros(num_vertices + 1, dtype=np.int64)
        np.cumsum(counts, out=offsets[1:])
        targets = dst[order].astype(index_dtype(num_vertices), copy=False)
        w = None if weights is None else np.asarray(weights, dtype=np.float64)[order]
        return cls(offsets, targets, w)

    def transposed(self) -> "CSR":
        """The same edges reversed (an out-CSR's in-CSR), weights carried along."""
        return CSR.from_edges(self.targets, self.sources(), self.num_vertices, self.weights)


class Graph:
    """One graph version: sizes, and its arrays through the residency owner.

    ``read(name)`` returns a stored array by name (``out_offsets``, ``out_targets``,
    ``out_weights``, ``in_offsets``, ...), or raises ``KeyError`` for one the graph does not
    store (an in-memory graph has no in-CSR: it is derived from the out-CSR on first need).
    ``key`` identifies the version in the residency owner; an in-memory graph gets a fresh one,
    forgotten when the handle is collected.

    ``num_edges`` counts stored directed edges: an undirected graph stores each edge in both
    directions, so its ``num_edges`` is twice the number of undirected edges the user loaded.
    """

    #: the name of the column the stored weights came from (None: unweighted)
    weight_name: str | None = "weight"
    #: the stored edge properties, aligned with the out-CSR (None: the graph has none)
    properties: Callable[[], Any] | None = None

    def __init__(self, name: str, num_vertices: int, num_edges: int, directed: bool,
                 weighted: bool, *, read: Callable[[str], np.ndarray],
                 key: Hashable | None = None, residency: Residency = RESIDENCY):
        self.name = name
        self.num_vertices = int(num_vertices)
        self.num_edges = int(num_edges)
        self.directed = bool(directed)
        self.weighted = bool(weighted)
        self._read = read
        self.residency = residency
        if key is None:
            key = ("memory", uuid.uuid4().hex)
            weakref.finalize(self, residency.forget, key)
        self.key = key

    def __repr__(self) -> str:
        return (f"{type(self).__name__}({self.name!r}, {self.num_vertices} vertices, "
                f"{self.num_edges} edges, {'directed' if self.directed else 'undirected'}"
                f"{', weighted' if self.weighted else ''})")

    # -- derived data ---------------------------------------------------------------------------
    def derived(self, name: str, build: Callable[[], T], *, device: str = "cpu",
                nbytes: Callable[[T], int] | None = None) -> T:
        """``build()`` once per graph version, device and ``name``, held by the residency owner."""
        return self.residency.get(self.key, device, name, build, nbytes=nbytes)

    def stored_direction(self, direction: str) -> str:
        """The direction whose stored arrays hold ``direction``'s edges (an undirected graph
        stores its in-edges as its out-edges)."""
        if direction not in ("out", "in"):
            raise ValueError(f"direction must be 'out' or 'in', not {direction!r}")
        return "out" if direction == "in" and not self.directed else direction

    def array(self, name: str) -> np.ndarray:
        """A stored array, read once; the in-CSR of a graph that stores none is derived."""

        def load() -> np.ndarray:
            try:
                return self._read(name)
            except KeyError:
                if not name.startswith("in_"):
                    raise
            inn = self.derived("csr:in:derived", lambda: self.csr("out", weights=self.weighted)
                               .transposed())
            return {"offsets": inn.offsets, "targets": inn.targets,
                    "weights": inn.weights}[name[len("in_"):]]

        return self.derived(f"array:{name}", load)

    def csr(self, direction: str = "out", *, weights: bool = False) -> CSR:
        """The out- or in-CSR; with ``weights`` (on a weighted graph) the aligned weights too."""
        d = self.stored_direction(direction)
        w = self.array(f"{d}_weights") if weights and self.weighted else None
        return CSR(self.array(f"{d}_offsets"), self.array(f"{d}_targets"), w)

    def offsets(self, direction: str = "out") -> np.ndarray:
        """The out- or in-CSR's offsets alone (the targets are not read)."""
        return self.array(f"{self.stored_direction(direction)}_offsets")

    def row(self, direction: str, vertex: int) -> np.ndarray:
        """The targets (``out``) or sources (``in``) of one vertex's edges, in CSR order."""
        csr = self.csr(direction)
        return csr.targets[csr.offsets[vertex]:csr.offsets[vertex + 1]]

    @property
    def out_csr(self) -> CSR:
        return self.csr("out")

    @property
    def in_csr(self) -> CSR:
        """In-edges (CSC of the adjacency); the out-CSR itself for an undirected graph."""
        return self.csr("in")

    def out_degrees(self) -> np.ndarray:
        """Out-degree of every vertex (from the offsets alone: the targets are not read)."""
        return np.diff(self.array("out_offsets"))

    def weights(self, direction: str = "out") -> np.ndarray | None:
        """Edge weights aligned with the out- or in-CSR; None on an unweighted graph."""
        return self.array(f"{self.stored_direction(direction)}_weights") if self.weighted else None

    def weights_of(self, column: str | None) -> np.ndarray | None:
        """The weights a weighted traversal uses, aligned with the out-CSR: the graph's own for
        None or their column's name, else the numeric edge property ``column`` (float64, NULL
        as NaN: a shortest-path search refuses it), which a stored graph reads from its
        properties (:attr:`properties`)."""
        if column is None or column.lower() == (self.weight_name or "").lower():
            return self.weights("out")

        def load() -> np.ndarray:
            table = self.properties() if self.properties is not None else None
            names = [] if table is None else table.column_names
            found = [n for n in names if n.lower() == column.lower()]
            if not found:
                raise KeyError(column)
            values = table.column(found[0]).cast("float64").fill_null(float("nan"))
            return to_numpy(values)

        return self.derived(f"weights:out:{column.lower()}", load)

    def id_dtype(self) -> np.dtype:
        """The dtype of the stored vertex ids (the out-CSR's targets), which kernels take for
        both directions."""
        return self.csr("out").targets.dtype

    @property
    def in_csr_loaded(self) -> bool:
        """Whether :attr:`in_csr` is at hand without loading or building anything."""
        return not self.directed or self.residency.peek(self.key, "cpu",
                                                        "array:in_targets") is not None

    def resident_bytes(self) -> int:
        """Bytes the resident operators need for topology (out + in CSR, weights included)."""
        per_edge = index_dtype(self.num_vertices).itemsize + (8 if self.weighted else 0)
        csr = 8 * (self.num_vertices + 1) + per_edge * self.num_edges
        return csr if not self.directed else 2 * csr

    # -- construction ---------------------------------------------------------------------------
    @classmethod
    def from_csr(cls, name: str, out: CSR, *, directed: bool = True,
                 inn: CSR | None = None) -> "Graph":
        """An in-memory graph over given CSR arrays (an undirected one stores both directions in
        ``out``); the in-CSR is derived on first need unless given."""
        arrays = {"out_offsets": out.offsets, "out_targets": out.targets}
        if out.weights is not None:
            arrays["out_weights"] = out.weights
        if inn is not None and directed:
            arrays.update(in_offsets=inn.offsets, in_targets=inn.targets)
            if inn.weights is not None:
                arrays["in_weights"] = inn.weights
        return cls(name, out.num_vertices, out.num_edges, directed, out.weights is not None,
                   read=arrays.__getitem__)

    @classmethod
    def from_edges(
        cls,
        src: np.ndarray,
        dst: np.ndarray,
        num_vertices: int,
        *,
        directed: bool = True,
        weights: np.ndarray | None = None,
        name: str = "g",
    ) -> "Graph":
        """An in-memory graph from internal-id COO arrays (tests, generators, Python API).

        For an undirected graph each given edge is stored in both directions (a self loop once).
        """
        src = np.asarray(src, dtype=np.int64)
        dst = np.asarray(dst, dtype=np.int64)
        w = None if weights is None else np.asarray(weights, dtype=np.float64)
        if not directed:
            loop = src == dst
            src, dst = np.concatenate([src, dst[~loop]]), np.concatenate([dst, src[~loop]])
            if w is not None:
                w = np.concatenate([w, w[~loop]])
        return cls.from_csr(name, CSR.from_edges(src, dst, num_vertices, w), directed=directed)


class StoredGraph(Graph):
    """A :class:`Graph` whose topology can also be read piecewise through the buffer pool:
    vertex ranges of the CSR blocks, and the slotted pages that page streaming reads."""

    def __init__(self, name: str, num_vertices: int, num_edges: int, directed: bool,
                 weighted: bool, *, read: Callable[[str], np.ndarray], key: Hashable,
                 buffers: Any, graph_id: str, residency: Residency = RESIDENCY,
                 ensure_pages: Callable[[], object] | None = None):
        super().__init__(name, num_vertices, num_edges, directed, weighted, read=read, key=key,
                         residency=residency)
        self.buffers = buffers
        self.graph_id = graph_id
        self._ensure_pages = ensure_pages

    def ensure_pages(self) -> None:
        """Make sure the slotted pages exist before they are read: an ingest stores only the
        CSR blocks, and the first page-streamed plan builds pages from them, once
        (catalog.pages)."""
        if self._ensure_pages is not None:
            self._ensure_pages()

    def id_dtype(self) -> np.dtype:
        return self.buffers.array_info(self.graph_id, "out_targets").dtype

    def edge_range(self, start: int, stop: int, direction: str = "out", *,
                   weights: bool = True) -> CSR:
        """The edges of vertices ``start..stop-1`` (offsets rebased to 0), read block-wise
        (with their weights on a weighted graph, unless ``weights=False``)."""
        d = self.stored_direction(direction)
        read = self.buffers.read_range
        offsets = read(self.graph_id, f"{d}_offsets", start, stop + 1)
        e0, e1 = int(offsets[0]), int(offsets[-1])
        if len(offsets) != stop + 1 - start or not 0 <= e0 <= e1 <= self.num_edges:
            self._corrupt(f"array '{d}_offsets' gives edges {e0}..{e1} to vertices "
                          f"{start}..{stop - 1}")
        targets = read(self.graph_id, f"{d}_targets", e0, e1)
        weights = (read(self.graph_id, f"{d}_weights", e0, e1)
                   if self.weighted and weights else None)
        # Checked as a whole array is (catalog.validation), before a kernel sees the range.
        self._corrupt(offsets_problem(offsets - e0, len(targets), f"{d}_offsets")
                      or targets_problem(targets, self.num_vertices, f"{d}_targets"))
        return CSR(offsets - e0, targets, weights)

    def page_table(self, direction: str = "out") -> np.ndarray:
        """First vertex of every page: ``vertex = table[rid_page] + rid_slot``."""
        d = self.stored_direction(direction)

        def load() -> np.ndarray:
            table = self.buffers.read_array(self.graph_id, f"{d}_page_first_vertex")
            if len(table) and (int(table[0]) != 0 or int(table[-1]) >= max(self.num_vertices, 1)
                               or offsets_problem(table, int(table[-1]), "") is not None):
                self._corrupt(f"array '{d}_page_first_vertex' is not a page table of "
                              f"{self.num_vertices} vertices")
            return table

        return self.derived(f"pages:{d}:first_vertex", load)

    def _corrupt(self, problem: str | None) -> None:
        if problem is not None:
            raise CorruptGraph(problem, graph=self.name, file="meta.lmdb/data.mdb")

    def page_keys(self, direction: str = "out", pids=None) -> list:
        return self.buffers.page_keys(self.graph_id, self.stored_direction(direction), pids)

    def pages_of(self, vertices, direction: str = "out") -> np.ndarray:
        """Page ids holding ``vertices`` (a frontier), hubs' whole chains included."""
        from graphdb.storage.pages import pages_of_vertices

        return pages_of_vertices(self.page_table(direction), vertices)

    def pages(self, direction: str = "out", pids=None) -> Iterator[tuple[Any, np.ndarray]]:
        """Pinned slotted pages in order, prefetched ahead (decode with storage.decode_page)."""
        return self.buffers.scan(self.page_keys(direction, pids))

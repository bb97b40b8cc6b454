"""The graph handle that every operator receives.

A :class:`Graph` is the executor's view of one stored graph: dense internal vertex ids
``0..V-1``, the out-CSR (and the in-CSR, which for an undirected graph is the same object),
and optional edge weights aligned with the CSR targets. Operators never see the user's ids:
the front end maps them in (sources) and out (result columns) through the catalog.

The CSR arrays are materialised lazily through a loader, so an operator that only needs the
out-edges never pays for the in-edges, and a streamed operator can ask for blocks instead.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np

__all__ = ["CSR", "Graph", "index_dtype"]


def index_dtype(num_vertices: int) -> np.dtype:
    """Vertex-id dtype of the stored targets: int32 while V < 2**31, else int64."""
    return np.dtype(np.int32) if num_vertices < 2**31 else np.dtype(np.int64)


@dataclass(frozen=True)
class CSR:
    """Compressed sparse rows: ``targets[offsets[v]:offsets[v+1]]`` are v's neighbours."""

    offsets: np.ndarray  # int64, length V + 1
    targets: np.ndarray  # int32 (int64 when V >= 2**31), length E
    weights: np.ndarray | None = None  # float64, length E, aligned with targets

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


@dataclass
class Graph:
    """A stored graph as the executor sees it.

    ``num_edges`` counts stored directed edges: an undirected graph stores each edge in both
    directions, so its ``num_edges`` is twice the number of undirected edges the user loaded.
    """

    name: str
    num_vertices: int
    num_edges: int
    directed: bool
    weighted: bool
    _load_out: Callable[[], CSR] = field(repr=False)
    _load_in: Callable[[], CSR] | None = field(default=None, repr=False)
    _out: CSR | None = field(default=None, repr=False)
    _in: CSR | None = field(default=None, repr=False)

    @property
    def out_csr(self) -> CSR:
        if self._out is None:
            self._out = self._load_out()
        return self._out

    @property
    def in_csr(self) -> CSR:
        """In-edges (CSC of the adjacency); the out-CSR itself for an undirected graph."""
        if not self.directed:
            return self.out_csr
        if self._in is None:
            if self._load_in is None:
                out = self.out_csr
                self._in = CSR.from_edges(
                    out.targets, out.sources(), self.num_vertices, out.weights
                )
            else:
                self._in = self._load_in()
        return self._in

    @property
    def in_csr_loaded(self) -> bool:
        """Whether :attr:`in_csr` is at hand without loading or building anything."""
        return not self.directed or self._in is not None

    def resident_bytes(self) -> int:
        """Bytes the resident operators need for topology (out + in CSR, weights included)."""
        per_edge = (4 if self.num_vertices < 2**31 else 8) + (8 if self.weighted else 0)
        csr = 8 * (self.num_vertices + 1) + per_edge * self.num_edges
        return csr if not self.directed else 2 * csr

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
        out = CSR.from_edges(src, dst, num_vertices, w)
        return cls(
            name=name,
            num_vertices=num_vertices,
            num_edges=out.num_edges,
            directed=directed,
            weighted=w is not None,
            _load_out=lambda: out,
        )

"""Shared helpers of the ingest tests: load a file, read back what was stored."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from graphdb.catalog import Catalog, IngestOptions
from graphdb.storage import Environment

_OPEN: dict[str, Catalog] = {}


def open_catalog(db: Path) -> Catalog:
    """One open environment per database directory (LMDB allows one per process)."""
    key = str(db)
    if key not in _OPEN:
        _OPEN[key] = Catalog(Environment(db))
    return _OPEN[key]


def load(db: Path, edges, name: str = "g", **options):
    """Ingest into a fresh or existing database; returns (catalog, entry)."""
    catalog = open_catalog(db)
    replace = options.pop("replace", False)
    entry = catalog.ingest(name, str(edges), IngestOptions(**options), replace=replace)
    return catalog, entry


def edge_set(catalog, entry, *columns) -> list[tuple]:
    """The stored edges as sorted tuples of user ids (and the named extra columns)."""
    table = catalog.edge_table(entry)
    cols = [table.column(c).to_pylist() for c in ("src", "dst", *columns)]
    return sorted(zip(*cols))


def adjacency(catalog, entry, prefix: str = "out") -> list[list[int]]:
    """Internal adjacency lists (each sorted) of the out- or in-CSR."""
    offsets = catalog.read_array(entry, f"{prefix}_offsets")
    targets = catalog.read_array(entry, f"{prefix}_targets")
    return [sorted(targets[offsets[v]:offsets[v + 1]].tolist()) for v in range(len(offsets) - 1)]


def snapshot(db: Path) -> dict:
    """Everything a failed ingest must leave untouched: the files and every LMDB key/value."""
    from graphdb.storage.env import SUBDATABASES

    files = {str(p.relative_to(db)): p.stat().st_size for p in sorted(db.rglob("*"))
             if p.is_file() and p.name not in ("lock.mdb", "writer.lock")
             and "meta.lmdb" not in p.parts}
    env = open_catalog(db).env
    content = {}
    with env.read_txn() as txn:
        for name in SUBDATABASES:
            if env.db(name) is not None:
                content[name] = [(bytes(k), bytes(v)) for k, v in txn.cursor(db=env.db(name))]
    return {"files": files, "lmdb": content}


def write_text(path: Path, text: str | bytes) -> Path:
    """``text`` to ``path`` (bytes as they are: inputs that are not UTF-8)."""
    path.write_bytes(text) if isinstance(text, bytes) else path.write_text(text)
    return path


def csr_of(src, dst, n) -> list[list[int]]:
    """Independent reference: scipy's CSR of the edges (each list sorted)."""
    import scipy.sparse as sp

    m = sp.csr_matrix((np.ones(len(src)), (src, dst)), shape=(n, n))
    m.sum_duplicates()
    out = []
    for v in range(n):
        cols = m.indices[m.indptr[v]:m.indptr[v + 1]]
        counts = m.data[m.indptr[v]:m.indptr[v + 1]].astype(int)
        out.append(sorted(np.repeat(cols, counts).tolist()))
    return out

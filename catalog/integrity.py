"""A whole-database check: every page, record, block and file verified, every problem listed.

Statements check what they read as they read it (seals, checksums, invariants), and a
process's first open checks the LMDB trees every statement reads (storage.lmdb_verify); this
reads everything else too, for ``graphdb check DB`` and ``PRAGMA integrity_check``::

    links      no symbolic link, nor a second hard link to a file LMDB writes, anywhere in the
               directory
    LMDB       every tree, key order in all of them, every page used exactly once (a page in
               two places, or a free one still in use, is damage; one in neither is a leak)
    catalog    the ledger against the entries; every entry parsed and its arrays present
    graphs     every block of every array read and checked (checksum, length, and the CSR
               invariants: offsets rising from 0 to |E|, targets in [0, |V|)), every slotted page
               decoded against its page table, every Arrow file against its size and checksum,
               the delta log of a changed graph replayed
    records    retired versions, unfinished writes and compactions, page records: readable
    files      graph directories that no record names (left alone: reported)

It reads the data once, block by block (memory stays a block, a page and one graph's vertex
ids), and never writes. :func:`check_database` returns the problems found: an empty list is a
whole database. The front end runs it in a child process (graphdb.integrity), so that damage
this module does not model can at worst crash that child, which is then reported too.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from graphdb.storage import Environment
from graphdb.storage.blocks import iter_prefix, parse_array_info, unpack_block
from graphdb.storage.env import LMDB_FILES, MARKER, valid_graph_id
from graphdb.storage.errors import CorruptData, StorageError
from graphdb.storage.files import LinkInDatabase
from graphdb.storage.lmdb_verify import verify_file
from graphdb.storage.pages import PageContext, decode_page
from graphdb.storage.topology import topology_info

from .catalog import Catalog
from .cleanup import pending_ids
from .compaction import compaction_markers
from .entries import GraphEntry
from .errors import CatalogError, CorruptGraph, GraphChanged
from .leases import retired_versions
from .validation import array_problem, offsets_problem, targets_problem

__all__ = ["Problem", "check_database"]

_DATA = "meta.lmdb/data.mdb"


@dataclass(frozen=True)
class Problem:
    """One thing wrong: the file (relative to the database), the graph where known, what."""

    file: str
    graph: str | None
    problem: str

    def __str__(self) -> str:
        where = [self.file] + ([f"graph '{self.graph}'"] if self.graph else [])
        return ": ".join(where + [self.problem])


def check_database(path: str | os.PathLike) -> list[Problem]:
    """Every problem of the database at ``path`` (see the module docstring); [] when whole."""
    path = Path(path)
    problems = list(_links(path))
    if problems:  # nothing is opened through a link
        return problems
    if not (path / MARKER).is_file():
        return [Problem(MARKER, None, "is missing: this is not a graphdb database")]
    try:
        report = verify_file(path / _DATA, full=True)
        if report.unused:
            problems.append(Problem(_DATA, None, f"{report.unused} pages are neither in a "
                                                 "tree nor free (space leaked, no data lost)"))
    except CorruptData as exc:
        return problems + [Problem(_DATA, None, str(exc).removeprefix(f"{_DATA}: "))]
    try:
        env = Environment(path, create=False, read_only=True)
    except StorageError as exc:
        return problems + [Problem(getattr(exc, "file", None) or _DATA, None, str(exc))]
    try:
        catalog = Catalog(env, cleanup=False)
        try:
            problems += _check_catalog(catalog)
        finally:
            catalog.buffers.close()
    except (CorruptData, CorruptGraph) as exc:
        problems.append(_problem(exc))
    finally:
        env.close()
    return problems


def _problem(exc: Exception, graph: str | None = None) -> Problem:
    file = getattr(exc, "file", None) or _DATA
    graph = getattr(exc, "graph", None) or graph
    text = getattr(exc, "problem", None) or str(exc)
    return Problem(file, graph, text)


# -- links ---------------------------------------------------------------------------------------
def _links(root: Path) -> Iterator[Problem]:
    for folder, dirs, files in os.walk(root, followlinks=False):
        for name in dirs + files:
            full = Path(folder) / name
            relative = str(full.relative_to(root))
            try:
                info = os.lstat(full)
            except OSError:
                continue
            if stat.S_ISLNK(info.st_mode):
                yield Problem(relative, None, str(LinkInDatabase(root, relative,
                                                                 _target(full))).split(": ", 1)[1])
            elif relative in LMDB_FILES and info.st_nlink > 1:
                yield Problem(relative, None, "has another hard link (it may be another "
                                              "user's file)")


def _target(path: Path) -> str | None:
    try:
        return os.readlink(path)
    except OSError:
        return None


# -- the catalog and its graphs -----------------------------------------------------------------
def _check_catalog(catalog: Catalog) -> list[Problem]:
    problems: list[Problem] = []
    env = catalog.env
    referenced: set[str] = set()
    with catalog.snapshot() as snap:
        for name in snap.names():
            try:
                entry = snap.get(name, exact=True)
            except (CorruptGraph, CatalogError) as exc:
                problems.append(_problem(exc, name))
                graph_id = snap.graph_id_of(name)
                if graph_id:
                    referenced.add(graph_id)
                continue
            referenced.add(entry.graph_id)
            problems += _check_graph(catalog, entry)
    for _key, graph_id, _sequence in _records(problems, "retired versions",
                                              lambda: retired_versions(env)):
        if graph_id is not None:
            referenced.add(graph_id)
    for graph_id in _records(problems, "unfinished writes", lambda: pending_ids(env)):
        referenced.add(graph_id)
    for graph_id, record in _records(problems, "compactions", lambda: compaction_markers(env)):
        referenced.add(graph_id)
        if not record:
            problems.append(Problem(_DATA, None, f"the record of compaction {graph_id} is "
                                                 "unreadable"))
    graphs = env.path / "graphs"
    if graphs.is_dir():
        for folder in sorted(graphs.iterdir()):
            if folder.name not in referenced:
                why = "" if valid_graph_id(folder.name) else " (not a generated id)"
                problems.append(Problem(f"graphs/{folder.name}", None,
                                        f"is a directory no catalog record names{why}; it is "
                                        "left alone (remove it if you know what it is)"))
    return problems


def _records(problems: list[Problem], what: str, read) -> list:
    try:
        return list(read())
    except (CorruptData, CorruptGraph) as exc:
        problems.append(Problem(_DATA, None, f"the records of {what} are unreadable: {exc}"))
        return []


def _check_graph(catalog: Catalog, entry: GraphEntry) -> list[Problem]:
    problems: list[Problem] = []
    base = entry.base
    try:
        with catalog.reading(base):
            _check_arrays(catalog, base)
            _check_pages(catalog, base)
    except (CorruptGraph, GraphChanged) as exc:
        problems.append(_problem(exc, entry.name))
    for read in (catalog.vertex_table, catalog.edge_properties):
        try:  # the Arrow files (and, for a changed graph, the delta log merged with them)
            read(entry)
        except (CorruptGraph, GraphChanged) as exc:
            problems.append(_problem(exc, entry.name))
    return problems


def _check_arrays(catalog: Catalog, entry: GraphEntry) -> None:
    """Every block of every array of ``entry``'s generation, one at a time."""
    catalog.check_stored_arrays(entry)
    env = catalog.env
    db = env.db("blocks")
    prefix = f"{entry.graph_id}/".encode()
    with env.read_txn() as txn:
        names = sorted({key[len(prefix):].rsplit(b"/", 1)[0].decode("ascii", "replace")
                        for key in iter_prefix(txn, db, prefix, values=False)})
    for name in names:
        _check_array(catalog, entry, name)


def _check_array(catalog: Catalog, entry: GraphEntry, name: str) -> None:
    env = catalog.env
    db = env.db("blocks")
    where = f"array {name!r}"
    kind = name.rsplit("_", 1)[-1]
    base = f"{entry.graph_id}/{name}/".encode()
    with env.read_txn() as txn:
        raw = txn.get(base + b"meta", db=db)
        if raw is None:
            raise CorruptGraph(f"{where} has blocks but no record", graph=entry.name,
                               file=_DATA)
        info = parse_array_info(bytes(unpack_block(raw, f"the record of {where}")), where)
        if kind in ("offsets", "targets", "weights") and name.startswith(("out_", "in_")):
            problem = array_problem(entry, name, info.dtype, info.length)
            if problem is not None:
                raise CorruptGraph(problem, graph=entry.name, file=_DATA)
        previous = None
        for n in range(info.num_blocks):
            block = np.frombuffer(unpack_block(txn.get(base + f"{n:010d}".encode(), db=db),
                                               f"block {n} of {where}"), dtype=info.dtype)
            if len(block) != info.block_length(n):
                raise CorruptGraph(f"block {n} of {where} has {len(block)} elements, expected "
                                   f"{info.block_length(n)}", graph=entry.name, file=_DATA)
            _check_block(entry, name, kind, n, block, previous, info)
            previous = block[-1] if len(block) else previous
        extra = sum(1 for _ in iter_prefix(txn, db, base, values=False)) - 1 - info.num_blocks
        if extra:
            raise CorruptGraph(f"{where} has {extra} blocks beyond its length", graph=entry.name,
                               file=_DATA)


def _check_block(entry, name, kind, n, block, previous, info) -> None:
    """The CSR invariants, block by block (storage order: a running check)."""
    if not name.startswith(("out_", "in_")):
        return
    problem = None
    if kind == "offsets":
        first = int(block[0]) if len(block) else None
        if n == 0 and first != 0:
            problem = f"array {name!r} starts at {first}, not 0"
        elif previous is not None and first is not None and first < previous:
            problem = f"array {name!r} decreases at block {n}"
        else:
            problem = offsets_problem(block - block[0] if len(block) else block,
                                      int(block[-1] - block[0]) if len(block) else 0, name)
        if problem is None and n == info.num_blocks - 1 and int(block[-1]) != entry.num_edges:
            problem = f"array {name!r} ends at {int(block[-1])}, not at |E| = {entry.num_edges}"
    elif kind == "targets":
        problem = targets_problem(block, entry.num_vertices, name)
    if problem is not None:
        raise CorruptGraph(problem, graph=entry.name, file=_DATA)


def _check_pages(catalog: Catalog, entry: GraphEntry) -> None:
    env = catalog.env
    for direction in ("out", "in") if entry.directed else ("out",):
        with env.read_txn() as txn:
            try:
                info = topology_info(env, txn, entry.graph_id, direction)
            except CorruptData as exc:
                if exc.missing:
                    return  # no pages built (a page-streamed query builds them)
                raise
        table = catalog.read_array(entry, f"{direction}_page_first_vertex")
        if len(table) != info["pages"]:
            raise CorruptGraph(f"the {direction} page table has {len(table)} pages, its record "
                               f"{info['pages']}", graph=entry.name, file=_DATA)
        context = PageContext(env.layout, entry.num_vertices, table)
        db = env.db("pages")
        edges = 0
        for pid in range(len(table)):
            with env.read_txn() as txn:
                value = txn.get(f"{entry.graph_id}/{direction}/{pid:010d}".encode(), db=db)
                if value is None:
                    raise CorruptGraph(f"{direction} page {pid} is missing", graph=entry.name,
                                       file=_DATA)
                edges += decode_page(bytes(value), context).header.num_edges
        if edges != entry.num_edges:
            raise CorruptGraph(f"the {direction} pages hold {edges} edges; the graph has "
                               f"{entry.num_edges}", graph=entry.name, file=_DATA)

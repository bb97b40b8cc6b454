"""The ingest pipeline: edge file(s) (and optionally a vertex file) become a stored graph.

    read (streamed batches; large text files in parallel byte-range parts) -> ids to keys,
    checks, policies -> spool (memory, then temp files)
    -> id mapping (dense ids in ascending order of the user's ids) -> out-CSR (+ in-CSR of a
    directed graph) by a bucketed counting sort under the memory budget -> edge properties in
    stored order -> write_graph: the Arrow files, then ONE LMDB write transaction with the CSR
    blocks and the catalog entry.

Everything is written into a new graph directory (temporary files in its ``tmp`` folder, or under
``temp_dir``). Until the transaction commits nothing refers to that directory, so a failed or
killed ingest leaves no visible trace (the catalog removes unreferenced directories).
"""

from __future__ import annotations

import os
import shutil
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import pyarrow as pa

from graphdb.storage import Environment, page_kernel, write_topology
from graphdb.storage.checksum import default_algorithm, file_checksum
from graphdb.storage.compiled import preload
from graphdb.storage.mapped import trim_heap
from graphdb.storage.topology import RELEASE_EVERY

from .csrbuild import COUNTING_SORT, CSR, MERGE_WEIGHTS, build_csr, csr_chunks, read_range
from .entries import ARROW_FILES, GraphEntry
from .errors import IngestError
from .idmap import IdMapper, IdSet
from .inputs import EdgeColumns, group_rows_for, read_edges, read_vertices, text_column_types
from .progress import Progress
from .readers import InputFiles, TextLayout, block_bytes_for
from .snapshot import retire_version
from .spool import Spool, SpoolSet

__all__ = ["IngestOptions", "arrow_records", "build_graph_arrays", "default_memory_limit",
           "run_ingest", "write_graph"]

#: Input bytes per edge, an estimate on the high side (an edge list's line of two 7-digit ids
#: is 16 bytes; RMAT20's average 13.9): the edge count it gives decides whether to preload the
#: compiled kernels (storage.compiled.preload).
BYTES_PER_EDGE = 16

POLICIES = {
    "self_loops": ("keep", "drop"),
    "duplicates": ("keep", "merge"),
    "merge_weights": MERGE_WEIGHTS,
    "missing_vertices": ("error", "add"),
    "id_type": ("auto", "int", "string"),
}


@dataclass(frozen=True)
class IngestOptions:
    vertices: str | None = None  # vertex file (or glob): id column + property columns
    undirected: bool = False  # store both directions of every edge
    format: str = "auto"
    vertex_format: str = "auto"
    src: str | None = None  # column names or 1-based positions
    dst: str | None = None
    weight: str | None = None  # column name or position; None: the column named 'weight'; 'none'
    vertex_id: str | None = None  # id column of the vertex file (default: the first)
    delimiter: str | None = None  # edge text files: default from the format
    header: bool | None = None  # edge text files: default True for csv/tsv, False otherwise
    id_type: str = "auto"  # 'int' or 'string' to force how ids are read
    self_loops: str = "keep"
    duplicates: str = "keep"
    merge_weights: str = "min"  # weight kept when duplicates merge: min, max, sum, first
    missing_vertices: str = "error"  # an edge endpoint absent from the vertex file
    memory_limit: int | None = None  # bytes; None: default_memory_limit()
    temp_dir: str | None = None  # where sorted runs go; default: inside the new graph dir

    def check(self) -> "IngestOptions":
        for name, choices in POLICIES.items():
            value = getattr(self, name)
            if value not in choices:
                raise IngestError(f"{name.replace('_', '-')} must be one of "
                                  f"{', '.join(choices)}, not {value!r}")
        if self.memory_limit is not None and self.memory_limit < (1 << 20):
            raise IngestError("memory limit must be at least 1 MiB")
        return self


def default_memory_limit() -> int:
    """Half of the memory available now (a quarter of physical memory when unknown)."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024 // 2
    except OSError:
        pass
    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // 4


class _PropertyFile:
    """Edge property columns in input order, streamed to an Arrow IPC file."""

    def __init__(self, path: Path):
        self.path, self._writer, self.schema = path, None, None

    def __call__(self, table: pa.Table) -> None:
        if self._writer is None:
            self.schema = table.schema
            self._writer = pa.ipc.new_file(str(self.path), self.schema)
        elif table.schema != self.schema:
            try:
                table = table.cast(self.schema)
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:
                raise IngestError(
                    f"edge property columns change type between files: {exc}") from None
        self._writer.write_table(table)

    def close(self) -> None:
        if self._writer is not None:
            self._writer.close()
            self._writer = None

    def write_in_order(self, rows: np.ndarray, out: Path, chunk: int) -> None:
        """The properties rearranged to the stored edge order ``rows``, written to ``out``."""
        self.close()
        with pa.memory_map(str(self.path)) as source:
            table = pa.ipc.open_file(source).read_all()
            with pa.ipc.new_file(str(out), table.schema) as writer:
                for start in range(0, len(rows), chunk):
                    writer.write_table(table.take(pa.array(np.asarray(rows[start:start + chunk]))))
                if not len(rows):
                    writer.write_table(table.slice(0, 0))


def _vertex_table(mapper: IdMapper, keys: np.ndarray | None, props: pa.Table | None) -> pa.Table:
    """``id`` (sorted user ids) + vertex properties in internal order (nulls for vertices that
    only the edges named)."""
    table = pa.table({"id": mapper.ids})
    if props is None or props.num_columns == 0:
        return table
    position = np.full(mapper.n, -1, dtype=np.int64)
    position[mapper(keys)] = np.arange(len(keys))
    take = pa.array(position, mask=position < 0)
    for name in props.column_names:
        table = table.append_column(props.schema.field(name), props.column(name).take(take))
    return table


def _edge_chunks(spool: Spool, mapper: IdMapper, undirected: bool, rows: int):
    """The spooled edges as (key = internal source, other = internal destination) chunks; for
    an undirected graph, then every edge again reversed (a self loop only once). Forward edges
    first, reverse edges second: the stored order then does not depend on the chunk size."""
    for reverse in (False, True) if undirected else (False,):
        for chunk in spool.chunks(rows):
            src, dst = mapper(chunk["src"]), mapper(chunk["dst"])
            out = {"key": src, "other": dst}
            out.update((c, chunk[c]) for c in ("weight", "row") if c in chunk)
            if reverse:
                back = src != dst
                out = {c: v[back] for c, v in out.items()}
                out["key"], out["other"] = out["other"], out["key"]
            yield out


def _map_in_memory(spool: Spool, mapper: IdMapper, undirected: bool) -> dict[str, np.ndarray]:
    """All spooled edges mapped into one set of arrays, in the order of :func:`_edge_chunks`
    (mapped straight into place: no concatenation copies)."""
    rows = spool.rows
    total = rows
    loops = None
    if undirected:
        loops = [c["src"] == c["dst"] for c in spool.chunks(rows)]
        total += rows - sum(int(np.count_nonzero(m)) for m in loops)
    out = {"key": np.empty(total, mapper.dtype), "other": np.empty(total, mapper.dtype)}
    out.update((c, np.empty(total, d)) for c, d in spool.dtypes.items() if c in ("weight", "row"))
    chunks = list(spool.chunks(rows))
    starts = np.concatenate([[0], np.cumsum([len(c["src"]) for c in chunks])])

    def map_column(column: str, into: str) -> None:
        for chunk, at, stop in zip(chunks, starts[:-1], starts[1:], strict=True):
            mapper(chunk[column], out=out[into][at:stop])

    # One column per core: np.take releases the GIL.
    with ThreadPoolExecutor(2) as pool:
        list(pool.map(map_column, ("src", "dst"), ("key", "other")))
    back_at = rows
    for i, (chunk, at, stop) in enumerate(zip(chunks, starts[:-1], starts[1:], strict=True)):
        for c in ("weight", "row"):
            if c in chunk:
                out[c][at:stop] = chunk[c]
        if undirected:
            back = ~loops[i]
            b = int(np.count_nonzero(back))
            out["key"][back_at:back_at + b] = out["other"][at:stop][back]
            out["other"][back_at:back_at + b] = out["key"][at:stop][back]
            for c in ("weight", "row"):
                if c in chunk:
                    out[c][back_at:back_at + b] = chunk[c][back]
            back_at += b
    return out


def _sort_edges(spool: SpoolSet, mapper: IdMapper, options: IngestOptions, weighted: bool,
                with_rows: bool, budget: int, chunk_rows: int, tmp: Path
                ) -> tuple[CSR, CSR | None]:
    """The out-CSR and, for a directed graph, the in-CSR of the spooled edges."""
    n = mapper.n
    if spool.spilled:
        edge_chunks = lambda: _edge_chunks(spool, mapper, options.undirected, chunk_rows)  # noqa: E731
    else:
        mapped = [_map_in_memory(spool, mapper, options.undirected)]
        spool.discard()
        edge_chunks = lambda: iter(mapped)  # noqa: E731
    merge = options.merge_weights if options.duplicates == "merge" else None
    stored = spool.rows * (2 if options.undirected else 1)  # an upper bound (loops go once)
    # Without merging, the in-CSR is sorted from the input like the out-CSR (in-lists in input
    # order), so with everything in memory both sorts run at once, one per core. Merged
    # duplicates must vanish from both: then the in-CSR is sorted from the merged out-CSR.
    both_at_once = not options.undirected and merge is None and not spool.spilled
    sort_budget = budget // (4 if both_at_once else 2)

    def sort(chunks, name, **kw):
        return build_csr(chunks, n, weighted=weighted, budget_bytes=sort_budget, tmpdir=tmp,
                         name=name, **kw)

    def reverse_chunks():
        for chunk in edge_chunks():
            flipped = {"key": chunk["other"], "other": chunk["key"]}
            if weighted:
                flipped["weight"] = chunk["weight"]
            yield flipped

    try:
        if both_at_once:
            with ThreadPoolExecutor(1) as pool:
                pending = pool.submit(sort, reverse_chunks, "in", with_rows=False, merge=None,
                                      num_edges=stored)
                out = sort(edge_chunks, "out", with_rows=with_rows, merge=None,
                           num_edges=stored)
                return out, pending.result()
        out = sort(edge_chunks, "out", with_rows=with_rows, merge=merge, num_edges=stored)
        if options.undirected:
            return out, None
        if merge is None:
            return out, sort(reverse_chunks, "in", with_rows=False, merge=None,
                             num_edges=stored)
        return out, sort(lambda: csr_chunks(out, chunk_rows), "in", with_rows=False,
                         merge=None, num_edges=len(out.targets))
    finally:
        spool.discard()


def build_graph_arrays(src: np.ndarray, dst: np.ndarray, n: int, weights: np.ndarray | None,
                       directed: bool) -> dict[str, np.ndarray]:
    """The stored arrays of an in-memory edge list of internal ids 0..n-1: the out-CSR, plus the
    in-CSR of a directed graph (an undirected edge is stored both ways, a self loop once), in
    the order an ingest stores them. For tests and benchmarks that build graphs without files;
    the same counting sort as the ingest, with everything in memory."""
    dtype = np.int32 if n < 2**31 else np.int64
    src, dst = np.asarray(src).astype(dtype, copy=False), np.asarray(dst).astype(dtype, copy=False)
    if not directed:
        back = src != dst
        src, dst = np.concatenate([src, dst[back]]), np.concatenate([dst, src[back]])
        if weights is not None:
            weights = np.concatenate([weights, np.asarray(weights)[back]])
    weighted = weights is not None
    arrays = {}
    for side, key, other in (("out", src, dst), ("in", dst, src))[: 2 if directed else 1]:
        chunk = {"key": key, "other": other}
        if weighted:
            chunk["weight"] = np.asarray(weights, dtype=np.float64)
        csr = build_csr(lambda chunk=chunk: iter([chunk]), n, weighted=weighted,
                        with_rows=False, merge=None, budget_bytes=1 << 62,
                        tmpdir=Path("."), name=side, num_edges=len(key))  # never spills
        arrays[f"{side}_offsets"], arrays[f"{side}_targets"] = csr.offsets, csr.targets
        if weighted:
            arrays[f"{side}_weights"] = csr.weights
    return arrays


def run_ingest(env: Environment, name: str, edges: str, options: IngestOptions, *,
               replace_entry: GraphEntry | None, progress: Progress | None = None) -> GraphEntry:
    """Read, sort and commit graph ``name``; raises IngestError on bad input (nothing stored)."""
    options = options.check()
    progress = progress or Progress()
    started = time.perf_counter()
    budget = options.memory_limit or default_memory_limit()
    graph_id = uuid.uuid4().hex
    gdir = env.new_graph_dir(graph_id)
    tmp = (Path(options.temp_dir) / f"graphdb-ingest-{graph_id}" if options.temp_dir
           else gdir / "tmp")
    tmp.mkdir(parents=True, exist_ok=True, mode=0o700)
    try:
        entry = _ingest(env, name, edges, options, replace_entry, progress, budget, graph_id,
                        gdir, tmp, started)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
        progress.close()
    return entry


def _ingest(env, name, edges, options, replace_entry, progress, budget, graph_id, gdir, tmp,
            started) -> GraphEntry:
    layout = TextLayout(options.delimiter, options.header)
    forced = None if options.id_type == "auto" else options.id_type
    # Integer ids spanning up to budget/10 values: a bitmap (1 byte each now, 4 more for the
    # lookup table, which shares the sort phase with sorts of half the budget). Sparser ids
    # take the sorted path, merging runs of at most budget/64 ids.
    ids = IdSet(forced, dense_limit=max(1 << 16, budget // 10),
                pending_limit=max(1 << 12, budget // 64))
    vertex_keys = vertex_props = None
    if options.vertices is not None:
        # --delimiter/--no-header describe the edge file; the vertex file has its format's
        # default layout (a header for CSV/TSV, none for text and Graphalytics files).
        vertex_source = InputFiles(options.vertices, options.vertex_format,
                                   block_bytes=block_bytes_for(budget))
        vertex_keys, vertex_props = read_vertices(vertex_source, options.vertex_id, ids)
        if options.missing_vertices == "error":
            ids.frozen = True
    source = InputFiles(edges, options.format, layout, block_bytes=block_bytes_for(budget))
    for f in source.files:  # with a vertex file, no edges is a graph without edges
        f.may_be_empty = options.vertices is not None
    # A large graph is sorted and its pages built by compiled kernels (unless the memory limit
    # is small): load them while the input is read.
    preload(source.total_bytes // BYTES_PER_EDGE, budget, COUNTING_SORT, page_kernel.RECORDS)
    check_missing = options.vertices if ids.frozen else None

    # Peek at the columns first: whether there is a weight and properties decides the spool.
    first = source.files[0]
    schema = first.schema()
    chosen = EdgeColumns.choose(schema, first.path, options.src, options.dst, options.weight,
                                first.format)
    spool_columns = {"src": np.int64, "dst": np.int64}
    if chosen.weight:
        spool_columns["weight"] = np.float64
    props = _PropertyFile(tmp / "properties.arrow") if chosen.properties else None
    if props is not None:
        spool_columns["row"] = np.int64
    source.split(min(4, os.cpu_count() or 1))
    spool = SpoolSet(tmp, "edges", spool_columns, budget_bytes=budget // 2,
                     parts=len(source.parts))

    progress.phase("read", source.total_bytes)
    counts = read_edges(source, lambda schema, f: chosen, ids, spool,
                        drop_loops=options.self_loops == "drop", check_missing=check_missing,
                        property_sink=props, progress=progress,
                        group_rows=group_rows_for(budget),
                        column_types=text_column_types(schema, chosen, options.id_type))
    # Arrow's allocator keeps freed blocks for reuse; hand the reader's back before sorting.
    pa.default_memory_pool().release_unused()
    if props is not None:
        props.close()
    if len(ids) == 0:
        raise IngestError("no vertices", file=str(source))

    progress.phase("sort")
    mapper = ids.finish()
    n = mapper.n
    del ids
    weighted = chosen.weight is not None
    chunk_rows = max(1 << 12, budget // (8 * spool.row_bytes))
    out, reverse = _sort_edges(spool, mapper, options, weighted, props is not None, budget,
                               chunk_rows, tmp)
    arrays = {"out_offsets": out.offsets, "out_targets": out.targets}
    if weighted:
        arrays["out_weights"] = out.weights
    if reverse is not None:
        arrays.update(in_offsets=reverse.offsets, in_targets=reverse.targets)
        if weighted:
            arrays["in_weights"] = reverse.weights

    # The vertex table goes to its file now: the user ids and the id lookup then leave memory
    # before the commit, which holds the CSR and builds pages.
    vertices = _vertex_table(mapper, vertex_keys, vertex_props)
    id_type = "string" if pa.types.is_string(mapper.ids.type) else "int64"
    write_vertices(gdir, vertices)
    vertices = vertices.schema
    del mapper, vertex_keys, vertex_props
    trim_heap()

    if props is not None:
        progress.phase("properties")
        props.write_in_order(out.rows, gdir / "edges.arrow", chunk_rows)

    progress.phase("commit")
    stats = _stats(out, arrays, options, counts, n)
    if chosen.weight is not None:  # g.edges shows the weight under its own name and type
        stats["weight_column"] = chosen.weight
        stats["weight_type"] = str(schema.field(chosen.weight).type)
    # The property schemas, as DESCRIBE shows them (the Arrow files hold the exact types).
    stats["vertex_properties"] = ", ".join(f"{f.name} {f.type}" for f in vertices
                                           if f.name != "id")
    stats["edge_properties"] = ", ".join(f"{f.name} {f.type}" for f in props.schema
                                         ) if props is not None and props.schema else ""
    entry = GraphEntry(
        name=name, graph_id=graph_id, directed=not options.undirected, weighted=weighted,
        num_vertices=n, num_edges=int(len(out.targets)), input_edges=counts.rows,
        id_type=id_type,
        created=time.time(),
        source=str(source) + (f" + {options.vertices}" if options.vertices else ""),
        stats=stats,
    )
    entry = write_graph(env, entry, arrays, replace_entry=replace_entry,
                        db_catalog=env.db("catalog"), started=started, memory_limit=budget)
    return entry


#: Vertices whose degrees the statistics look at a time (offsets may be a file's memory map).
STATS_CHUNK = 1 << 20


def _stats(out: CSR, arrays: dict, options: IngestOptions, counts, n: int) -> dict:
    in_offsets = None if options.undirected else arrays["in_offsets"]
    max_degree = isolated = 0
    for a in range(0, n, STATS_CHUNK):
        b = min(n, a + STATS_CHUNK)
        degree = np.diff(read_range(out.offsets, a, b + 1))
        max_degree = max(max_degree, int(degree.max()))
        lonely = degree == 0
        if in_offsets is not None:
            lonely &= np.diff(read_range(in_offsets, a, b + 1)) == 0
        isolated += int(np.count_nonzero(lonely))
    return {
        "max_out_degree": max_degree,
        "isolated_vertices": isolated,
        "self_loops": counts.self_loops,
        "self_loops_dropped": counts.self_loops_dropped,
        "duplicates_merged": out.merged,
        "csr_bytes": int(sum(a.nbytes for a in arrays.values())),
    }


def write_vertices(gdir: Path, vertices: pa.Table) -> None:
    """The vertex table (``id`` and the properties) as ``vertices.arrow`` in a graph's folder."""
    import pyarrow.feather as feather

    feather.write_feather(vertices, gdir / "vertices.arrow", compression="uncompressed")


def arrow_records(env: Environment, gdir: Path) -> dict[str, dict]:
    """Size and checksum of each Arrow file of a new version (recorded in its catalog entry,
    checked when the file is first opened), with the files given the database's mode."""
    records = {}
    algorithm = default_algorithm()
    for name in ARROW_FILES:
        path = gdir / name
        if path.exists():
            env.seal_file(path)
            records[name] = {"bytes": int(path.stat().st_size),
                             "checksum": file_checksum(path, algorithm), "algorithm": algorithm}
    return records


def write_graph(env: Environment, entry: GraphEntry, arrays: dict[str, np.ndarray], *,
                replace_entry: GraphEntry | None, db_catalog,
                started: float | None = None, memory_limit: int | None = None) -> GraphEntry:
    """Commit a graph (the commit point of an ingest): given id-mapped CSR arrays (which may be
    np.memmap), with ``vertices.arrow`` (:func:`write_vertices`) and any edge properties
    already in the graph directory, write the CSR blocks, the slotted pages and the catalog
    entry in ONE LMDB write transaction. Under ``memory_limit`` what was written is unmapped
    every quarter of it (at most every 64 MiB, at least every 4 MiB)."""
    gdir = env.graph_dir(entry.graph_id)
    stats = dict(entry.stats)
    files = arrow_records(env, gdir)
    stats["vertex_id_bytes"] = files["vertices.arrow"]["bytes"]
    stats["edge_property_bytes"] = files.get("edges.arrow", {}).get("bytes", 0)
    if started is not None:
        stats["ingest_seconds"] = round(time.perf_counter() - started, 3)
    entry = replace(entry, stats=stats, files=files)
    release = RELEASE_EVERY if memory_limit is None else min(RELEASE_EVERY,
                                                             max(4 << 20, memory_limit // 4))

    def commit(txn):
        # CSR blocks and slotted pages, in the same transaction as the entry that makes them
        # visible (the entry's stats dict is ``stats``: it records what was written)
        stats.update(write_topology(env, txn, entry.graph_id, arrays, release_every=release))
        stats["bytes_stored"] = (stats["block_bytes"] + stats["page_bytes"]
                                 + stats["vertex_id_bytes"] + stats["edge_property_bytes"])
        if replace_entry is not None:  # freed once no statement reads it (catalog.snapshot)
            retire_version(env, txn, replace_entry)
        txn.put(entry.name.encode(), entry.to_json(), db=db_catalog)

    env.write(commit)
    return entry

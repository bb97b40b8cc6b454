"""The ingest pipeline: edge file(s) (and optionally a vertex file) become a stored graph.

    read (streamed batches; large text files in parallel byte-range parts, ids as 32-bit
    integers when they fit) -> ids to keys, checks, policies -> spool (memory, then temp files;
    or the GPU's memory) -> how keys become internal ids (raw ids renumbered by the sort, or a
    mapping for strings and spread-out integers) -> out-CSR (+ in-CSR of a directed graph) by a
    counting sort, in memory or in buckets under the memory limit (catalog.csrbuild; on the GPU:
    catalog.devicebuild) -> edge properties in stored order -> write_graph: the Arrow files, then
    ONE LMDB write transaction with the CSR blocks and the catalog entry. The topology is stored
    once, as CSR blocks: slotted pages are built from them when first needed (catalog.pages), or
    right after the commit with ``pages``.

Everything is written into a new graph directory (temporary files in its ``tmp`` folder, or under
``temp_dir``). Until the transaction commits nothing refers to that directory, so a failed or
killed ingest leaves no visible trace (the catalog removes unreferenced directories, and the
next open removes a killed ingest's spill files: catalog.cleanup). Peak memory stays within
``memory_limit`` plus a fixed overhead, whatever the input's size.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import pyarrow as pa

from graphdb.storage import Environment, write_topology
from graphdb.storage.checksum import default_algorithm, file_checksum
from graphdb.storage.compiled import preload
from graphdb.storage.mapped import trim_heap
from graphdb.storage.topology import RELEASE_EVERY

from .arrays import arrow_values
from .cleanup import TEMP_PREFIX, begin_graph_dir, holding, remove_stale_temp, settle
from .counting import COUNT_KEYS, SCATTER
from .csrbuild import CSR, MERGE_WEIGHTS, EdgeSource, Topology, build_topology, read_range
from .devicebuild import (
    DEVICE_BYTES_PER_EDGE,
    DeviceSpool,
    device_topology,
    device_xp,
    free_device_bytes,
)
from .entries import ARROW_FILES, GraphEntry
from .errors import IngestError
from .idmap import DenseKeys, IdMapper, IdSet
from .inputs import (
    EdgeColumns,
    group_rows_for,
    narrow_ids,
    read_edges,
    read_vertices,
    text_column_types,
)
from .leases import retire_version
from .ledger import put_entry
from .progress import Progress
from .readers import (
    SPOOLED_INPUT,
    TEXT_FORMATS,
    InputFiles,
    NarrowIdsOverflow,
    TextLayout,
    block_bytes_for,
)
from .spool import SpoolSet

__all__ = ["IngestOptions", "arrow_records", "build_graph_arrays", "default_memory_limit",
           "run_ingest", "write_graph"]

#: Inputs of fewer rows (estimated) sort on the CPU unless --device gpu: bringing up CuPy and a
#: CUDA context (a second or more in a fresh process) costs more than the sort it would save.
GPU_MIN_ROWS = 8_000_000
#: Host bytes per edge of the CSR arrays a device sort hands back (both directions' targets,
#: weights): the device sorts only graphs whose arrays fit half the host's memory limit.
HOST_BYTES_PER_EDGE = 24

POLICIES = {
    "self_loops": ("keep", "drop"),
    "duplicates": ("keep", "merge"),
    "merge_weights": MERGE_WEIGHTS,
    "missing_vertices": ("error", "add"),
    "invalid_weights": ("error", "keep"),
    "id_type": ("auto", "int", "string"),
    "device": ("auto", "cpu", "gpu"),
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
    invalid_weights: str = "error"  # NaN, infinite or negative weights: refused, or kept
    memory_limit: int | None = None  # bytes; None: default_memory_limit()
    temp_dir: str | None = None  # where sorted runs go; default: inside the new graph dir
    pages: bool = False  # build the slotted pages right after the commit (else on first need)
    device: str = "auto"  # where the sort runs: a GPU when there is one (auto), cpu, gpu
    #: a property graph's schema (JSON: its labels, keys and properties), kept in the entry's
    #: stats under "property_graph" for the layers above (the catalog does not read it)
    schema: str | None = None

    def check(self) -> "IngestOptions":
        for name, choices in POLICIES.items():
            value = getattr(self, name)
            if value not in choices:
                raise IngestError(f"{name.replace('_', '-')} must be one of "
                                  f"{', '.join(choices)}, not {value!r}")
        if self.memory_limit is not None and self.memory_limit < (1 << 20):
            raise IngestError("memory limit must be at least 1 MiB")
        return self


#: Memory a parallel reader part takes (pyarrow's read-ahead and its thread's allocator), measured
#: at ~10 MiB with the 64 KiB blocks of a 64 MB limit: a part per core, and per this much limit.
PART_BYTES = 32 << 20
#: Parts of a text file read at once at most.
MAX_PARTS = 64


def read_parts(budget: int) -> int:
    """Parts a large text file is parsed in at once: one per core, within the memory limit."""
    return max(1, min(os.cpu_count() or 1, MAX_PARTS, budget // PART_BYTES))


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
                    writer.write_table(table.take(arrow_values(read_range(rows, start, start + chunk))))
                if not len(rows):
                    writer.write_table(table.slice(0, 0))


def _vertex_table(ids: pa.Array, internal: np.ndarray | None, props: pa.Table | None
                  ) -> pa.Table:
    """``id`` (sorted user ids) + vertex properties in internal order (nulls for vertices that
    only the edges named); ``internal``: the internal id of each row of ``props``."""
    table = pa.table({"id": ids})
    if props is None or props.num_columns == 0:
        return table
    position = np.full(len(ids), -1, dtype=np.int64)
    position[internal] = np.arange(len(internal))
    take = arrow_values(position, valid=position >= 0)
    for name in props.column_names:
        table = table.append_column(props.schema.field(name), props.column(name).take(take))
    return table


def _mapped(chunks, mapper: IdMapper):
    """Spooled chunks with their keys turned into internal ids."""
    for chunk in chunks:
        out = dict(chunk)
        out["src"], out["dst"] = mapper(chunk["src"]), mapper(chunk["dst"])
        yield out


@dataclass
class _Sorted:
    """What the sort phase hands on: the CSRs, the vertex count, the user ids in internal
    order (chunk by chunk) and the internal id of given keys."""

    topology: Topology
    n: int
    id_chunks: Callable[[], Iterator[pa.Array]]
    internal: Callable[[np.ndarray], np.ndarray]
    device: str = "cpu"  # what sorted: 'cpu' or 'gpu'


def _sort(spool: SpoolSet | DeviceSpool, ids: IdSet, options: IngestOptions, weighted: bool,
          with_rows: bool, budget: int, chunk_rows: int, tmp: Path) -> _Sorted:
    """Out-CSR and (directed) in-CSR of the spooled edges, keys renumbered or mapped; on the
    device when the spool is there and its keys need no binary search."""
    host_chunks = spool.host_chunks if isinstance(spool, DeviceSpool) else spool.chunks
    plan = ids.finish(lambda: (c[k] for c in host_chunks(chunk_rows) for k in ("src", "dst")),
                      spool.rows, budget)
    merge = options.merge_weights if options.duplicates == "merge" else None
    common = dict(undirected=options.undirected, weighted=weighted, with_rows=with_rows,
                  merge=merge, budget_bytes=budget // 2, tmpdir=tmp)
    in_memory = not spool.spilled
    try:
        if isinstance(spool, DeviceSpool) and (isinstance(plan, DenseKeys) or
                                               plan.lut is not None):
            return _sort_on_device(spool, plan, ids, options)
        if isinstance(plan, DenseKeys):
            source = EdgeSource(lambda: host_chunks(chunk_rows), spool.rows, in_memory)
            topology = build_topology(source, plan.span, renumber=True,
                                      extra_keys=ids.extra_keys, **common)
            renumber = topology.renumber
            return _Sorted(topology, renumber.n,
                           lambda: (arrow_values(k) for k in renumber.keys()), renumber)
        mapper = plan
        source = EdgeSource(lambda: _mapped(host_chunks(chunk_rows), mapper), spool.rows,
                            in_memory)
        topology = build_topology(source, mapper.n, renumber=False, **common)
        return _Sorted(topology, mapper.n, lambda: iter([mapper.ids]), mapper)
    finally:
        spool.discard()


def _sort_on_device(spool: DeviceSpool, plan: DenseKeys | IdMapper, ids: IdSet,
                    options: IngestOptions) -> _Sorted:
    if isinstance(plan, DenseKeys):
        built = device_topology(spool.xp, spool, plan.span, undirected=options.undirected,
                                renumber=True, extra_keys=list(ids.extra_keys()))
        numbering = built.renumber
        ids_of = lambda: (arrow_values(k) for k in numbering.keys())  # noqa: E731
        internal = numbering
    else:
        built = device_topology(spool.xp, spool, plan.n, undirected=options.undirected,
                                renumber=False, lut=plan.lut)
        numbering, ids_of, internal = built.renumber, (lambda: iter([plan.ids])), plan
    csrs = {d: CSR(a["offsets"], a["targets"], a.get("weight"), a.get("row"))
            for d, a in built.arrays.items()}
    return _Sorted(Topology(csrs["out"], csrs.get("in"), numbering), numbering.n, ids_of,
                   internal, "gpu")


def _device_for(options: IngestOptions, rows: int, budget: int):
    """The array module of the device that sorts (CuPy), or None for the CPU."""
    if options.device == "cpu" or (options.device == "auto" and rows < GPU_MIN_ROWS):
        return None
    xp = device_xp(options.device)
    if xp is None:
        if options.device == "gpu":
            raise IngestError("--device gpu: no GPU can be used (it needs CuPy and a CUDA "
                              "device); use --device cpu or auto")
        return None
    # Not on the device: merged duplicates (the CPU merges), edges beyond its free memory, and
    # CSR arrays (back on the host for the commit) beyond half the host's memory limit.
    if (options.duplicates == "merge" or rows * DEVICE_BYTES_PER_EDGE > free_device_bytes(xp)
            or rows * HOST_BYTES_PER_EDGE > budget // 2):
        return None
    return xp


def build_graph_arrays(src: np.ndarray, dst: np.ndarray, n: int, weights: np.ndarray | None,
                       directed: bool) -> dict[str, np.ndarray]:
    """The stored arrays of an in-memory edge list of internal ids 0..n-1: the out-CSR, plus the
    in-CSR of a directed graph (an undirected edge is stored both ways, a self loop once), in
    the order an ingest stores them. For tests and benchmarks that build graphs without files;
    the same counting sort as the ingest, with everything in memory."""
    chunk = {"src": np.asarray(src), "dst": np.asarray(dst)}
    if weights is not None:
        chunk["weight"] = np.asarray(weights, dtype=np.float64)
    topology = build_topology(EdgeSource(lambda: iter([chunk]), len(chunk["src"]), True), n,
                              undirected=not directed, weighted=weights is not None,
                              with_rows=False, merge=None, budget_bytes=1 << 62,
                              tmpdir=Path("."), renumber=False)  # never spills
    arrays = {}
    for side, csr in (("out", topology.out), ("in", topology.reverse)):
        if csr is None:
            continue
        arrays[f"{side}_offsets"], arrays[f"{side}_targets"] = csr.offsets, csr.targets
        if weights is not None:
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
    gdir = begin_graph_dir(env, graph_id)
    if options.temp_dir:
        # Folders of killed ingests there go first; this one's is locked while it runs.
        remove_stale_temp(Path(options.temp_dir))
        tmp = Path(options.temp_dir) / f"{TEMP_PREFIX}{graph_id}"
        held = holding(tmp)
    else:
        tmp = gdir / "tmp"  # removed by the next open if this process is killed
        tmp.mkdir(parents=True, mode=0o700)
        held = contextlib.nullcontext()
    try:
        with held:
            try:
                entry = _ingest(env, name, edges, options, replace_entry, progress, budget,
                                graph_id, gdir, tmp, started, narrow=True)
            except NarrowIdsOverflow:  # an id past 32 bits after all: once more, with 64
                for leftover in tmp.iterdir():
                    if leftover.name.startswith(SPOOLED_INPUT):
                        continue  # standard input's copy is read again
                    shutil.rmtree(leftover) if leftover.is_dir() else leftover.unlink()
                entry = _ingest(env, name, edges, options, replace_entry, progress, budget,
                                graph_id, gdir, tmp, started, narrow=False)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
        progress.close()
    return entry


def _ingest(env, name, edges, options, replace_entry, progress, budget, graph_id, gdir, tmp,
            started, narrow: bool) -> GraphEntry:
    layout = TextLayout(options.delimiter, options.header)
    forced = None if options.id_type == "auto" else options.id_type
    ids = IdSet(forced, pending_limit=max(1 << 12, budget // 64))
    vertex_keys = vertex_props = None
    if options.vertices is not None:
        # --delimiter/--no-header describe the edge file; the vertex file has its format's
        # default layout (a header for CSV/TSV, none for text and Graphalytics files).
        vertex_source = InputFiles(options.vertices, options.vertex_format,
                                   block_bytes=block_bytes_for(budget), spool_dir=tmp)
        vertex_keys, vertex_props = read_vertices(vertex_source, options.vertex_id, ids)
        if options.missing_vertices == "error":
            ids.freeze()
    source = InputFiles(edges, options.format, layout, block_bytes=block_bytes_for(budget),
                        spool_dir=tmp)
    for f in source.files:  # with a vertex file, no edges is a graph without edges
        f.may_be_empty = options.vertices is not None
    rows = source.estimated_rows()
    xp = _device_for(options, rows, budget)
    if xp is None:
        # A large graph is sorted by a compiled kernel (unless the memory limit is small):
        # load it while the input is read.
        preload(rows, budget, COUNT_KEYS, SCATTER)
    check_missing = options.vertices if ids.frozen else None

    # Peek at the columns first: whether there is a weight and properties decides the spool.
    first = source.files[0]
    head = first.first_batch()
    schema = head.schema
    chosen = EdgeColumns.choose(schema, first.shown, options.src, options.dst, options.weight,
                                first.format)
    narrow = narrow and all(f.format in TEXT_FORMATS for f in source.files) and narrow_ids(
        head, chosen, options.id_type)
    del head
    key_type = np.int32 if narrow else np.int64
    spool_columns = {"src": key_type, "dst": key_type}
    if chosen.weight:
        spool_columns["weight"] = np.float64
    props = _PropertyFile(tmp / "properties.arrow") if chosen.properties else None
    if props is not None:
        spool_columns["row"] = np.int64
    source.split(read_parts(budget))
    # The edges stay in memory up to a quarter of the limit: the reader's blocks and batches
    # take their share beside them, and the sort needs half for its own arrays.
    if xp is not None:  # the keys go to the device as they are read
        spool = DeviceSpool(xp, spool_columns, parts=len(source.parts))
    else:
        spool = SpoolSet(tmp, "edges", spool_columns, budget_bytes=budget // 4,
                         parts=len(source.parts))

    progress.phase("read", source.total_bytes)
    counts = read_edges(source, lambda schema, f: chosen, ids, spool,
                        drop_loops=options.self_loops == "drop", check_missing=check_missing,
                        property_sink=props, progress=progress,
                        group_rows=group_rows_for(budget),
                        column_types=text_column_types(schema, chosen, options.id_type, narrow),
                        invalid_weights=options.invalid_weights)
    # Arrow's allocator keeps freed blocks for reuse; hand the reader's back before sorting.
    pa.default_memory_pool().release_unused()
    if props is not None:
        if props.schema is None:  # no edges: the file still says the columns (writes add rows)
            props(pa.schema([schema.field(c) for c in chosen.properties]).empty_table())
        props.close()
    if len(ids) == 0:
        raise IngestError("no vertices", file=str(source))

    progress.phase("sort")
    weighted = chosen.weight is not None
    chunk_rows = max(1 << 12, budget // (8 * spool.row_bytes))
    result = _sort(spool, ids, options, weighted, props is not None, budget, chunk_rows, tmp)
    out, reverse, n = result.topology.out, result.topology.reverse, result.n
    sort_device = result.device
    arrays = {"out_offsets": out.offsets, "out_targets": out.targets}
    if weighted:
        arrays["out_weights"] = out.weights
    if reverse is not None:
        arrays.update(in_offsets=reverse.offsets, in_targets=reverse.targets)
        if weighted:
            arrays["in_weights"] = reverse.weights

    # The vertex table goes to its file now: the user ids and the id lookup then leave memory
    # before the commit, which holds the CSR.
    id_type = "string" if ids.kind == "string" else "int64"
    vertices = write_vertices(gdir, result, vertex_keys, vertex_props)
    del result, ids, vertex_keys, vertex_props
    trim_heap()

    if props is not None:
        progress.phase("properties")
        props.write_in_order(out.rows, gdir / "edges.arrow", chunk_rows)

    progress.phase("commit")
    stats = _stats(out, arrays, options, counts, n)
    stats["sort_device"] = sort_device
    if chosen.weight is not None:  # g.edges shows the weight under its own name and type
        stats["weight_column"] = chosen.weight
        stats["weight_type"] = str(schema.field(chosen.weight).type)
    # The property schemas, as DESCRIBE shows them (the Arrow files hold the exact types).
    stats["vertex_properties"] = ", ".join(f"{f.name} {f.type}" for f in vertices
                                           if f.name != "id")
    stats["edge_properties"] = ", ".join(f"{f.name} {f.type}" for f in props.schema
                                         ) if props is not None and props.schema else ""
    if options.schema is not None:
        stats["property_graph"] = json.loads(options.schema)
    entry = GraphEntry(
        name=name, graph_id=graph_id, directed=not options.undirected, weighted=weighted,
        num_vertices=n, num_edges=int(len(out.targets)), input_edges=counts.rows,
        id_type=id_type,
        created=time.time(),
        source=str(source) + (f" + {options.vertices}" if options.vertices else ""),
        stats=stats,
    )
    entry = write_graph(env, entry, arrays, replace_entry=replace_entry, started=started,
                        memory_limit=budget)
    return entry


#: Vertices whose degrees the statistics look at a time (offsets may be a file's memory map):
#: ~24 bytes of temporaries each, 6 MiB.
STATS_CHUNK = 1 << 18


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
        "weights_nan": counts.weights_nan,
        "weights_infinite": counts.weights_infinite,
        "weights_negative": counts.weights_negative,
        "duplicates_merged": out.merged,
        "csr_bytes": int(sum(a.nbytes for a in arrays.values())),
    }


def write_vertices(gdir: Path, result: _Sorted, keys: np.ndarray | None,
                   props: pa.Table | None) -> pa.Schema:
    """The vertex table (``id``, then any properties) as ``vertices.arrow`` in a graph's folder;
    its schema. Without properties the ids are written piece by piece (no array of them)."""
    path = str(gdir / "vertices.arrow")
    if props is not None and props.num_columns:
        ids = pa.concat_arrays(list(result.id_chunks()))
        table = _vertex_table(ids, result.internal(keys), props)
        with pa.ipc.new_file(path, table.schema) as writer:
            writer.write_table(table)
        return table.schema
    writer = schema = None
    for ids in result.id_chunks():
        if writer is None:
            schema = pa.schema([("id", ids.type)])
            writer = pa.ipc.new_file(path, schema)
        writer.write_batch(pa.record_batch([ids], names=["id"]))
    writer.close()
    return schema


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
                replace_entry: GraphEntry | None,
                started: float | None = None, memory_limit: int | None = None) -> GraphEntry:
    """Commit a graph (the commit point of an ingest): given id-mapped CSR arrays (which may be
    np.memmap), with ``vertices.arrow`` (:func:`write_vertices`) and any edge properties
    already in the graph directory, write the CSR blocks and the catalog entry in ONE LMDB
    write transaction (pages come later: catalog.pages). Under ``memory_limit`` what was
    written is unmapped every quarter of it (at least every 4 MiB)."""
    gdir = env.graph_dir(entry.graph_id)
    stats = dict(entry.stats)
    files = arrow_records(env, gdir)
    stats["vertex_id_bytes"] = files["vertices.arrow"]["bytes"]
    stats["edge_property_bytes"] = files.get("edges.arrow", {}).get("bytes", 0)
    if started is not None:
        stats["ingest_seconds"] = round(time.perf_counter() - started, 3)
    entry = replace(entry, stats=stats, files=files)
    # Unmapping costs a system call and faults later (~15% of RMAT20's commit at every 64 MiB):
    # what was written stays mapped up to a quarter of the limit, the share it may hold.
    release = RELEASE_EVERY if memory_limit is None else max(4 << 20, memory_limit // 4)

    def commit(txn):
        # CSR blocks, in the same transaction as the entry that makes them visible (the
        # entry's stats dict is ``stats``: it records what was written)
        stats.update(write_topology(env, txn, entry.graph_id, arrays, release_every=release))
        stats["bytes_stored"] = (stats["block_bytes"] + stats["vertex_id_bytes"]
                                 + stats["edge_property_bytes"])
        if replace_entry is not None:  # freed once no statement reads it (catalog.leases)
            retire_version(env, txn, replace_entry)
        put_entry(env, txn, entry.name, entry.to_json())
        settle(env, txn, entry.graph_id)

    env.write(commit)
    env.release_resident()  # what the commit left mapped is page cache, not the ingest's
    return entry

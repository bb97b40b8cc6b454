"""Checks of what is read from disk, made before anything computes with it.

A compiled kernel trusts its CSR: an offset out of order or a target out of range is a read out
of bounds (a segfault, or a silently wrong answer). Checksums catch damaged bytes; these checks
catch consistent-looking lies (a re-sealed block, a catalog entry whose sizes do not match its
arrays), once per array load, vectorised: a few passes over memory already read, against
the seconds a kernel spends on the same arrays. Each function returns a problem as text, or
None; the catalog turns a problem into :class:`CorruptGraph` naming the graph and the file.
"""

from __future__ import annotations

import os

import numpy as np
import pyarrow as pa

from graphdb.storage.checksum import file_checksum

from .entries import GraphEntry
from .renumber import internal_dtype

__all__ = ["arrow_file_problem", "array_problem", "offsets_problem", "table_problem",
           "targets_problem"]

#: Elements compared per step of the monotonicity check (bounds its temporary memory).
CHUNK = 1 << 22


def expected_array(entry: GraphEntry, array: str) -> tuple[np.dtype, int]:
    """dtype and length a CSR array of ``entry`` must have (``out_targets``, ``in_offsets``)."""
    kind = array.split("_", 1)[1]
    if kind == "offsets":
        return np.dtype(np.int64), entry.num_vertices + 1
    if kind == "targets":
        return internal_dtype(entry.num_vertices), entry.num_edges
    return np.dtype(np.float64), entry.num_edges


def array_problem(entry: GraphEntry, array: str, dtype: np.dtype, length: int) -> str | None:
    """Whether a stored array record agrees with the catalog entry (before reading it)."""
    want_dtype, want_length = expected_array(entry, array)
    if np.dtype(dtype) != want_dtype:
        return (f"array {array!r} is stored as {np.dtype(dtype).name}; a graph of "
                f"{entry.num_vertices} vertices stores it as {want_dtype.name}")
    if length != want_length:
        return (f"array {array!r} has {length} elements; the catalog entry "
                f"({entry.num_vertices} vertices, {entry.num_edges} edges) needs {want_length}")
    return None


def offsets_problem(offsets: np.ndarray, num_edges: int, array: str) -> str | None:
    """CSR offsets: from 0 to ``num_edges``, never decreasing."""
    if len(offsets) == 0:
        return f"array {array!r} is empty"
    if int(offsets[0]) != 0 or int(offsets[-1]) != num_edges:
        return (f"array {array!r} runs from {int(offsets[0])} to {int(offsets[-1])}, not from "
                f"0 to {num_edges}")
    for start in range(0, len(offsets) - 1, CHUNK):
        part = offsets[start : start + CHUNK + 1]
        drops = np.flatnonzero(part[1:] < part[:-1])
        if drops.size:
            at = start + int(drops[0])
            return (f"array {array!r} decreases at vertex {at} ({int(offsets[at])} then "
                    f"{int(offsets[at + 1])})")
    return None


def targets_problem(targets: np.ndarray, num_vertices: int, array: str) -> str | None:
    """CSR targets: every one a vertex, in ``[0, num_vertices)``."""
    if len(targets) == 0:
        return None
    low, high = int(targets.min()), int(targets.max())
    if low < 0 or high >= num_vertices:
        bad = low if low < 0 else high
        return f"array {array!r} holds vertex {bad}, outside 0..{num_vertices - 1}"
    return None


def arrow_file_problem(path, record: dict) -> str | None:
    """An Arrow file against its catalog record: present, of the recorded size and checksum.
    ``path`` may be an open file descriptor."""
    try:
        size = os.fstat(path).st_size if isinstance(path, int) else path.stat().st_size
    except FileNotFoundError:
        return "is missing"
    if size != record["bytes"]:
        return f"has {size} bytes; the catalog entry records {record['bytes']}"
    try:
        value = file_checksum(path, record["algorithm"])
    except Exception as exc:  # an unknown algorithm, xxhash missing, unreadable
        return f"cannot be verified: {exc}"
    if value != record["checksum"]:
        return "fails its checksum (its bytes changed after it was written)"
    return None


def table_problem(entry: GraphEntry, name: str, table: pa.Table) -> str | None:
    """The Arrow table of ``name`` against the entry: rows, the id column, Arrow's own checks."""
    rows = entry.num_vertices if name == "vertices.arrow" else entry.num_edges
    if table.num_rows != rows:
        return f"has {table.num_rows} rows; the catalog entry needs {rows}"
    if name == "vertices.arrow":
        want = pa.string() if entry.id_type == "string" else pa.int64()
        if "id" not in table.column_names or table.schema.field("id").type != want:
            return f"has no 'id' column of type {want}"
        if table.column("id").null_count:
            return "has vertices without an id"
    try:
        table.validate(full=True)
    except pa.ArrowInvalid as exc:
        return f"is not a valid Arrow table ({str(exc).splitlines()[0][:200]})"
    if name == "vertices.arrow" and entry.id_type == "int64" and entry.num_vertices > 1:
        column = table.column("id").combine_chunks()  # int64 without nulls: checked above
        # (not to_numpy(): pyarrow imports pandas for it, 0.4 s of a fresh process)
        ids = np.frombuffer(column.buffers()[1], dtype=np.int64, count=len(column),
                            offset=column.offset * 8)
        if np.any(ids[1:] <= ids[:-1]):
            return "holds vertex ids out of order (they are stored ascending, each once)"
    return None

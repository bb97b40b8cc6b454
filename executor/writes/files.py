"""Arrow tables as the files the bulk ingest reads: rows computed by a plan (a query's result) or
given by the program are written to a temporary Arrow IPC file and ingested from there, which
keeps one path for validation, the ingest's options and the atomic commit."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa

__all__ = ["plain_schema", "plain_type", "write_arrow_file"]


def plain_type(t: pa.DataType) -> pa.DataType:
    """The type the ingest reads: large and view string/binary types as plain ones."""
    if pa.types.is_large_string(t) or pa.types.is_string_view(t):
        return pa.string()
    if pa.types.is_large_binary(t) or pa.types.is_binary_view(t):
        return pa.binary()
    if pa.types.is_dictionary(t):
        return plain_type(t.value_type)
    return t


def plain_schema(schema: pa.Schema) -> pa.Schema:
    return pa.schema([f.with_type(plain_type(f.type)) for f in schema])


def write_arrow_file(data: pa.Table | pa.RecordBatchReader, path: Path) -> None:
    """Arrow IPC file of ``data``, batch by batch; at least one (maybe empty) batch, so the
    columns are known even without rows."""
    schema = plain_schema(data.schema)
    batches = data if isinstance(data, pa.RecordBatchReader) else data.to_batches()
    with pa.ipc.new_file(str(path), schema) as writer:
        wrote = False
        for batch in batches:
            if batch.schema != schema:
                batch = batch.cast(schema)
            writer.write_batch(batch)
            wrote = True
        if not wrote:
            writer.write_batch(pa.RecordBatch.from_pylist([], schema))

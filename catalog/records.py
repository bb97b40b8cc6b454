"""The two forms catalog records take in LMDB, written once for graphs and tables alike:

- sealed JSON (catalog entries of graphs and tables, views, schemas): the object with a
  ``seal``, a checksum over its canonical JSON, checked when read;
- an operation's rows (delta records of graphs and tables): an Arrow IPC stream whose schema
  metadata names the operation, its table checked by Arrow when read.
"""

from __future__ import annotations

import json
from collections.abc import Callable

import pyarrow as pa

from graphdb.storage.checksum import checksum, default_algorithm

from .errors import CorruptGraph

#: Arrow IPC's current format (what ``pa.ipc.new_stream`` writes by default).
_IPC_OPTIONS = pa.ipc.IpcWriteOptions()

__all__ = ["canonical", "decode_table", "encode_table", "open_json", "seal_json"]


def canonical(data: dict) -> bytes:
    return json.dumps(data, sort_keys=True, separators=(",", ":")).encode()


def seal_json(data: dict) -> bytes:
    """``data`` as stored: its canonical JSON with a seal over it (the seal a last member,
    written onto the canonical text: one encoding, not two; readers take any JSON)."""
    if "seal" in data:
        raise ValueError("a sealed record has no member 'seal' of its own")
    algorithm = default_algorithm()
    text = canonical(data)
    seal = json.dumps([algorithm, checksum(text, algorithm)], separators=(",", ":")).encode()
    return text[:-1] + (b',"seal":' if len(text) > 2 else b'"seal":') + seal + b"}"


def open_json(raw: bytes, bad: Callable[[str], Exception]) -> dict:
    """The JSON object stored as ``raw`` after checking its seal; ``bad(problem)`` is the error
    raised when it is not one."""
    try:
        data = json.loads(bytes(raw).decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        raise bad("is not JSON") from None
    if not isinstance(data, dict):
        raise bad("is not a JSON object")
    seal = data.pop("seal", None)
    if not (isinstance(seal, list) and len(seal) == 2
            and all(isinstance(v, int) and not isinstance(v, bool) for v in seal)):
        raise bad("carries no seal (checksum)")
    try:
        matches = checksum(canonical(data), seal[0]) == seal[1]
    except Exception as exc:  # an unknown algorithm, or xxhash missing
        raise bad(f"cannot be verified: {exc}") from None
    if not matches:
        raise bad("fails its checksum (it was changed after it was written)")
    return data


def encode_table(table: pa.Table, key: str, kind: str) -> bytes:
    """``table`` as a record: an Arrow IPC stream whose schema metadata says ``key: kind``."""
    table = table.replace_schema_metadata({key: kind})
    sink = pa.BufferOutputStream()
    # the writer made with options given (pyarrow's default reads two environment variables)
    with pa.ipc.RecordBatchStreamWriter(sink, table.schema, options=_IPC_OPTIONS) as writer:
        writer.write_table(table)
    return sink.getvalue().to_pybytes()


def decode_table(payload: bytes, where: str, key: str, kinds) -> tuple[str, pa.Table]:
    """(kind, table) of a record, its kind one of ``kinds`` and its table valid; CorruptGraph
    naming ``where`` if not."""
    try:
        table = pa.ipc.open_stream(pa.py_buffer(payload)).read_all()
        table.validate(full=True)
    except (pa.ArrowException, OSError) as exc:
        raise CorruptGraph(f"{where} is not a readable record ({str(exc)[:120]})",
                           file="meta.lmdb/data.mdb") from None
    kind = (table.schema.metadata or {}).get(key.encode(), b"").decode("ascii", "replace")
    if kind not in kinds:
        raise CorruptGraph(f"{where} holds an unknown operation {kind[:40]!r}",
                           file="meta.lmdb/data.mdb")
    return kind, table.replace_schema_metadata(None)

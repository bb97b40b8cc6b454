"""Connection settings changed with ``SET name = value`` and ``RESET name``."""

from __future__ import annotations

import re
from dataclasses import dataclass, fields, replace
from typing import Any

import pyarrow as pa

from graphdb.executor.device import DEVICE_CHOICES
from graphdb.executor.paths import DEFAULT_PATH_ROWS
from graphdb.executor.physical.sizing import DEBUG_VARIANTS
from graphdb.storage.durability import SYNCHRONOUS

from .errors import InvalidInputError

__all__ = ["Settings", "parse_bytes", "apply_threads"]

_UNITS = {"": 1, "b": 1, "k": 1000, "kb": 1000, "kib": 1024, "m": 1000**2, "mb": 1000**2,
          "mib": 1024**2, "g": 1000**3, "gb": 1000**3, "gib": 1024**3, "t": 1000**4,
          "tb": 1000**4, "tib": 1024**4}


#: The largest size a setting takes (an exbibyte): beyond any machine, within int64.
MAX_BYTES = 1 << 60
#: The most threads ``SET threads`` takes.
MAX_THREADS = 4096


def parse_bytes(value: Any, name: str = "size") -> int:
    """'256MB', '4GiB', '1.5 GB' or a number of bytes: at least one byte once rounded down
    (``0.5`` is refused, not taken as 0), at most :data:`MAX_BYTES`."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        size = value
    else:
        match = re.fullmatch(r"\s*(\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)\s*([A-Za-z]*)\s*",
                             str(value))
        if not match or match.group(2).lower() not in _UNITS:
            raise InvalidInputError(
                f"{name}: cannot read {value!r} as a size (examples: '512MB', '4GB', '1GiB')")
        size = float(match.group(1)) * _UNITS[match.group(2).lower()]
    if size != size or size <= 0:  # NaN too
        raise InvalidInputError(f"{name} must be a positive size, got {value!r}")
    if size >= MAX_BYTES + 1:
        raise InvalidInputError(f"{name} of {value!r} is larger than {MAX_BYTES} bytes (1 EiB)")
    if int(size) < 1:
        raise InvalidInputError(f"{name} of {value!r} rounds down to 0 bytes; give at least 1")
    return int(size)


#: Arrow's CPU thread count when the process started; ``RESET threads`` restores it.
_DEFAULT_THREADS = pa.cpu_count()

_DOCS = {
    "device": "where graph operators run: 'auto' (a GPU when usable), 'cpu' or 'gpu'",
    "memory_limit": "bytes graph operators may use on the device, e.g. '4GB'",
    "threads": "CPU threads for Arrow compute and the parallel graph kernels (PageRank); "
               "process-wide",
    "buffer_pool_size": "bytes of host frames the buffer manager keeps pages and blocks in",
    "host_memory_limit": "bytes of host memory a streamed operator may hold the graph's "
                         "topology in; past it BFS and PageRank stream slotted pages from the "
                         "store",
    "debug_variant": "for testing: 'auto' (the cost model decides), or force graph operators "
                     "onto 'resident', 'streamed' (Subway, edge chunks) or 'pages' variants, "
                     "with a budget small enough that they stream in several pieces, or "
                     "'partitioned' over the GPUs, the cluster or debug_ranks",
    "gpus": "GPUs of this host a graph operator may be partitioned over: 'all' (used when the "
            "cost model predicts it faster) or a number (1: one GPU)",
    "debug_ranks": "for testing: partition graph operators over this many ranks simulated in "
                   "this process (0: off)",
    "max_path_rows": "the most rows a pattern's quantified edge may return (one per path); "
                     "a pattern that would return more is refused before any path is built",
    "compaction_threshold": "share of a graph's stored edges its uncompacted writes may reach "
                            "before a commit compacts it in the background (0: only "
                            "CHECKPOINT), e.g. 0.05 or '5%'",
    "search_path": "schemas (comma-separated) an unqualified table name is looked up in, in "
                   "order, before main, and CREATE TABLE makes an unqualified table in the "
                   "first of them ('' : main only)",
    "synchronous": "when a write returns, as SQLite's: 'full' (the default) once it is on disk "
                   "(a sync shared with concurrent writers); 'normal' once its data is, a "
                   "crash of the operating system or a power loss may then undo the last "
                   "transaction (never part of one)",
}


#: Settings whose value is one of a few words.
_CHOICES = {"device": DEVICE_CHOICES, "debug_variant": DEBUG_VARIANTS,
            "synchronous": SYNCHRONOUS}


def _integer(name: str, value: Any, low: int, high: int | None, alternative: str = "") -> int:
    """An integer setting's value, refused outside ``low..high``."""
    if not isinstance(value, int) or isinstance(value, bool) or value < low \
            or (high is not None and value > high):
        span = f"from {low} to {high}" if high is not None else f"of at least {low}"
        raise InvalidInputError(f"{name} must be {alternative}an integer {span}, got {value!r}")
    return value


def _schemas(value: Any) -> str:
    """``search_path``: schema names, comma-separated, each a plain identifier."""
    names = [n.strip().strip('"') for n in str(value).split(",") if n.strip()]
    for name in names:
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
            raise InvalidInputError(f"search_path: '{name}' is not a schema name (letters, "
                                    "digits and underscores)")
    return ",".join(names)


def _share(name: str, value: Any) -> float:
    """A fraction from 0 to 1, given as a number or as a percentage ('5%')."""
    text = str(value).strip()
    try:
        share = float(text[:-1]) / 100 if text.endswith("%") else float(value)
    except (TypeError, ValueError):
        share = -1.0
    if isinstance(value, bool) or not 0.0 <= share <= 1.0:
        raise InvalidInputError(f"{name} must be a share from 0 to 1 (or '0%' to '100%'), "
                                f"got {value!r}")
    return share


def apply_threads(threads: int | None) -> None:
    """Make the ``threads`` setting real: Arrow's CPU thread pool is process-wide (the numba
    kernels size their pool from it when they run)."""
    pa.set_cpu_count(threads if threads is not None else _DEFAULT_THREADS)


@dataclass(frozen=True)
class Settings:
    #: 'auto' (a GPU when one is usable), 'cpu' or 'gpu'
    device: str = "auto"
    #: bytes operators may use on the device; None = a share of what is free
    memory_limit: int | None = None
    #: CPU threads for Arrow compute and the parallel CPU kernels; None = all cores
    threads: int | None = None
    #: bytes of host frames the buffer manager may hold; None = a share of physical memory
    buffer_pool_size: int | None = None
    #: bytes of host memory streamed operators may keep the topology in; None = a share of RAM
    host_memory_limit: int | None = None
    #: for testing: force a variant family ('auto' lets the cost model decide)
    debug_variant: str = "auto"
    #: GPUs a graph operator may be partitioned over; None = all of them
    gpus: int | None = None
    #: for testing: ranks simulated in this process (0: none)
    debug_ranks: int = 0
    #: the most rows (one per path) a quantified pattern may make
    max_path_rows: int = DEFAULT_PATH_ROWS
    #: delta share of the stored edges past which a commit compacts the graph (0: never)
    compaction_threshold: float = 0.05
    #: when a write returns: 'full' (durable) or 'normal' (storage.durability)
    synchronous: str = "full"
    #: schemas an unqualified table name is looked up in, in order, before main ('' = main)
    search_path: str = ""

    def set(self, name: str, value: Any) -> "Settings":
        name = name.lower()
        if name in _CHOICES:
            text = str(value).lower()
            if text not in _CHOICES[name]:
                raise InvalidInputError(f"{name} must be one of {', '.join(_CHOICES[name])}, "
                                        f"got {value!r}")
            return replace(self, **{name: text})
        if name == "memory_limit":
            return replace(self, memory_limit=parse_bytes(value, "memory_limit"))
        if name in ("buffer_pool_size", "host_memory_limit"):
            return replace(self, **{name: parse_bytes(value, name)})
        if name == "gpus":
            if isinstance(value, str) and value.lower() == "all":
                return replace(self, gpus=None)
            return replace(self, gpus=_integer(name, value, 1, None, "'all' or "))
        if name == "compaction_threshold":
            return replace(self, compaction_threshold=_share(name, value))
        if name == "debug_ranks":
            return replace(self, debug_ranks=_integer(name, value, 0, 64))
        if name == "max_path_rows":
            return replace(self, max_path_rows=_integer(name, value, 1, None))
        if name == "search_path":
            return replace(self, search_path=_schemas(value))
        if name == "threads":
            if not isinstance(value, int) or isinstance(value, bool) or \
                    not 1 <= value <= MAX_THREADS:
                raise InvalidInputError(f"threads must be a positive integer (at most "
                                        f"{MAX_THREADS}), got {value!r}")
            return replace(self, threads=value)
        raise InvalidInputError(self._unknown(name))

    def reset(self, name: str) -> "Settings":
        name = name.lower()
        if name not in self.names():
            raise InvalidInputError(self._unknown(name))
        return replace(self, **{name: getattr(Settings(), name)})

    def display(self, name: str) -> str:
        """The value of setting ``name`` as SHOW SETTINGS prints it."""
        value = getattr(self, name.lower())
        if value is None:
            return {"memory_limit": "auto (a share of free memory)", "gpus": "all",
                    "threads": f"auto ({_DEFAULT_THREADS})",
                    "buffer_pool_size": "auto (a share of physical memory)",
                    "host_memory_limit": "auto (a share of physical memory)"}.get(name.lower(), "NULL")
        return str(value)

    @staticmethod
    def docs() -> dict[str, str]:
        return dict(_DOCS)

    @staticmethod
    def names() -> list[str]:
        return [f.name for f in fields(Settings)]

    def _unknown(self, name: str) -> str:
        import difflib

        close = difflib.get_close_matches(name, self.names(), n=1)
        hint = f"; did you mean '{close[0]}'?" if close else f" (settings: {', '.join(self.names())})"
        return f"unknown setting '{name}'{hint}"

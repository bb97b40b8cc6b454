"""Connection settings changed with ``SET name = value`` and ``RESET name``."""

from __future__ import annotations

import re
from dataclasses import dataclass, fields, replace
from typing import Any

import pyarrow as pa

from graphdb.executor.device import DEVICE_CHOICES
from graphdb.executor.physical.sizing import DEBUG_VARIANTS

from .errors import InvalidInputError

__all__ = ["Settings", "parse_bytes", "apply_threads"]

_UNITS = {"": 1, "b": 1, "k": 1000, "kb": 1000, "kib": 1024, "m": 1000**2, "mb": 1000**2,
          "mib": 1024**2, "g": 1000**3, "gb": 1000**3, "gib": 1024**3, "t": 1000**4,
          "tb": 1000**4, "tib": 1024**4}


def parse_bytes(value: Any, name: str = "size") -> int:
    """'256MB', '4GiB', '1.5 GB' or a number of bytes."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        if value <= 0:
            raise InvalidInputError(f"{name} must be positive")
        return int(value)
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([A-Za-z]*)\s*", str(value))
    if not match or match.group(2).lower() not in _UNITS:
        raise InvalidInputError(
            f"{name}: cannot read {value!r} as a size (examples: '512MB', '4GB', '1GiB')")
    size = int(float(match.group(1)) * _UNITS[match.group(2).lower()])
    if size <= 0:
        raise InvalidInputError(f"{name} must be positive")
    return size


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
                     "with a budget small enough that they stream in several pieces",
}


#: Settings whose value is one of a few words.
_CHOICES = {"device": DEVICE_CHOICES, "debug_variant": DEBUG_VARIANTS}


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
        if name == "threads":
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise InvalidInputError(f"threads must be a positive integer, got {value!r}")
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
            return {"memory_limit": "auto (a share of free memory)",
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

"""GPU operators (CuPy + CUDA C). Imported lazily: nothing here may run at CPU-only import time.

:func:`implementation_for` maps an algorithm name to its GPU implementation, which has the same
signature as the CPU one in :mod:`graphdb.executor.algorithms` and is tested against it
(``tests/gpu``). The modules behind these names import CuPy only when called.
"""

from __future__ import annotations

from typing import Callable

__all__ = ["implementation_for", "GPU_IMPLEMENTATIONS"]

#: algorithm name -> "module:function" of its GPU implementation (imported on first use)
GPU_IMPLEMENTATIONS: dict[str, str] = {
    "bfs": ".frontier:bfs",
    "sssp": ".frontier:sssp",
    "pagerank": ".pagerank:pagerank",
    "wcc": ".wcc:wcc",
    "cdlp": ".cdlp:cdlp",
    "lcc": ".lcc:lcc",
}


def implementation_for(name: str) -> Callable | None:
    target = GPU_IMPLEMENTATIONS.get(name)
    if target is None:
        return None
    import importlib

    module, func = target.split(":")
    return getattr(importlib.import_module(module, __name__), func)

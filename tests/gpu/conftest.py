"""GPU tests: each GPU operator against its CPU twin or a scipy reference.

Every test here is marked ``gpu`` and skipped cleanly where CuPy or a CUDA device is missing.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:  # the checkout itself, without `pip install -e .`
    sys.path.insert(0, str(ROOT))

def _gpu_reason() -> str | None:
    from graphdb.executor.device import _gpu_probe

    ok, why = _gpu_probe()
    return None if ok else why


@pytest.fixture(autouse=True)
def _needs_gpu(request):
    if request.node.get_closest_marker("gpu") is not None:
        reason = _gpu_reason()
        if reason:
            pytest.skip(f"needs a CUDA GPU with CuPy: {reason}")


@pytest.fixture(params=[(1, 0), (7, 12), (60, 200), (500, 4000), (3000, 9000)],
                ids=lambda p: f"n{p[0]}m{p[1]}")
def sizes(request):
    return request.param

"""Shared fixtures: temporary databases, and the `gpu` marker skipped where no GPU is present."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # tests also run from a checkout without `pip install -e .`
    sys.path.insert(0, str(ROOT))  # (graphdb/_layout.py then maps graphdb.storage & co.)


def _gpu_present() -> bool:
    from graphdb.executor.device import gpu_available

    return gpu_available()


def pytest_collection_modifyitems(config, items):
    # the marker, not ``item.keywords``: a keyword also matches the tests/gpu folder's name,
    # which skipped that folder's CPU tests on every machine without a GPU
    marked = [item for item in items if item.get_closest_marker("gpu") is not None]
    if marked and not _gpu_present():
        skip = pytest.mark.skip(reason="needs a CUDA GPU with CuPy")
        for item in marked:
            item.add_marker(skip)


@pytest.fixture
def db_path(tmp_path) -> Path:
    """A path for a new database directory (not yet created)."""
    return tmp_path / "db"


@pytest.fixture
def con(db_path):
    import graphdb

    with graphdb.connect(db_path) as connection:
        yield connection

"""The one-way import order of DESIGN.md: storage <- catalog <- executor <- graphdb.

Every import statement in each package (including lazy ones inside functions) is checked, so a
layer cannot reach upward even where import-linter's static graph would miss it.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.support import ROOT

LAYERS = ["storage", "catalog", "executor", "graphdb"]


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(), filename=str(path))
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add(node.module.split(".")[0])
    return found


@pytest.mark.parametrize("layer", LAYERS)
def test_no_upward_imports(layer):
    forbidden = set(LAYERS[LAYERS.index(layer) + 1:]) | {"tools", "tests"}
    offenders = []
    for path in (ROOT / layer).rglob("*.py"):
        bad = _imports(path) & forbidden
        if bad:
            offenders.append(f"{path.relative_to(ROOT)} imports {', '.join(sorted(bad))}")
    assert not offenders, offenders


def test_only_storage_imports_lmdb_and_only_the_query_layer_imports_sqlglot():
    for layer in LAYERS:
        for path in (ROOT / layer).rglob("*.py"):
            imported = _imports(path)
            if "lmdb" in imported:
                assert layer == "storage", path
            if "sqlglot" in imported:
                assert path.is_relative_to(ROOT / "graphdb" / "query"), path


def test_cupy_is_not_imported_at_import_time():
    import subprocess
    import sys

    code = ("import sys, graphdb, executor.algorithms; "
            "assert 'cupy' not in sys.modules, 'cupy imported eagerly'")
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT, timeout=60)

"""The one-way import order of DESIGN.md: storage <- catalog <- executor <- graphdb's front end.

Installed, the inner layers are ``graphdb.storage``, ``graphdb.catalog`` and ``graphdb.executor``
(folders ``storage/``, ``catalog/``, ``executor/`` of the repository); the front end is every
other module of ``graphdb``. Every import statement in each layer (lazy ones inside functions
too, relative ones resolved) is checked, so a layer cannot reach upward even where
import-linter's static graph would miss it.
"""

from __future__ import annotations

import ast
import functools
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support import ROOT

#: folder -> the dotted package it is installed as, lowest layer first
LAYERS = {"storage": "graphdb.storage", "catalog": "graphdb.catalog",
          "executor": "graphdb.executor", "graphdb": "graphdb"}
ORDER = list(LAYERS)


def _layer_of(module: str) -> str | None:
    """The layer folder a dotted module belongs to (None: not ours)."""
    for folder in ORDER[:-1]:
        package = LAYERS[folder]
        if module == package or module.startswith(package + "."):
            return folder
    if module == "graphdb" or module.startswith("graphdb."):
        return "graphdb"
    top = module.split(".")[0]
    return top if top in ("tools", "tests") else None


def _module_name(path: Path) -> str:
    folder, *rest = path.relative_to(ROOT).with_suffix("").parts
    parts = LAYERS.get(folder, folder).split(".") + rest
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _package(path: Path) -> str:
    here = _module_name(path)
    return here if path.name == "__init__.py" else here.rpartition(".")[0]


def _source(node: ast.ImportFrom, package: str) -> str:
    """The module a ``from ... import`` statement in ``package`` imports from."""
    base = node.module or ""
    if node.level:
        anchor = package.split(".")
        anchor = anchor[:len(anchor) - (node.level - 1)]
        base = ".".join(anchor + ([base] if base else []))
    return base


@functools.cache
def _tree(path: Path) -> ast.Module:
    """``path`` parsed, once for all the tests of this file (none changes a tree)."""
    return ast.parse(path.read_text(), filename=str(path))


@functools.cache
def _imports(path: Path) -> frozenset[str]:
    """Every module named by an import statement in ``path``, relative imports resolved."""
    tree = _tree(path)
    package = _package(path)
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = _source(node, package)
            found.add(base)
            found.update(f"{base}.{alias.name}" for alias in node.names)
    return frozenset(found)


@pytest.mark.parametrize("layer", ORDER)
def test_no_upward_imports(layer):
    above = set(ORDER[ORDER.index(layer) + 1:]) | {"tools", "tests"}
    offenders = []
    for path in (ROOT / layer).rglob("*.py"):
        bad = {m for m in _imports(path) if _layer_of(m) in above}
        if bad:
            offenders.append(f"{path.relative_to(ROOT)} imports {', '.join(sorted(bad))}")
    assert not offenders, offenders


def test_nothing_imports_the_layers_by_their_folder_names():
    """``import storage`` would work in a checkout and fail (or find a user's module) once
    installed: every reference goes through ``graphdb.``."""
    offenders = []
    for folder in (*ORDER, "tools", "tests"):
        for path in (ROOT / folder).rglob("*.py"):
            bad = {m for m in _imports(path) if m.split(".")[0] in ORDER[:-1]}
            if bad:
                offenders.append(f"{path.relative_to(ROOT)} imports {', '.join(sorted(bad))}")
    assert not offenders, offenders


def test_only_storage_imports_lmdb_and_only_the_query_layer_imports_sqlglot():
    for layer in ORDER:
        for path in (ROOT / layer).rglob("*.py"):
            tops = {m.split(".")[0] for m in _imports(path)}
            if "lmdb" in tops:
                assert layer == "storage", path
            if "sqlglot" in tops:
                assert path.is_relative_to(ROOT / "graphdb" / "query"), path


def test_cupy_is_not_imported_at_import_time():
    code = ("import sys, graphdb, graphdb.executor.algorithms; "
            "assert 'cupy' not in sys.modules, 'cupy imported eagerly'")
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT, timeout=60)


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _defined_private_names(tree: ast.AST) -> set[str]:
    """The private names a module defines: functions, classes, module and class variables,
    attributes it assigns (``self._x = ...``), parameters."""
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store) and \
                isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"):
            names.add(node.attr)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, ast.arg):
            names.add(node.arg)
    return {n for n in names if _private(n)}


def test_no_module_touches_another_modules_private_names():
    """A name starting with an underscore is its module's own: no other module of the package
    imports it or reaches for it as an attribute (``con._runner``), so a module's inside can
    change without breaking another. A subclass calling its base's ``self._helper`` is within
    the class; a private module of a package (``graphdb._version``) may be imported by it."""
    paths = [p for layer in ORDER for p in (ROOT / layer).rglob("*.py")]
    trees = {path: _tree(path) for path in paths}
    modules = {_module_name(path) for path in trees}
    defined = {path: _defined_private_names(tree) for path, tree in trees.items()}
    ours = set().union(*defined.values())
    offenders = []
    for path, tree in trees.items():
        package = _package(path)
        foreign = {alias.asname or alias.name.split(".")[0] for node in ast.walk(tree)
                   if isinstance(node, ast.Import) for alias in node.names
                   if _layer_of(alias.name) is None}  # os._exit is os's to name
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                base = _source(node, package)
                if _layer_of(base) is None:
                    continue  # another project's names are its business
                for alias in node.names:
                    module = f"{base}.{alias.name}"
                    is_module = module in modules
                    if _private(alias.name) and not is_module:
                        offenders.append(f"{path.relative_to(ROOT)}:{node.lineno} imports "
                                         f"{alias.name} from {base}")
            elif isinstance(node, ast.Attribute) and _private(node.attr):
                if isinstance(node.value, ast.Name) and node.value.id in ("self", "cls", *foreign):
                    continue
                if node.attr in ours and node.attr not in defined[path]:
                    offenders.append(f"{path.relative_to(ROOT)}:{node.lineno} reaches for "
                                     f"{ast.unparse(node)}")
    assert not offenders, offenders

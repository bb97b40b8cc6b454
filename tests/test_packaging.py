"""The installed names: only ``graphdb`` lands in site-packages, whatever the user's project holds.

A user's project with its own ``catalog.py``, ``storage/`` package and ``executor.py`` (names a
project may well have) must still ``import graphdb``: the layers are installed as
``graphdb.storage``, ``graphdb.catalog`` and ``graphdb.executor``.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tests.support import ROOT

#: what the user's project holds, each shadowing a name the layers once had at top level
USER_PROJECT = {
    "catalog.py": "raise ImportError('the user catalog.py was imported instead of graphdb.catalog')\n",
    "storage/__init__.py": "raise ImportError('the user storage/ was imported')\n",
    "executor.py": "raise ImportError('the user executor.py was imported')\n",
}

QUERY = ("import graphdb, sys; "
         "con = graphdb.connect(); "
         "print(con.execute('SELECT count(*) FROM (VALUES (1), (2)) t').fetchone()[0]); "
         "con.close(); "
         "print(sorted(m.split('.')[0] for m in sys.modules "
         "if m.split('.')[0] in ('storage', 'catalog', 'executor')))")


def _user_project(tmp_path: Path) -> Path:
    project = tmp_path / "project"
    for name, text in USER_PROJECT.items():
        (project / name).parent.mkdir(parents=True, exist_ok=True)
        (project / name).write_text(text)
    return project


def test_every_package_folder_is_listed_for_the_build():
    tomllib = pytest.importorskip("tomllib")
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    on_disk = set()
    for dotted, folder in config["package-dir"].items():
        for init in (ROOT / folder).rglob("__init__.py"):
            on_disk.add(".".join((dotted, *init.parent.relative_to(ROOT / folder).parts)))
    assert set(config["packages"]) == on_disk


@pytest.fixture(scope="module")
def installed_wheel(tmp_path_factory) -> tuple[Path, list[str]]:
    """The package built as a wheel and installed into a folder of its own: (folder, the wheel's
    file names)."""
    tmp = tmp_path_factory.mktemp("wheel")
    source = tmp / "source"  # a copy: the build writes build/ and *.egg-info beside the sources
    shutil.copytree(ROOT, source, ignore=shutil.ignore_patterns(
        ".git", "__pycache__", "build", "*.egg-info", ".whl", ".gpuwork", ".hypothesis",
        "*_cache", ".venv", "node_modules"))
    built = subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w",
                            str(tmp / "wheels"), str(source)], timeout=600, capture_output=True,
                           text=True)
    if built.returncode != 0 and "No matching distribution" in built.stderr:
        pytest.skip("building a wheel needs setuptools from the package index")
    assert built.returncode == 0, built.stderr
    wheel = next((tmp / "wheels").glob("graphdb-*.whl"))
    site = tmp / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-compile",
                    "--target", str(site), str(wheel)], check=True, timeout=300,
                   capture_output=True)
    return site, zipfile.ZipFile(wheel).namelist()


def test_a_built_wheel_holds_only_graphdb_and_imports_beside_a_users_project(
        installed_wheel, tmp_path):
    site, names = installed_wheel
    tops = {n.split("/")[0] for n in names if not n.split("/")[0].endswith(".dist-info")}
    assert tops == {"graphdb"}
    assert "graphdb/executor/operators/frontier.cu" in names
    assert "graphdb/executor/gpu/include/graphdb/common.cuh" in names
    # the explorer's page and the JavaScript it ships (nothing loads from the network)
    for static in ("index.html", "explorer.js", "explorer.css", "vendor/cytoscape.min.js",
                   "vendor/codemirror.min.js", "vendor/THIRD_PARTY_LICENSES.txt"):
        assert f"graphdb/explorer/static/{static}" in names
    project = _user_project(tmp_path)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(project), str(site)])}
    done = subprocess.run([sys.executable, "-c", QUERY], cwd=project, env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["2", "[]"]


def test_import_linter_contracts_hold_on_the_installed_tree(installed_wheel, tmp_path):
    """import-linter (grimp) reads a package from its folder on disk, so it checks the layout
    as installed, where ``graphdb/storage`` and the others are real subfolders."""
    lint = Path(sys.executable).with_name("lint-imports")
    if not lint.exists():
        pytest.skip("import-linter is not installed (the dev extra has it)")
    site, _ = installed_wheel
    env = {**os.environ, "PYTHONPATH": str(site)}
    done = subprocess.run([str(lint), "--config", str(ROOT / "pyproject.toml")], cwd=tmp_path,
                          env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_installed_package_imports_beside_a_users_project(tmp_path):
    """The environment's own install (editable under the README's test command)."""
    probe = subprocess.run([sys.executable, "-c", "import graphdb; print(graphdb.__file__)"],
                           cwd=tmp_path, capture_output=True, text=True, timeout=60)
    if probe.returncode != 0:
        pytest.skip("graphdb is not installed in this environment (a bare checkout)")
    project = _user_project(tmp_path)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    done = subprocess.run([sys.executable, "-c", QUERY], cwd=project, env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["2", "[]"]


def test_import_graphdb_from_the_clones_parent_directory(tmp_path):
    """A clone is a folder named ``graphdb`` beside where one works: run from its parent, an
    editable install must still import the package, not that folder as a namespace package
    (tools/build_backend.py). The clone here is a link named graphdb to this checkout."""
    probe = subprocess.run([sys.executable, "-c", "import graphdb; print(graphdb.__file__)"],
                           cwd=tmp_path, capture_output=True, text=True, timeout=60)
    if probe.returncode != 0:
        pytest.skip("graphdb is not installed in this environment (a bare checkout)")
    (tmp_path / "graphdb").symlink_to(ROOT, target_is_directory=True)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    done = subprocess.run([sys.executable, "-c", QUERY], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["2", "[]"]

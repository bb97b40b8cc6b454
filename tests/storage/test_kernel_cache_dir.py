"""Where compiled CPU kernels are cached: graphdb's cache directory, never beside the sources
(an installed package's site-packages), and a user's own numba functions keep numba's places."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from graphdb.storage import compiled

ROOT = Path(__file__).resolve().parents[2]

# A module with one kernel compiled through graphdb's loader and one the user's own way.
MODULE = '''
def ours(x):
    return x + 1

def theirs(x):
    return x * 2
'''

SCRIPT = '''
import sys
sys.path[:0] = [{root!r}, {here!r}]
import graphdb  # noqa: F401  (maps graphdb.storage to the checkout)
import numba
from graphdb.storage.compiled import _njit as njit
import kernels_under_test as k
print(njit(k.ours)(1), numba.njit(cache=True)(k.theirs)(2))
'''


def _run(tmp_path: Path, env: dict) -> str:
    script = SCRIPT.format(root=str(ROOT), here=str(tmp_path / "src"))
    return subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                          text=True, check=True).stdout.strip()


def test_kernels_cache_in_graphdbs_folder_and_users_stay_put(tmp_path):
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "kernels_under_test.py").write_text(MODULE)
    env = {k: v for k, v in os.environ.items() if not k.startswith("NUMBA_")}
    env["GRAPHDB_CACHE_DIR"] = str(tmp_path / "cache")
    assert _run(tmp_path, env) == "2 4"
    ours = sorted(p.name for p in (tmp_path / "cache").rglob("*.nb*"))
    theirs = sorted(p.name for p in (tmp_path / "src").rglob("*.nb*"))
    assert ours and all(n.startswith("kernels_under_test.ours-") for n in ours)
    assert theirs and all(n.startswith("kernels_under_test.theirs-") for n in theirs)
    # numba's own NUMBA_CACHE_DIR moves the user's functions, not graphdb's
    env["NUMBA_CACHE_DIR"] = str(tmp_path / "numba")
    assert _run(tmp_path, env) == "2 4"
    moved = sorted(p.name for p in (tmp_path / "numba").rglob("*.nb*"))
    assert moved and all(n.startswith("kernels_under_test.theirs-") for n in moved)


def test_cache_dir_follows_xdg_and_the_override(monkeypatch, tmp_path):
    monkeypatch.delenv("GRAPHDB_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert compiled.cache_dir() == tmp_path / "graphdb"
    monkeypatch.setenv("GRAPHDB_CACHE_DIR", str(tmp_path / "mine"))
    assert compiled.cache_dir() == tmp_path / "mine"


def test_an_unwritable_cache_compiles_in_memory(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "kernels_under_test.py").write_text(MODULE)
    env = dict(os.environ, GRAPHDB_CACHE_DIR=str(blocker / "cache"))
    assert _run(tmp_path, env) == "2 4"
    assert not [p for p in (tmp_path / "src").rglob("*.nb*") if "ours" in p.name]


def test_no_kernel_module_compiles_numba_its_own_way():
    """Every compiled CPU kernel goes through compiled._njit (the one loader)."""
    offenders = []
    for folder in ("storage", "catalog", "executor", "graphdb"):
        for path in (ROOT / folder).rglob("*.py"):
            text = path.read_text()
            if path == ROOT / "storage" / "compiled.py":
                continue
            if "numba.njit(" in text or "@njit" in text or "numba.jit(" in text:
                offenders.append(str(path.relative_to(ROOT)))
    assert offenders == []

"""The README's quick start, run as written: a fresh virtual environment, then its two commands in
one environment, in both orders; the commands are read from the README, so it cannot drift.

Checked after each order: both commands succeed (the demo runs, the inner test run passes), the
``graphdb`` command still works, no compiled-kernel cache file lies inside the environment (they
go to the cache directory, here a temporary one), and ``pip uninstall graphdb`` leaves no
``graphdb`` file or folder behind in site-packages. Slow (two installs and two test runs each
way): ``python -m pytest -m slow tests/test_install.py``.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support import ROOT


def quick_start() -> tuple[str, str, str]:
    """(make the environment, install and demo, install dev and test) from the README."""
    text = (ROOT / "README.md").read_text()
    section = text[text.index("## Quick start"):]
    section = section[:section.index("\n## ", 1)]
    commands = [line.strip() for block in re.findall(r"```sh\n(.*?)```", section, re.S)
                for line in block.splitlines() if line.strip()]
    venv = [c for c in commands if "venv" in c]
    demo = [c for c in commands if "graphdb demo" in c]
    tests = [c for c in commands if "pytest" in c]
    assert len(commands) == 3 and len(venv) == len(demo) == len(tests) == 1, commands
    return venv[0], demo[0], tests[0]


def test_the_quick_start_is_two_commands_after_the_environment():
    venv, demo, tests = quick_start()
    assert venv.startswith("python3 -m venv") and "activate" in venv
    assert demo.startswith("pip install .") and tests.startswith("pip install -e '.[dev]'")


def _checkout_copy(dest: Path) -> Path:
    """The files git knows (tracked, and new ones not ignored): a fresh clone's content."""
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                            cwd=ROOT, capture_output=True, check=True).stdout.split(b"\0")
    for name in filter(None, listed):
        source = ROOT / os.fsdecode(name)
        if source.is_file():
            target = dest / os.fsdecode(name)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)
    return dest


def _sh(command: str, cwd: Path, env: dict, activate: bool = True) -> subprocess.CompletedProcess:
    script = (". .venv/bin/activate && " if activate else "") + command
    return subprocess.run(["bash", "-c", script], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=1500)


def _site_packages(checkout: Path) -> Path:
    return next((checkout / ".venv" / "lib").glob("python*/site-packages"))


@pytest.mark.slow
@pytest.mark.timeout(3600)
@pytest.mark.parametrize("order", ["demo first", "tests first"])
def test_readme_commands_in_one_fresh_environment(tmp_path, order):
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("needs the git checkout")
    make_venv, demo, tests = quick_start()
    checkout = _checkout_copy(tmp_path / "graphdb")
    cache = tmp_path / "cache"
    env = {k: v for k, v in os.environ.items()
           if k not in ("VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME")
           and not k.startswith(("PYTEST", "NUMBA_", "GRAPHDB_"))}
    env.update(GRAPHDB_CACHE_DIR=str(cache), PIP_DISABLE_PIP_VERSION_CHECK="1")
    # python3 as the test runner has it (a virtual environment's python3 makes a fresh one too)
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    made = _sh(make_venv, checkout, env, activate=False)
    assert made.returncode == 0, made.stderr
    for command in ([demo, tests] if order == "demo first" else [tests, demo]):
        done = _sh(command, checkout, env)
        assert done.returncode == 0, f"{command}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
        if "pytest" in command:
            assert re.search(r"\d+ passed", done.stdout) and " failed" not in done.stdout
        else:
            assert "Open the shell on this database" in done.stdout
    version = _sh("graphdb --version", checkout, env)
    assert version.returncode == 0 and version.stdout.startswith("graphdb "), version.stderr
    site = _site_packages(checkout)
    assert not [p for p in site.rglob("*.nb[ic]")], "numba cache files inside the environment"
    assert list(cache.rglob("*.nbi")), "the kernels were not cached in GRAPHDB_CACHE_DIR"
    removed = _sh("pip uninstall -y graphdb", checkout, env)
    assert removed.returncode == 0, removed.stderr
    left = [p.name for p in site.iterdir() if "graphdb" in p.name.lower()]
    assert left == [], f"left in site-packages after uninstall: {left}"

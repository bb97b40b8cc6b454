"""Where the MPI runtime is: ``mpiexec`` and the environment its ranks need to load ``libmpi``.

The ``cluster`` extra installs mpich's wheel, which carries ``mpiexec`` and ``libmpi.so.12`` as
data files: with ``pip install`` into a virtual environment they land beside the Python
executable and in the environment's ``lib``, where mpi4py finds the library; with ``pip install
--target DIR`` (the GPU machines, whose Python is not ours) they land in ``DIR/bin`` and
``DIR/lib``, where nothing looks. Looked for, in this order:

1. ``$GRAPHDB_MPI_HOME/bin/mpiexec`` (an MPI installed anywhere: mpich's wheel unpacked with
   ``python -m zipfile -e mpich-*.whl DIR`` has it at ``DIR/mpich-*.data/data``, which is also
   found when ``GRAPHDB_MPI_HOME`` names ``DIR``);
2. beside the Python executable (a virtual environment's ``pip install mpich``);
3. ``bin/mpiexec`` under a folder on ``sys.path`` whose ``lib`` holds ``libmpi`` (``pip
   install --target DIR`` keeps ``DIR/bin`` but drops the wheel's ``lib``: unpack the wheel
   instead, ``python tools/mpi_runtime.py --unpack mpich-*.whl DIR``, and set
   ``GRAPHDB_MPI_HOME=DIR``);
4. ``mpiexec`` on ``PATH``.

The environment puts that ``bin`` first on ``PATH``, its ``lib`` (when it holds ``libmpi``)
first on ``LD_LIBRARY_PATH``, and tells mpi4py the library's ABI (``MPI4PY_MPIABI=mpich`` for
mpich's ``libmpi.so.12``) unless one is set: the ranks then load the library of the very
runtime that started them (a system Open MPI beside the wheel makes every rank a job of one).
Used by ``tools/check_multi_gpu.py``, ``tools/bench_multi_gpu.py --mpi`` and ``tests/cluster``.
"""

from __future__ import annotations

import argparse
import os
import shutil
import stat
import sys
import zipfile
from pathlib import Path

__all__ = ["mpi_environment", "mpiexec", "unpack_wheel"]


def _home_bins() -> list[Path]:
    home = os.environ.get("GRAPHDB_MPI_HOME")
    if not home:
        return []
    root = Path(home)
    return [root / "bin", *sorted(root.glob("mpich-*.data/data/bin"))]


def _has_lib(bin_dir: Path) -> bool:
    return any((bin_dir.parent / "lib").glob("libmpi.so*"))


def _candidates() -> list[Path]:
    found = [b / "mpiexec" for b in _home_bins()]
    beside = Path(sys.executable).parent
    found.append(beside / "mpiexec")
    for entry in sys.path:
        if entry and _has_lib(Path(entry) / "bin"):
            found.append(Path(entry) / "bin" / "mpiexec")
    on_path = shutil.which("mpiexec")
    if on_path:
        found.append(Path(on_path))
    return found


def mpiexec() -> str | None:
    """The ``mpiexec`` to start jobs with (see the module docstring), or None."""
    for path in _candidates():
        if path.is_file() and os.access(path, os.X_OK):
            return str(path)
    return None


def mpi_environment(base: dict | None = None) -> dict:
    """``base`` (default: this process's environment) with the runtime's ``bin`` and ``lib``
    first on ``PATH`` and ``LD_LIBRARY_PATH`` and mpi4py told its ABI."""
    env = dict(os.environ if base is None else base)
    found = mpiexec()
    if found is None:
        return env
    bin_dir = Path(found).resolve().parent
    env["PATH"] = os.pathsep.join(p for p in (str(bin_dir), env.get("PATH", "")) if p)
    lib = bin_dir.parent / "lib"
    libs = sorted(lib.glob("libmpi.so*")) if lib.is_dir() else []
    if libs:
        env["LD_LIBRARY_PATH"] = os.pathsep.join(
            p for p in (str(lib), env.get("LD_LIBRARY_PATH", "")) if p)
        if "MPI4PY_MPIABI" not in env and "MPI4PY_LIBMPI" not in env \
                and any(p.name == "libmpi.so.12" for p in libs):
            env["MPI4PY_MPIABI"] = "mpich"
    return env


def unpack_wheel(wheel: str | Path, dest: str | Path) -> Path:
    """Unpack mpich's wheel into ``dest`` with its programs executable (zipfile drops the
    modes); the folder to give as ``GRAPHDB_MPI_HOME``."""
    dest = Path(dest)
    with zipfile.ZipFile(wheel) as archive:
        archive.extractall(dest)
        for info in archive.infolist():
            mode = info.external_attr >> 16
            target = dest / info.filename
            if "/bin/" in info.filename and target.is_file():
                mode |= stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH | stat.S_IRUSR
            if mode:
                target.chmod(stat.S_IMODE(mode))
    homes = sorted(dest.glob("mpich-*.data/data"))
    return homes[0] if homes else dest


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--unpack", nargs=2, metavar=("WHEEL", "DIR"),
                        help="unpack mpich's wheel into DIR and print GRAPHDB_MPI_HOME")
    args = parser.parse_args()
    if args.unpack:
        print(unpack_wheel(*args.unpack))
        return 0
    found = mpiexec()
    print(found or "no mpiexec found")
    return 0 if found else 1


if __name__ == "__main__":
    sys.exit(main())

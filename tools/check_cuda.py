"""Compile-check every CUDA kernel module with nvcc, without a GPU.

Each :class:`~graphdb.executor.gpu.runtime.CudaModule` of the executor is written out as the
runtime hands it to NVRTC (ABI constants prepended, headers inlined) plus an explicit
instantiation of each of its name expressions, and compiled for sm_90 with ``nvcc -c``: a
syntax or template error shows here, before any device time is spent.

Usage::

    python tools/check_cuda.py [--arch sm_90]
"""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import graphdb.executor as executor  # noqa: E402
from graphdb.executor.gpu.runtime import CudaModule  # noqa: E402


def modules() -> list[CudaModule]:
    """Every CudaModule declared at module level in the executor and in the variants waiting
    for a measurement (tools/gpu_variants); importing needs no CuPy."""
    import tools.gpu_variants as variants

    found: dict[Path, CudaModule] = {}
    packages = [(executor.__path__, executor.__name__ + "."),
                (variants.__path__, variants.__name__ + ".")]
    for info in (i for path, prefix in packages for i in pkgutil.walk_packages(path, prefix)):
        try:
            module = importlib.import_module(info.name)
        except ImportError:
            continue
        for value in vars(module).values():
            if isinstance(value, CudaModule):
                found[value.path] = value
    return list(found.values())


def instantiation(k: int, expression: str) -> str:
    """A use of a name expression ``kernel<args>`` that instantiates it (nvcc checks a template
    only once it is instantiated): its address taken at namespace scope."""
    return f"static void* graphdb_check_{k} = (void*)&{expression};\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--arch", default="sm_90")
    args = parser.parse_args()
    failed = 0
    with tempfile.TemporaryDirectory() as tmp:
        for module in modules():
            source = module.source() + "".join(instantiation(k, e)
                                               for k, e in enumerate(module.expressions))
            path = Path(tmp) / module.path.name
            path.write_text(source)
            done = subprocess.run(["nvcc", f"-arch={args.arch}", "-std=c++17", "-c", str(path),
                                   "-o", str(path.with_suffix(".o"))],
                                  capture_output=True, text=True)
            status = "ok" if done.returncode == 0 else "FAILED"
            shown = module.path.relative_to(Path(executor.__file__).parent.parent) \
                if module.path.is_relative_to(Path(executor.__file__).parent.parent) \
                else module.path
            print(f"{status:6} {shown} ({len(module.expressions)} instantiations)")
            if done.returncode:
                failed += 1
                print(done.stderr[-4000:])
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

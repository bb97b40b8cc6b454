"""GPU kernel variants waiting for a measurement on the device before any becomes a default
(the project's rule: a GPU default changes only on a measurement in the repository).

Each module declares its :class:`~graphdb.executor.gpu.runtime.CudaModule` (compile-checked by
``tools/check_cuda.py`` with the executor's), a launcher that plugs it into the product's
operator, a GPU test against the CPU twin (``tests/gpu/test_gpu_variants.py``), and a row of
``tools/bench_gpu.py`` timing it beside the default in the same run.
"""

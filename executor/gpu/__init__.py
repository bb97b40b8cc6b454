"""The GPU device layer: CuPy (imported lazily: nothing here may run at CPU-only import time),
the kernel modules (:class:`.runtime.CudaModule`) and their on-disk cache (:mod:`.compiled`),
memory budgets and streams, page-locked host memory (:mod:`.pinned`). The GPU implementations
themselves live with their algorithm families and the shared operators."""

"""A cluster job that runs a query until it is stopped (tests/cluster/test_mpi.py kills or
freezes one of its ranks mid-query): ``mpiexec -n 2 python -m tests.cluster.long_query DB DIR
TIMEOUT``. Each rank writes its pid to DIR/rank<r>.pid once the query is about to start."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import graphdb

db, folder, timeout = sys.argv[1], Path(sys.argv[2]), float(sys.argv[3])
with graphdb.connect(db, cluster="mpi", cluster_timeout=timeout) as con:
    con.execute("SET debug_variant = 'partitioned'")
    (folder / f"rank{con.rank}.pid").write_text(str(os.getpid()))
    con.execute("SELECT count(*) FROM pagerank(g, max_iterations => 1000000)")

"""VertexIds.internal_many: the few-ids dict and Arrow's index_in agree with a plain dict of
the ids, for present, missing and NULL ids, of strings and integers."""

from __future__ import annotations

import random

import numpy as np
import pyarrow as pa
import pytest

from graphdb.executor import ids as ids_module
from graphdb.executor.ids import VertexIds


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("count", [0, 1, 5, ids_module._FEW, ids_module._FEW + 1, 300])
def test_internal_many_matches_a_dict(seed, count):
    rng = random.Random(seed)
    strings = sorted({f"Label:{rng.randrange(10_000)}" for _ in range(500)})
    numbers = sorted({rng.randrange(-50, 10_000) for _ in range(500)})
    for values, kind, typed in ((strings, "string", pa.string()), (numbers, "int64", pa.int64())):
        ids = VertexIds(pa.array(values, typed), "g", kind)
        position = {v: i for i, v in enumerate(values)}
        missing = "nope" if kind == "string" else 10_001
        asked = [rng.choice(values + [missing, None]) for _ in range(count)]
        got = ids.internal_many(pa.array(asked, typed))
        assert got.tolist() == [position.get(v, -1) for v in asked]
        assert got.dtype == np.int64


@pytest.mark.parametrize("kind", ["int64", "string"])
def test_internal_of_a_few_values_equals_internal_many(kind):
    """The Python-side lookup of a pattern's few start ids gives what the Arrow one gives."""
    import pyarrow as pa

    from graphdb.executor.ids import VertexIds

    if kind == "int64":
        ids = VertexIds(pa.array([3, 5, 8, 13, 2**40], pa.int64()), "g", "int64")
        probes = [5, 13, 4, 2**40, 5.0, 5.5, True, None, "5", -1, 2**70]
    else:
        ids = VertexIds(pa.array(["a", "b", "c", "1"]), "g", "string")
        probes = ["a", "c", "zz", "1", 1, None]
    for value in probes:
        try:
            want = ids.internal_many(pa.array([value])).tolist()
        except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError):
            want = [-1]
        assert ids.internal_of((value,)).tolist() == want, value

"""CSR blocks: whole and ranged reads against numpy slicing, memmapped input, damaged blocks."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from graphdb.storage import CorruptData, Environment
from graphdb.storage.blocks import array_info, block_key, get_array, get_range, put_array


@pytest.fixture
def env(tmp_path):
    e = Environment(tmp_path / "db", page_size=4096)
    yield e
    e.close()


@settings(max_examples=25, deadline=None)
@given(length=st.integers(0, 3000), block=st.sampled_from([8, 64, 1000, 4096]),
       dtype=st.sampled_from(["<i4", "<i8", "<f8", "u1"]), a=st.integers(-10, 3100),
       b=st.integers(-10, 3100))
def test_ranges_equal_numpy_slices(tmp_path_factory, length, block, dtype, a, b):
    env = Environment(tmp_path_factory.mktemp("blocks") / "db")
    values = (np.arange(length) * 7 % 251).astype(dtype)
    env.write(lambda txn: put_array(txn, env.db("blocks"), "g", "x", values, block))
    with env.read_txn() as txn:
        np.testing.assert_array_equal(get_array(txn, env.db("blocks"), "g", "x"), values)
        lo, hi = max(0, a), min(b, length)
        np.testing.assert_array_equal(get_range(txn, env.db("blocks"), "g", "x", a, b),
                                      values[lo:max(lo, hi)])
    env.close()


def test_memmapped_input_is_stored_block_by_block(env, tmp_path):
    mm = np.memmap(tmp_path / "t.bin", dtype=np.int32, mode="w+", shape=(10_000,))
    mm[:] = np.arange(10_000, dtype=np.int32)[::-1]
    mm.flush()
    ro = np.memmap(tmp_path / "t.bin", dtype=np.int32, mode="r", shape=(10_000,))
    env.write(lambda txn: put_array(txn, env.db("blocks"), "g", "t", ro, 4096))
    with env.read_txn() as txn:
        info = array_info(txn, env.db("blocks"), "g", "t")
        assert info.num_blocks == 10 and info.per_block == 1024
        np.testing.assert_array_equal(get_array(txn, env.db("blocks"), "g", "t"), mm)


def test_a_damaged_block_raises_corrupt_data(env):
    values = np.arange(5000, dtype=np.int64)
    env.write(lambda txn: put_array(txn, env.db("blocks"), "g", "x", values, 4096))
    key = block_key("g", "x", 3)

    def flip(txn):
        raw = bytearray(txn.get(key, db=env.db("blocks")))
        raw[100] ^= 1
        txn.put(key, bytes(raw), db=env.db("blocks"))

    env.write(flip)
    with env.read_txn() as txn:
        np.testing.assert_array_equal(get_range(txn, env.db("blocks"), "g", "x", 0, 1536),
                                      values[:1536])  # blocks 0-2 are intact
        with pytest.raises(CorruptData, match="block 3"):
            get_array(txn, env.db("blocks"), "g", "x")

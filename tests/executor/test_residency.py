"""The residency owner counts a running operator's own buffers beside its cached entries."""

import numpy as np

from graphdb.executor.residency import Residency


def _entry(nbytes: int):
    return np.zeros(nbytes, dtype=np.uint8)


def test_a_reservation_evicts_now_and_makes_later_entries_make_room_around_it():
    owner = Residency()
    owner.set_budget("gpu:0", 1000)
    owner.get("g", "gpu:0", "a", lambda: _entry(400))
    owner.get("g", "gpu:0", "b", lambda: _entry(400))
    assert owner.held_bytes("gpu:0") == 800
    with owner.reserve(["gpu:0"], 500):
        # 800 held + 500 reserved > 1000: the least recently used entry went
        assert owner.peek("g", "gpu:0", "a") is None
        assert owner.held_bytes("gpu:0") == 400
        assert owner.working_bytes("gpu:0") == 500
        # an entry built while the operator runs (a shard) makes room around its buffers
        owner.get("g", "gpu:0", "c", lambda: _entry(300))
        assert owner.peek("g", "gpu:0", "b") is None
        assert owner.held_bytes("gpu:0") + owner.working_bytes("gpu:0") <= 1000
    assert owner.working_bytes("gpu:0") == 0
    owner.get("g", "gpu:0", "d", lambda: _entry(600))  # the buffers are gone: it fits beside c
    assert owner.peek("g", "gpu:0", "c") is not None


def test_a_reservation_is_released_when_the_operator_fails_and_counts_every_rank_device():
    owner = Residency()
    for d in ("gpu:0", "gpu:1"):
        owner.set_budget(d, 100)
    try:
        with owner.reserve(["gpu:0", "gpu:1"], 60):
            assert owner.working_bytes("gpu:0") == owner.working_bytes("gpu:1") == 60
            raise RuntimeError("the operator failed")
    except RuntimeError:
        pass
    assert owner.working_bytes("gpu:0") == owner.working_bytes("gpu:1") == 0


def test_no_budget_means_no_eviction():
    owner = Residency()
    owner.get("g", "cpu", "a", lambda: _entry(10))
    with owner.reserve(["cpu"], 1 << 40):
        assert owner.peek("g", "cpu", "a") is not None

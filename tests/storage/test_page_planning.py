"""plan_pages in chunks of vertices against the whole-array packing it replaced."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from graphdb.storage import pages
from graphdb.storage.pages import HEADER_BYTES, LARGE, SLOT_BYTES, SMALL, PageLayout, plan_pages


def reference_plan(offsets, layout, weighted):
    """The packing over one running sum of every vertex's bytes (the former implementation)."""
    n = len(offsets) - 1
    cum = np.cumsum(layout.record_bytes(np.diff(offsets), weighted) + SLOT_BYTES)
    capacity = layout.page_size - HEADER_BYTES
    max_slots = min(1 << (8 * layout.slot_bytes), capacity // (4 + SLOT_BYTES))
    per_large = layout.edges_per_large_page(weighted)
    firsts, kinds, lasts = [], [], []
    v = 0
    while v < n:
        base = int(cum[v - 1]) if v else 0
        if int(cum[v]) - base > capacity:
            chain = -(-int(offsets[v + 1] - offsets[v]) // per_large)
            firsts += [v] * chain
            kinds += [LARGE] * chain
            lasts += [v + 1] * chain
            v += 1
            continue
        end = min(int(np.searchsorted(cum, base + capacity, side="right")), v + max_slots)
        firsts.append(v)
        kinds.append(SMALL)
        lasts.append(end)
        v = end
    return firsts, kinds, lasts


@settings(max_examples=150, deadline=None)
@given(degrees=st.lists(st.one_of(st.integers(0, 6), st.integers(0, 400)), max_size=300),
       chunk=st.integers(1, 40), weighted=st.booleans(), slot_bytes=st.sampled_from([1, 3]),
       page_size=st.sampled_from([512, 4096]))
def test_chunked_planning_packs_like_the_whole_array(degrees, chunk, weighted, slot_bytes,
                                                     page_size):
    layout = PageLayout(page_size=page_size, slot_bytes=slot_bytes)
    offsets = np.concatenate([[0], np.cumsum(degrees, dtype=np.int64)])
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(pages, "PLAN_CHUNK", chunk)
        plan = plan_pages(offsets, layout, weighted)
    firsts, kinds, lasts = reference_plan(offsets, layout, weighted)
    assert plan.page_first_vertex.tolist() == firsts
    assert plan.page_kind.tolist() == kinds
    assert plan.page_last_vertex.tolist() == lasts
    assert len(plan.vertex_pid) == len(degrees)


def test_slot_limit_at_a_chunk_boundary():
    """A page full by its slot count exactly where a chunk ends is closed, not carried on."""
    layout = PageLayout(page_size=1 << 16, slot_bytes=1)  # at most 256 slots, bytes to spare
    # 300 vertices without edges (the slot count binds), then 400 of degree 100 (bytes bind)
    offsets = np.concatenate([np.zeros(300, np.int64), np.arange(1, 401) * 100])
    for chunk in (256, 255, 100, 1 << 20):
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(pages, "PLAN_CHUNK", chunk)
            plan = plan_pages(offsets, layout, False)
        assert plan.page_first_vertex.tolist() == reference_plan(offsets, layout, False)[0]

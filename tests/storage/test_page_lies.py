"""Slotted pages whose fields lie and are sealed again: every lie is refused or harmless.

A page's checksum catches damage; a page changed by someone who knows the format (or a bug)
and sealed again passes it. Hypothesis writes a value (edges of the field's range, and random
ones) into one field of one page: a header field, a slot's vertex id or record offset, a
record's count, a record id's bytes. Decoding it against the graph's page table must then raise
CorruptData, or give exactly what the true page gives, or (a lie in a record id or a weight,
which is data) give record ids that name real vertices of real pages. Never a raw IndexError or
ValueError, never a vertex outside the graph: the BFS over pages of a lying database answers
correctly or says it is corrupt.
"""

from __future__ import annotations

import struct

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from graphdb.storage.checksum import checksum
from graphdb.storage.errors import CorruptData
from graphdb.storage.pages import (
    HEADER,
    HEADER_BYTES,
    SLOT_BYTES,
    PageContext,
    PageLayout,
    decode_page,
    iter_pages,
    plan_pages,
    verify_page,
)

from .test_storage_pages import random_csr

# (name, byte offset, struct format) of every header field after the checksum
HEADER_FIELDS = [
    ("magic", 0, "4s"), ("version", 4, "<H"), ("kind", 6, "B"), ("flags", 7, "B"),
    ("page_size", 12, "<I"), ("page_id", 16, "<Q"), ("first_vertex", 24, "<Q"),
    ("num_slots", 32, "<I"), ("records_end", 36, "<I"), ("num_edges", 40, "<I"),
    ("pid_bytes", 44, "B"), ("slot_bytes", 45, "B"), ("weight_bytes", 46, "B"),
    ("checksum_alg", 47, "B"), ("chain_index", 48, "<I"), ("chain_length", 52, "<I"),
    ("edge_start", 56, "<Q"),
]
assert HEADER.size == HEADER_BYTES


def _graphs():
    out = {}
    for weighted in (False, True):
        offsets, targets, weights = random_csr(300, 2500, seed=3, hub_degree=400)
        layout = PageLayout(1024, 2, 2)
        plan = plan_pages(offsets, layout, weighted)
        pages = [bytes(p) for _pid, p in iter_pages(offsets, targets,
                                                     weights if weighted else None, plan)]
        context = PageContext(layout, len(offsets) - 1, plan.page_first_vertex)
        out[weighted] = (pages, context)
    return out


GRAPHS = _graphs()


def _reseal(page: bytearray) -> bytes:
    algorithm = page[47]
    try:
        struct.pack_into("<I", page, 8, checksum(bytes(page[12:]), algorithm))
    except Exception:  # an algorithm the lie made unknown: the page stays unsealed
        pass
    return bytes(page)


def _values(fmt: str):
    if fmt == "4s":
        return st.binary(min_size=4, max_size=4)
    bits = struct.calcsize(fmt) * 8
    top = (1 << bits) - 1
    return st.one_of(st.sampled_from([0, 1, 2, 3, 7, 8, 64, 255, top, top - 1, top // 2 + 1]),
                     st.integers(0, top))


def _same(a, b) -> bool:
    if (a.weights is None) != (b.weights is None):
        return False
    return (np.array_equal(a.vertices, b.vertices) and np.array_equal(a.degrees, b.degrees)
            and np.array_equal(a.targets, b.targets)
            and (a.weights is None or np.array_equal(a.weights, b.weights)))


def _check(lying: bytes, truth: bytes, context: PageContext, data_field: bool) -> str:
    """'refused', 'same' or 'data'; anything else fails the test."""
    try:
        verify_page(lying, None, context.layout)
        decoded = decode_page(lying, context)
    except CorruptData:
        return "refused"
    expected = decode_page(truth, context)
    if _same(decoded, expected):
        return "same"
    assert data_field, "a lie in a structural field was decoded as different data"
    # a record id or weight changed to another valid value: data, but never outside the graph
    assert decoded.targets.min(initial=0) >= 0
    assert decoded.targets.max(initial=0) < context.num_vertices
    assert np.array_equal(decoded.vertices, expected.vertices)
    assert np.array_equal(decoded.degrees, expected.degrees)
    return "data"


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(weighted=st.booleans(), which=st.integers(0, 10_000), field=st.sampled_from(HEADER_FIELDS),
       data=st.data())
def test_a_lying_header_field_is_refused_or_changes_nothing(weighted, which, field, data):
    pages, context = GRAPHS[weighted]
    truth = pages[which % len(pages)]
    name, offset, fmt = field
    value = data.draw(_values(fmt), label=name)
    page = bytearray(truth)
    struct.pack_into(fmt, page, offset, value)
    _check(_reseal(page), truth, context, data_field=False)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(weighted=st.booleans(), which=st.integers(0, 10_000), slot=st.integers(0, 10_000),
       part=st.sampled_from(["vid", "off", "count"]), data=st.data())
def test_a_lying_slot_or_record_count_is_refused_or_changes_nothing(weighted, which, slot, part,
                                                                     data):
    pages, context = GRAPHS[weighted]
    truth = pages[which % len(pages)]
    header = verify_page(truth)
    i = slot % header.num_slots
    at = len(truth) - SLOT_BYTES * (i + 1)
    page = bytearray(truth)
    if part == "vid":
        struct.pack_into("<Q", page, at, data.draw(_values("<Q")))
    elif part == "off":
        struct.pack_into("<I", page, at + 8, data.draw(_values("<I")))
    else:
        record = struct.unpack_from("<I", truth, at + 8)[0]
        struct.pack_into("<I", page, record, data.draw(_values("<I")))
    _check(_reseal(page), truth, context, data_field=False)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(weighted=st.booleans(), which=st.integers(0, 10_000), at=st.integers(0, 1 << 20),
       value=st.integers(0, 255))
def test_a_lying_record_byte_names_real_vertices_or_is_refused(weighted, which, at, value):
    pages, context = GRAPHS[weighted]
    truth = pages[which % len(pages)]
    header = verify_page(truth)
    if header.records_end <= HEADER_BYTES + 4:
        return
    position = HEADER_BYTES + at % (header.records_end - HEADER_BYTES)
    page = bytearray(truth)
    page[position] = value
    _check(_reseal(page), truth, context, data_field=True)


@pytest.mark.parametrize("weighted", [False, True])
def test_the_lies_the_audit_found_are_refused(weighted):
    """An out-of-range slot vertex id (it wrapped to a negative index) and pid_bytes = 0 gave
    wrong BFS answers on the page-streamed path."""
    pages, context = GRAPHS[weighted]
    for truth in pages:
        for offset, fmt, value in [(24, "<Q", (1 << 64) - 1), (44, "B", 0)]:
            page = bytearray(truth)
            struct.pack_into(fmt, page, offset, value)
            assert _check(_reseal(page), truth, context, data_field=False) == "refused"
        at = len(truth) - SLOT_BYTES
        page = bytearray(truth)
        struct.pack_into("<Q", page, at, (1 << 64) - 5)  # slot 0's vertex, wrapped
        assert _check(_reseal(page), truth, context, data_field=False) == "refused"

"""The user's vertex ids of a graph version, both ways: a user id to the internal id (an
algorithm's source), internal ids to the user's (every vertex-valued output column).

Internal ids ascend with the user's ids (the ingest assigns them in sorted order), so a user id
is found by binary search, and a graph whose ids are exactly ``0..V-1`` (the common case of
integer ids loaded densely) needs no mapping at all: :meth:`VertexIds.user` hands the internal
ids back as they are. Held per graph version by the residency owner.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa

from graphdb.storage.lazy import pc

from .arrays import scalar, to_arrow, to_numpy
from .errors import InvalidArgument

__all__ = ["VertexIds"]

#: Up to this many string ids are looked up in a dict kept with the ids; more by Arrow's
#: index_in (which hashes every id on each call).
_FEW = 64
#: ... while the graph has at most this many vertices (the dict costs ~100 bytes an id).
_DICT_IDS = 500_000


class VertexIds:
    """The id column of one graph version (``ids[internal] = user id``)."""

    def __init__(self, ids: pa.Array, graph: str, id_type: str):
        self.ids = ids
        self.graph = graph
        self.strings = id_type == "string"
        self._positions: dict | None = None  # string id -> internal id, for a few look-ups
        self._numeric = None if self.strings else to_numpy(ids)
        n = len(ids)
        #: ids are exactly 0..V-1: internal and user ids coincide
        self.identity = (not self.strings and (n == 0 or (
            int(self._numeric[0]) == 0 and int(self._numeric[-1]) == n - 1)))

    def subset(self, internal: np.ndarray) -> "VertexIds":
        """The ids of the vertices ``internal`` (ascending internal ids), in that order: a
        subgraph's, whose vertex i is this graph's ``internal[i]``."""
        return VertexIds(self.ids.take(to_arrow(np.asarray(internal, dtype=np.int64))),
                         self.graph, "string" if self.strings else "int64")

    @property
    def nbytes(self) -> int:
        return int(self.ids.nbytes)

    @property
    def numeric(self) -> np.ndarray:
        """The integer ids as int64 numpy (not for string ids)."""
        if self.strings:
            raise TypeError(f"graph '{self.graph}' has string vertex ids")
        return np.ascontiguousarray(self._numeric, dtype=np.int64)

    def internal(self, value: Any, algorithm: str, param: str) -> int:
        """The internal id of user id ``value``; a clear error when it is not in the graph."""
        if self.strings:
            if not isinstance(value, str):
                value = str(value)
            position = pc.index(self.ids, scalar(value, pa.string())).as_py()
        else:
            if isinstance(value, str):
                try:
                    value = int(value)
                except ValueError:
                    raise InvalidArgument(
                        f"{algorithm}(): {param} {value!r} is not a vertex of graph "
                        f"'{self.graph}' (its vertex ids are integers)") from None
            if isinstance(value, float) and value.is_integer():
                value = int(value)
            if not isinstance(value, (int, np.integer)) or isinstance(value, bool):
                raise InvalidArgument(f"{algorithm}(): {param} must be a vertex id, got {value!r}")
            ids = self._numeric
            i = int(np.searchsorted(ids, value))  # ids are stored in ascending order
            position = i if i < len(ids) and ids[i] == value else -1
        if position < 0:
            raise InvalidArgument(
                f"{algorithm}(): {param} {value!r} is not a vertex of graph '{self.graph}'")
        return position

    def internal_of(self, values: tuple | list) -> np.ndarray:
        """:meth:`internal_many` of a few Python values (a pattern's start ids), without Arrow:
        its calls cost a statement of one lookup more than the lookup."""
        if len(values) > _FEW:
            return self.internal_many(to_arrow(list(values)))
        out = np.full(len(values), -1, dtype=np.int64)
        if self.strings:
            if len(self.ids) > _DICT_IDS or not all(isinstance(v, str) for v in values):
                return self.internal_many(to_arrow(list(values)))  # (Arrow's casts)
            if self._positions is None:
                self._positions = {v: i for i, v in enumerate(self.ids.to_pylist())}
            for k, value in enumerate(values):
                if isinstance(value, str):
                    out[k] = self._positions.get(value, -1)
            return out
        ids = self._numeric
        for k, value in enumerate(values):
            if isinstance(value, float) and value.is_integer():
                value = int(value)
            if isinstance(value, (int, np.integer)) and not isinstance(value, bool) and \
                    len(ids) and -2**63 <= value < 2**63:
                i = int(np.searchsorted(ids, value))
                if i < len(ids) and ids[i] == value:
                    out[k] = i
        return out

    def internal_many(self, values: pa.Array | pa.ChunkedArray) -> np.ndarray:
        """The internal ids of many user ids (int64), -1 for those not in the graph (NULLs and
        values of another type included)."""
        if isinstance(values, pa.ChunkedArray):
            values = values.combine_chunks()
        if self.strings:
            if not pa.types.is_string(values.type):
                values = values.cast(pa.string())
            if len(values) <= _FEW and len(self.ids) <= _DICT_IDS:  # hashed once, not per call
                if self._positions is None:
                    self._positions = {v: i for i, v in enumerate(self.ids.to_pylist())}
                return np.array([self._positions.get(v, -1) for v in values.to_pylist()],
                                dtype=np.int64)
            return to_numpy(pc.index_in(values, value_set=self.ids).fill_null(-1)).astype(
                np.int64)
        out = np.full(len(values), -1, dtype=np.int64)
        ids = self._numeric
        if not len(ids) or not (pa.types.is_integer(values.type)
                                or pa.types.is_floating(values.type)):
            return out
        present = ~to_numpy(values.is_null())
        numbers = to_numpy(values.fill_null(0))
        positions = np.minimum(np.searchsorted(ids, numbers), len(ids) - 1)
        hit = present & (ids[positions] == numbers)
        out[hit] = positions[hit]
        return out

    def user(self, internal) -> pa.Array:
        """The user's ids of internal ids (numpy or Arrow integers): the ids themselves for
        identity ids, a numpy gather for integer ids, Arrow's take for strings."""
        internal = np.asarray(internal)
        if self.identity:
            return to_arrow(internal, pa.int64())
        if not self.strings:
            return to_arrow(np.take(self._numeric, internal), pa.int64())
        return self.ids.take(to_arrow(internal, pa.int64()))

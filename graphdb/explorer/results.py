"""Results kept on the server and read by the page a piece at a time.

A statement's rows stay here as the Arrow table the engine returned; the page asks for one page
of rows (sorted by a column if it likes), a chart's bins, or the graph the rows describe. So a
result of millions of rows costs the browser one page. The store is bounded: each tab keeps its
last :data:`KEPT_PER_CLIENT` results, and all tabs together at most ``budget`` bytes (the
oldest results go first); a page of a result that was let go says to run it again.
"""

from __future__ import annotations

import base64
import collections
import datetime
import decimal
import itertools
import math
import threading
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..errors import InvalidInputError, OperationalError

__all__ = ["ResultStore", "Stored", "json_value", "json_rows", "chart", "KEPT_PER_CLIENT"]

#: Results one tab keeps (its last ones).
KEPT_PER_CLIENT = 8
#: Rows one page may ask for.
MAX_PAGE = 1000
#: Bins of a histogram; distinct values below this make a bar per value instead.
BINS = 30
#: Bars a bar chart of rows shows at most.
MAX_BARS = 100
#: Integers beyond this lose precision as JavaScript numbers: they travel as strings.
_SAFE_INTEGER = 2 ** 53


class Stored:
    """One result kept for the page."""

    _ids = itertools.count(1)

    def __init__(self, client_id: int, sql: str, table: pa.Table, graphs: list[str]):
        self.id = next(self._ids)
        self.client_id = client_id
        self.sql = sql
        self.table = table
        self.graphs = graphs  # the graphs the statement read (for expanding vertices)
        self.bytes = table.nbytes
        self._orders: dict[tuple[str, bool], pa.Array] = {}

    def page(self, offset: int, limit: int, sort: str | None = None,
             descending: bool = False) -> list[list]:
        """Rows ``offset`` .. ``offset + limit`` (sorted by column ``sort``) as JSON values."""
        limit = max(0, min(int(limit), MAX_PAGE))
        offset = max(0, int(offset))
        if sort is None:
            return json_rows(self.table.slice(offset, limit))
        if sort not in self.table.column_names:
            raise InvalidInputError(f"no column '{sort}' to sort by")
        key = (sort, bool(descending))
        order = self._orders.get(key)
        if order is None:  # computed once per column and direction (a million rows: ~0.1 s)
            try:  # NULLs last, either way
                order = pc.sort_indices(self.table, sort_keys=[
                    (sort, "descending" if descending else "ascending")])
            except (pa.ArrowNotImplementedError, pa.ArrowInvalid, pa.ArrowTypeError):
                raise InvalidInputError(f"column '{sort}' ({self.table.schema.field(sort).type}) "
                                        "cannot be sorted") from None
            self._orders[key] = order
            self.bytes += order.nbytes
        return json_rows(self.table.take(order.slice(offset, limit)))


class ResultStore:
    """Every tab's results, within ``budget`` bytes."""

    def __init__(self, budget: int):
        self.budget = budget
        self._lock = threading.Lock()
        self._results: collections.OrderedDict[int, Stored] = collections.OrderedDict()

    def add(self, stored: Stored) -> None:
        with self._lock:
            self._results[stored.id] = stored
            mine = [r for r in self._results.values() if r.client_id == stored.client_id]
            for old in mine[:-KEPT_PER_CLIENT]:
                del self._results[old.id]
            while self.bytes > self.budget and len(self._results) > 1:
                oldest = next(iter(self._results))
                if oldest == stored.id:
                    break
                del self._results[oldest]

    def get(self, result_id: int, client_id: int) -> Stored:
        with self._lock:
            stored = self._results.get(int(result_id))
            if stored is not None:
                self._results.move_to_end(stored.id)
        if stored is None or stored.client_id != client_id:
            raise OperationalError("that result is no longer kept (the explorer keeps each "
                                   "tab's last results); run the statement again")
        return stored

    def drop_client(self, client_id: int) -> None:
        with self._lock:
            for key in [k for k, r in self._results.items() if r.client_id == client_id]:
                del self._results[key]

    @property
    def bytes(self) -> int:
        return sum(r.bytes for r in self._results.values())

    def __len__(self) -> int:
        return len(self._results)


def json_value(value: Any) -> Any:
    """A Python value (from Arrow) as JSON: big integers and non-finite floats as strings,
    dates as ISO text, bytes as base64, lists and structs element by element."""
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, int):
        return value if -_SAFE_INTEGER < value < _SAFE_INTEGER else str(value)
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    if isinstance(value, (list, tuple)):
        return [json_value(v) for v in value]
    if isinstance(value, dict):
        return {str(k): json_value(v) for k, v in value.items()}
    if isinstance(value, (datetime.date, datetime.time, datetime.datetime)):
        return value.isoformat()
    if isinstance(value, (bytes, bytearray)):
        return base64.b64encode(bytes(value)).decode()
    if isinstance(value, decimal.Decimal):
        return str(value)
    return str(value)


def json_rows(table: pa.Table) -> list[list]:
    columns = [table.column(i).to_pylist() for i in range(table.num_columns)]
    return [[json_value(v) for v in row] for row in zip(*columns)]


def is_numeric(arrow_type: pa.DataType) -> bool:
    return (pa.types.is_integer(arrow_type) or pa.types.is_floating(arrow_type)
            or pa.types.is_decimal(arrow_type))


def chart(table: pa.Table, value: str, label: str | None = None, log: bool = False) -> dict:
    """A chart of numeric column ``value``: bars of ``value`` per row labelled by column
    ``label`` (at most :data:`MAX_BARS` rows: a top-k), else a histogram of ``value``: a bar per
    distinct value when there are few (degrees, component sizes), else :data:`BINS` bins.
    ``log``: the histogram's bins are logarithmic (heavy-tailed degree distributions)."""
    if value not in table.column_names:
        raise InvalidInputError(f"no column '{value}' to chart")
    column = table.column(value)
    if not is_numeric(column.type):
        raise InvalidInputError(f"column '{value}' is not numeric ({column.type}); a chart "
                                "shows a numeric column")
    if label is not None:
        if label not in table.column_names:
            raise InvalidInputError(f"no column '{label}' to label the bars")
        rows = table.slice(0, MAX_BARS)
        labels = [json_value(v) for v in rows.column(label).to_pylist()]
        values = [json_value(v) for v in rows.column(value).cast(pa.float64()).to_pylist()]
        return {"kind": "bars", "x": label, "y": value, "labels": [str(x) for x in labels],
                "values": values, "rows": table.num_rows, "shown": rows.num_rows}
    data = column.drop_null().cast(pa.float64()).to_numpy()
    data = data[np.isfinite(data)]
    nulls = table.num_rows - len(data)
    if len(data) == 0:
        return {"kind": "histogram", "x": value, "bins": [], "counts": [], "rows": 0,
                "dropped": nulls}
    distinct = np.unique(data) if len(data) <= 5_000_000 else None
    integral = distinct is not None and len(distinct) <= BINS and bool(
        np.all(distinct == np.round(distinct)))
    if integral:
        counts = [int(np.count_nonzero(data == v)) for v in distinct]
        return {"kind": "histogram", "x": value, "discrete": True,
                "bins": [json_value(float(v)) for v in distinct], "counts": counts,
                "rows": int(len(data)), "dropped": nulls, "log": False}
    low, high = float(data.min()), float(data.max())
    if log and low > 0:
        edges = np.geomspace(low, high if high > low else low * 10, BINS + 1)
    else:
        log = False
        edges = np.linspace(low, high if high > low else low + 1, BINS + 1)
    counts, edges = np.histogram(data, bins=edges)
    return {"kind": "histogram", "x": value, "discrete": False,
            "bins": [float(e) for e in edges], "counts": [int(c) for c in counts],
            "rows": int(len(data)), "dropped": nulls, "log": log}

"""Relational operators on Arrow tables: joins, aggregation, distinct, union, sort.

Everything heavy runs inside Arrow: hash joins and hash aggregation in Acero (through
``Table.join`` / ``Table.group_by``), filters and projections as compute expressions. The
Python here only arranges inputs (unifying key types, row ids for outer joins with residual
conditions) and checks SQL rules that Arrow does not know about.
"""

from __future__ import annotations

from typing import Callable

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .arrays import scalar, to_arrow
from .errors import ExecutionError, InvalidArgument
from .plan import AggregateCall

__all__ = ["HASH_JOIN_REASON", "hash_join_build_side", "join", "single_join", "mark_join", "aggregate", "distinct", "union_all",
           "set_operation", "sort", "top_k",
           "project", "CROSS_JOIN_LIMIT"]

#: Rows a cross join may produce before it is refused (a missing ON condition, usually).
CROSS_JOIN_LIMIT = 50_000_000

#: Rows of cross product built (and filtered) at a time by the nested-loop join.
CROSS_CHUNK_ROWS = 1 << 20

_ACERO_KIND = {"inner": "inner", "left": "left outer", "right": "right outer",
               "full": "full outer"}

_SWAPPED = {"inner": "inner", "left": "right", "right": "left", "full": "full"}

#: pyarrow >= 25 places nulls per sort key (the global option is deprecated there).
_PER_KEY_NULLS = int(pa.__version__.split(".")[0]) >= 25


#: What EXPLAIN says of a hash join before the sizes of its inputs are known.
HASH_JOIN_REASON = ("Acero hash join; its hash table is built on the smaller input "
                    "(sizes known at run time)")


def hash_join_build_side(left_rows: int, right_rows: int) -> str:
    """'right' or 'left': the input to build the hash table on, the smaller one (ties: right,
    Acero's own build side, so no swap is needed)."""
    return "right" if right_rows <= left_rows else "left"


def _common_type(a: pa.DataType, b: pa.DataType) -> pa.DataType | None:
    if a == b:
        return None
    numeric = (pa.types.is_integer, pa.types.is_floating)
    if any(f(a) for f in numeric) and any(f(b) for f in numeric):
        return pa.float64() if pa.types.is_floating(a) or pa.types.is_floating(b) else pa.int64()
    if pa.types.is_null(a):
        return b
    if pa.types.is_null(b):
        return a
    raise ExecutionError(f"type mismatch: cannot join a {a} key with a {b} key")


def _align_keys(left: pa.Table, right: pa.Table, lkeys, rkeys):
    for lk, rk in zip(lkeys, rkeys):
        target = _common_type(left.schema.field(lk).type, right.schema.field(rk).type)
        if target is not None:
            left = left.set_column(left.schema.get_field_index(lk), lk, left[lk].cast(target))
            right = right.set_column(right.schema.get_field_index(rk), rk,
                                     right[rk].cast(target))
    return left, right


def _cross(left: pa.Table, right: pa.Table, residual: pc.Expression | None = None,
           check: Callable[[], None] | None = None) -> pa.Table:
    """Nested-loop join: the product in chunks of about CROSS_CHUNK_ROWS rows, each filtered by
    ``residual`` at once, so the whole product never sits in memory and a cancel is noticed
    between chunks."""
    total = left.num_rows * right.num_rows
    if total > CROSS_JOIN_LIMIT:
        raise ExecutionError(f"cross join of {left.num_rows:,} x {right.num_rows:,} rows is too "
                             "large; add a join condition (ON a.x = b.y)")
    step = max(1, CROSS_CHUNK_ROWS // max(right.num_rows, 1))
    pieces = [_glue(left.slice(0, 0), right.slice(0, 0))]
    for start in range(0, left.num_rows, step):
        if check is not None:
            check()
        part = left.slice(start, step)
        li = np.repeat(np.arange(part.num_rows), right.num_rows)
        ri = np.tile(np.arange(right.num_rows), part.num_rows)
        piece = _glue(part.take(li), right.take(ri))
        pieces.append(piece.filter(residual) if residual is not None else piece)
    return pa.concat_tables(pieces)


def _glue(left: pa.Table, right: pa.Table) -> pa.Table:
    return pa.table(list(left.columns) + list(right.columns),
                    names=left.column_names + right.column_names)


def join(left: pa.Table, right: pa.Table, kind: str, lkeys, rkeys,
         residual: pc.Expression | None, metrics: dict | None = None,
         check: Callable[[], None] | None = None) -> pa.Table:
    """SQL join; ``kind`` is inner, left, right, full or cross. ``check`` raises to cancel."""
    if kind == "cross" or (not lkeys and kind == "inner"):
        return _cross(left, right, residual, check)
    if (residual is not None and kind == "left") or not lkeys:
        # LEFT JOIN with a non-equality part (or none at all): matched rows, then the rest.
        return _left_join_residual(left, right, lkeys, rkeys, residual, check)
    left, right = _align_keys(left, right, lkeys, rkeys)
    names = left.column_names + right.column_names
    side = hash_join_build_side(left.num_rows, right.num_rows)
    if metrics is not None:
        metrics["build_side"] = f"{side} ({min(left.num_rows, right.num_rows)} rows)"
    if side == "right":
        out = left.join(right, keys=list(lkeys), right_keys=list(rkeys),
                        join_type=_ACERO_KIND[kind], coalesce_keys=False, use_threads=True)
    else:
        # Acero builds its hash table on the right input: give it the smaller one.
        out = right.join(left, keys=list(rkeys), right_keys=list(lkeys),
                         join_type=_ACERO_KIND[_SWAPPED[kind]], coalesce_keys=False,
                         use_threads=True)
    out = out.select(names)
    return out.filter(residual) if residual is not None else out


def _left_join_residual(left, right, lkeys, rkeys, residual, check=None) -> pa.Table:
    """LEFT JOIN whose ON has a non-equality part: inner join + filter, then the left rows that
    found no partner, padded with NULLs."""
    rowid = "__left_row"
    numbered = left.append_column(rowid, to_arrow(np.arange(left.num_rows)))
    matched = join(numbered, right, "inner" if lkeys else "cross", lkeys, rkeys, residual,
                   check=check)
    seen = pc.unique(matched[rowid])
    missing = numbered.filter(pc.invert(pc.is_in(numbered[rowid], value_set=seen)))
    pad = pa.table([pa.nulls(missing.num_rows, f.type) for f in right.schema],
                   names=right.column_names)
    out = pa.concat_tables([matched, _glue(missing, pad)])
    return out.drop_columns([rowid])


def single_join(left: pa.Table, right: pa.Table) -> pa.Table:
    """A scalar subquery's value attached to every row (NULL when it returned no row)."""
    if right.num_rows > 1:
        raise InvalidArgument(f"a subquery used as a value returned {right.num_rows} rows; "
                             "it must return at most one (add LIMIT 1 or an aggregate)")
    column = right.column(0)
    value = column[0] if right.num_rows else scalar(None, column.type)
    return left.append_column(right.column_names[0],
                              pa.array([value.as_py()] * left.num_rows, column.type))


def mark_join(left: pa.Table, right: pa.Table, column: str, output: str) -> pa.Table:
    values = pc.unique(right.column(0).combine_chunks())
    probe = left[column]
    target = _common_type(probe.type, values.type)
    if target is not None:
        probe, values = probe.cast(target), values.cast(target)
    return left.append_column(output, pc.is_in(probe, value_set=values))


def aggregate(table: pa.Table, keys, calls: tuple[AggregateCall, ...]) -> pa.Table:
    if not keys and all(c.function == "count_all" for c in calls):
        # count(*) alone needs no grouping (nor Acero, whose import pulls in pandas)
        rows = to_arrow([table.num_rows], pa.int64())
        return pa.table([rows] * len(calls), names=[c.output for c in calls])
    specs, names = [], []
    for call in calls:
        if call.function == "count_all":
            specs.append(([], "count_all"))
            names.append("count_all")
            continue
        options = None
        if call.function in ("stddev", "variance"):
            options = pc.VarianceOptions(ddof=1)  # SQL's stddev/variance are the sample ones
        elif call.function in ("count", "count_distinct"):
            options = pc.CountOptions(mode="only_valid")
        specs.append((call.column, call.function, options))
        names.append(f"{call.column}_{call.function}")
    ordered = any(c.function in ("first", "last") for c in calls)
    result = table.group_by(list(keys), use_threads=not ordered).aggregate(specs)
    columns = [result[k] for k in keys] + [result[n] for n in names]
    return pa.table(columns, names=list(keys) + [c.output for c in calls])


def distinct(table: pa.Table) -> pa.Table:
    if table.num_columns == 0:
        return table.slice(0, min(1, table.num_rows))
    names = table.column_names
    unique = [f"__d{i}" for i in range(len(names))]  # group_by needs distinct names
    out = table.rename_columns(unique).group_by(unique, use_threads=False).aggregate([])
    return out.select(unique).rename_columns(names)


def union_all(tables: list[pa.Table], names: list[str]) -> pa.Table:
    renamed = [t.rename_columns(names) for t in tables]
    try:
        return pa.concat_tables(renamed, promote_options="permissive")
    except (pa.ArrowInvalid, pa.ArrowTypeError) as exc:
        raise ExecutionError(f"type mismatch in UNION: {exc}") from None


def set_operation(left: pa.Table, right: pa.Table, kind: str, names) -> pa.Table:
    """INTERSECT / EXCEPT: distinct left rows with (without) an equal row on the right."""
    keys = [f"__s{i}" for i in range(len(names))]
    left = distinct(left.rename_columns(keys))
    right = distinct(right.rename_columns(keys))
    left, right = _align_keys(left, right, keys, keys)
    join_type = "left semi" if kind == "intersect" else "left anti"
    out = left.join(right, keys=keys, join_type=join_type, use_threads=True)
    return out.select(keys).rename_columns(list(names))


def sort(table: pa.Table, keys, nulls_first) -> pa.Table:
    if not table.num_rows:
        return table
    firsts = nulls_first or (False,) * len(keys)
    if _PER_KEY_NULLS:
        sort_keys = [(c, d, "at_start" if f else "at_end") for (c, d), f in zip(keys, firsts)]
        indices = pc.sort_indices(table, sort_keys=sort_keys)
    else:
        placement = "at_start" if firsts[0] else "at_end"
        indices = pc.sort_indices(table, sort_keys=list(keys), null_placement=placement)
    return table.take(indices)


def top_k(table: pa.Table, keys, nulls_first, k: int) -> pa.Table | None:
    """The first ``k`` rows in ``keys`` order without sorting the rest, or None where the full
    sort is needed: Arrow's selection has no NULL placement, so key columns with NULLs sort."""
    if k >= table.num_rows or any(table[c].null_count for c, _ in keys):
        return None
    chosen = table.take(pc.select_k_unstable(table, k=k, sort_keys=list(keys)))
    return sort(chosen, keys, nulls_first)


def project(table: pa.Table, names, expressions) -> pa.Table:
    if not expressions:
        # No columns, but the row count still matters (count(*) above): keep a null column.
        return pa.table({"__rows": pa.nulls(table.num_rows)})
    columns = set(table.column_names)
    picked = []
    for expr in expressions:
        text = str(expr)
        if text in columns and table.column_names.count(text) == 1 and expr.equals(
                pc.field(text)):
            picked.append(table[text])
        else:
            break
    else:  # pure column selection/renaming: no compute needed
        return pa.table(picked, names=list(names))
    import pyarrow.acero as acero  # ~20 ms (it loads pyarrow.dataset): only when computing

    decl = acero.Declaration.from_sequence([
        acero.Declaration("table_source", acero.TableSourceNodeOptions(table)),
        acero.Declaration("project", acero.ProjectNodeOptions(list(expressions), list(names))),
    ])
    return decl.to_table(use_threads=False)

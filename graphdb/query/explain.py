"""EXPLAIN: the plan as an indented tree, with the operator choices and, for ANALYZE, what ran.

``Rename`` nodes (relabelling columns, no work) are folded into the line of their input so the
tree shows only operators that do something. Times under ANALYZE are exclusive: an operator's
own time, its inputs' time subtracted.
"""

from __future__ import annotations

from graphdb.executor.device import format_bytes
from graphdb.executor.plan import (
    Aggregate,
    AlgorithmScan,
    DescribeGraph,
    Distinct,
    Filter,
    GraphTableScan,
    Join,
    Limit,
    MarkJoin,
    PatternMatch,
    PlanNode,
    Project,
    Rename,
    SetOperation,
    ShowGraphs,
    SingleRow,
    Sort,
    UnionAll,
    ValuesScan,
)

__all__ = ["explain_lines"]


def _names(names) -> str:
    shown = [n for n in names if not n.startswith("__")]
    if not names:
        return "(no columns: only the row count is used)"
    return ", ".join(shown) if shown else f"{len(names)} computed column" + (
        "s" if len(names) > 1 else "")


def _describe(node: PlanNode) -> str:
    if isinstance(node, AlgorithmScan):
        opts = ", ".join(f"{k} => {'(subquery)' if isinstance(v, PlanNode) else repr(v)}"
                         for k, v in node.options)
        return f"ALGORITHM {node.algorithm}({node.graph}{', ' + opts if opts else ''})"
    if isinstance(node, PatternMatch):
        hops = "; ".join(
            f"{h.direction} {h.low}" + (f"..{h.high}" if h.high != h.low else "") + " hop"
            + ("s" if h.high > 1 else "") + f" -> {h.target}" for h in node.hops)
        return (f"PATTERN MATCH {node.graph} {node.text}: frontier expansion from "
                f"{'filtered' if node.start_filter is not None else 'all'} {node.start}; {hops}")
    if isinstance(node, GraphTableScan):
        return f"SCAN {node.graph}.{node.table}"
    if isinstance(node, ValuesScan):
        return f"TABLE FUNCTION {node.name}() ({node.table.num_rows} rows)"
    if isinstance(node, Filter):
        return f"FILTER {node.text}"
    if isinstance(node, Project):
        return f"PROJECT {_names(node.names)}"
    if isinstance(node, Join):
        if node.kind == "single":
            return f"SCALAR SUBQUERY {node.text}"
        kind = {"cross": "CROSS JOIN", "inner": "HASH JOIN", "left": "LEFT HASH JOIN",
                "right": "RIGHT HASH JOIN", "full": "FULL HASH JOIN"}[node.kind]
        if node.kind == "left" and not node.left_keys:
            kind = "LEFT NESTED-LOOP JOIN"
        return f"{kind}{' ON ' + node.text if node.text else ''}"
    if isinstance(node, MarkJoin):
        return "IN (SUBQUERY) as a hash set"
    if isinstance(node, Aggregate):
        calls = ", ".join(f"{c.function}({c.column or '*'})" for c in node.aggregates)
        keys = f" GROUP BY {len(node.keys)} key{'s' if len(node.keys) != 1 else ''}" \
            if node.keys else ""
        return f"HASH AGGREGATE {calls}{keys}".rstrip()
    if isinstance(node, Distinct):
        return "DISTINCT (hash)"
    if isinstance(node, UnionAll):
        return f"UNION ALL of {len(node.inputs)} inputs"
    if isinstance(node, SetOperation):
        return f"{node.kind.upper()} (hash semi/anti join on all columns)"
    if isinstance(node, Sort):
        labels = node.labels or tuple(c for c, _ in node.keys)
        return "SORT " + ", ".join(f"{label} {'DESC' if d == 'descending' else 'ASC'}"
                                   for label, (_, d) in zip(labels, node.keys))
    if isinstance(node, Limit):
        return f"LIMIT {node.limit if node.limit is not None else 'ALL'} OFFSET {node.offset}"
    if isinstance(node, SingleRow):
        return "SINGLE ROW"
    if isinstance(node, ShowGraphs):
        return "SHOW GRAPHS"
    if isinstance(node, DescribeGraph):
        return f"DESCRIBE {node.graph}"
    return type(node).__name__


def _actual(node: PlanNode, stats: dict, inputs: tuple[PlanNode, ...] | None = None) -> str:
    s = stats[id(node)]
    inputs = _children(node) if inputs is None else tuple(_skip(c) for c in inputs)
    inner = sum(stats[id(c)].seconds for c in inputs if id(c) in stats)
    own = max(s.seconds - inner, 0.0)
    parts = [f"{own * 1000:.2f} ms", f"{s.rows} rows"]
    variant = s.metrics.get("variant")
    for key, value in s.metrics.items():
        if key in _RESTATED or (key == "strategy" and value == variant):
            continue  # the choice line above says it already
        if key == "bytes_moved":
            parts.append(f"bytes moved {format_bytes(value)}")
        else:
            parts.append(f"{key.replace('_', ' ')} {_brief(value)}")
    return ", ".join(parts)


#: Operator metrics that repeat the choice line (kept in the metrics for the Python API).
_RESTATED = frozenset({"plan", "plan_reason"})
#: Lists longer than this show their first and last values only (per-iteration series).
_LIST_SHOWN = 6


def _brief(value) -> str:
    if isinstance(value, (list, tuple)) and len(value) > _LIST_SHOWN:
        head = ", ".join(str(v) for v in value[:3])
        tail = ", ".join(str(v) for v in value[-2:])
        return f"[{head}, ..., {tail}] ({len(value)} values)"
    return str(value)


def _skip(node: PlanNode) -> PlanNode:
    while isinstance(node, Rename):
        node = node.input
    return node


def _children(node: PlanNode) -> tuple[PlanNode, ...]:
    return tuple(_skip(c) for c in node.children())


def explain_lines(node: PlanNode, choices: dict[int, str], stats: dict | None = None,
                  depth: int = 0) -> list[str]:
    """One line per operator, inputs indented below; ``choices`` and ``stats`` by ``id(node)``."""
    shown_names = None
    while isinstance(node, Rename):  # the innermost names are the ones the user wrote
        shown_names, node = node.names, node.input
    pad = "  " * depth
    text = _describe(node)
    if isinstance(node, Limit) and isinstance(node.input, Sort) and node.limit is not None:
        # The runner does ORDER BY + LIMIT as one top-k selection: show it as it runs.
        sort = node.input
        text = (f"TOP {node.offset + node.limit} BY " + _describe(sort)[len("SORT "):]
                + (f" OFFSET {node.offset}" if node.offset else "")
                + " (partial sort; a full sort when a key has NULLs)")
        lines = [pad + ("-> " if depth else "") + text]
        if stats and id(node) in stats:
            lines.append(pad + "     actual: " + _actual(node, stats, sort.children()))
        for child in sort.children():
            lines.extend(explain_lines(child, choices, stats, depth + 1))
        return lines
    if isinstance(node, Project) and shown_names is not None:
        text = f"PROJECT {_names(shown_names)}"
    lines = [pad + ("-> " if depth else "") + text]
    if id(node) in choices:
        lines.append(pad + "     choice: " + choices[id(node)])
    if stats and id(node) in stats:
        lines.append(pad + "     actual: " + _actual(node, stats))
    for child in node.children():
        lines.extend(explain_lines(child, choices, stats, depth + 1))
    return lines

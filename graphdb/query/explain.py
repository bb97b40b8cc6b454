"""EXPLAIN: the physical plan as a tree that fits 100 columns; ANALYZE adds what each node did.

Every node prints its label (what runs), then its details (for a graph operator: device,
variant, the bytes it needs of which budget, and why), then under ANALYZE its actuals (own time,
rows, the operator's metrics). Times under ANALYZE are exclusive: an operator's own time, its
inputs' time subtracted.

The relational part is one node, ``DUCKDB``, above the graph operators whose results it reads;
its details are DuckDB's own plan of the statement, summarised a line per operator: where each
filter ended up (in a scan, or a FILTER right above one, below the joins), the join conditions,
the groups and aggregates, and for each scan which relation it reads (``bfs(g, 1)``,
``g.edges``). Under ANALYZE each of those lines adds its rows and time from DuckDB's profile.
"""

from __future__ import annotations

import re
import textwrap

from graphdb.executor.device import format_bytes
from graphdb.executor.physical import PhysicalNode

__all__ = ["WIDTH", "explain_lines", "sql_plan_lines"]

#: Columns the tree fits in.
WIDTH = 100
#: Operator metrics that repeat the node's details (kept in the metrics for the Python API).
_RESTATED = frozenset({"device", "variant", "plan", "plan_reason", "strategy", "budget_bytes",
                       "backend", "streamed", "duckdb_profile"})
#: Byte counts shown in KiB/MiB/GiB, and seconds shown in ms.
_BYTES = frozenset({"bytes_moved", "bytes_exchanged", "bytes_per_step"})
_SECONDS = frozenset({"collective_seconds", "host_seconds"})
#: Lists longer than this show their first and last values only (per-iteration series).
_LIST_SHOWN = 6


def _brief(value) -> str:
    if isinstance(value, (list, tuple)) and len(value) > _LIST_SHOWN:
        head = ", ".join(str(v) for v in value[:3])
        tail = ", ".join(str(v) for v in value[-2:])
        return f"[{head}, ..., {tail}] ({len(value)} values)"
    if isinstance(value, float):
        return f"{value:.6g}"
    return str(value)


def _actual(node: PhysicalNode, stats: dict) -> str:
    s = stats[id(node)]
    inner = sum(stats[id(c)].seconds for c in node.inputs if id(c) in stats)
    parts = [f"{max(s.seconds - inner, 0.0) * 1000:.2f} ms", f"{s.rows} rows"]
    for key, value in s.metrics.items():
        if key in _RESTATED or isinstance(value, dict) or (
                isinstance(value, list) and value and isinstance(value[0], dict)):
            continue  # restated above, or structured detail kept for the Python API
        if key in _BYTES:
            parts.append(f"{key.replace('_', ' ')} {format_bytes(value)}")
        elif key == "predicted_s" and isinstance(value, (int, float)):
            parts.append(f"predicted {value * 1000:.2f} ms")
        elif key in _SECONDS:
            parts.append(f"{key.replace('_seconds', ' time')} {value * 1000:.2f} ms")
        else:
            parts.append(f"{key.replace('_', ' ')} {_brief(value)}")
    return ", ".join(parts)


def _wrap(text: str, first: str, rest: str) -> list[str]:
    return textwrap.wrap(text, WIDTH, initial_indent=first, subsequent_indent=rest,
                         break_long_words=True, break_on_hyphens=False) or [first.rstrip()]


def _operator(node: dict) -> tuple[str, dict, list, int | None, float | None]:
    """(name, extra info, children, rows, seconds) of a DuckDB plan or profile node."""
    name = node.get("name") or node.get("operator_name") or node.get("type") or \
        node.get("operator_type") or "?"
    rows = node.get("operator_cardinality", node.get("intermediate_rows"))
    seconds = node.get("operator_timing", node.get("timing"))
    return name.strip(), node.get("extra_info") or {}, node.get("children") or [], rows, seconds


def _text(value) -> str:
    return ", ".join(str(v) for v in value) if isinstance(value, list) else str(value)


def _describe(name: str, info: dict, relations: dict[str, list[str]]) -> str | None:
    """One DuckDB operator as a line (None: a step not worth a line)."""
    projections = info.get("Projections")
    if name in ("RESULT_COLLECTOR", "EXPLAIN", "QUERY"):
        return None
    if name == "PROJECTION":
        shown = [p for p in (projections if isinstance(projections, list) else [projections])
                 if p and not str(p).startswith("#")]
        return f"PROJECTION {_text(shown)}" if shown else None
    if "SCAN" in name:
        columns = projections if isinstance(projections, list) else (
            [projections] if projections else [])
        readers = [shown for shown, names in relations.items()
                   if columns and set(columns) <= set(names)]
        what = readers[0] if len(readers) == 1 else info.get("Function", name)
        line = f"SCAN {what}" + (f" ({_text(columns)})" if columns else "")
        if info.get("Filters"):
            line += f" WHERE {_text(info['Filters'])} (in the scan)"
        return line
    if name == "FILTER":
        return f"FILTER {_text(info.get('Expression', ''))}"
    if "JOIN" in name:
        kind = info.get("Join Type", "")
        on = info.get("Conditions")
        return f"{name.replace('_', ' ')} {kind}" + (f" ON {_text(on)}" if on else "")
    if name == "TOP_N":
        return f"TOP {info.get('Top', '')} BY {_text(info.get('Order By', ''))}"
    if name == "HASH_GROUP_BY" or name.endswith("AGGREGATE"):
        groups = info.get("Groups")
        aggregates = info.get("Aggregates")
        if name == "HASH_GROUP_BY" and not aggregates:
            return f"HASH GROUP BY {_text(groups)} (distinct values)"
        return (f"{name.replace('_', ' ')}" + (f" {_text(aggregates)}" if aggregates else "")
                + (f" BY {_text(groups)}" if groups else ""))
    if name == "ORDER_BY":
        return f"ORDER BY {_text(info.get('Order By', ''))}"
    extra = "; ".join(f"{k}: {_text(v)}" for k, v in info.items()
                      if k != "Estimated Cardinality" and v not in ("", []))
    return f"{name.replace('_', ' ')}" + (f" {extra}" if extra else "")


#: ``#2``: DuckDB's reference to the third column of an operator's input.
_REFERENCE = re.compile(r"#(\d+)")


def _columns_of(node: dict):
    """A replacement for ``#n`` references to ``node``'s output by its column names, where
    its plan lists them (a scan's or a projection's), else the reference as it is."""
    projections = (node.get("extra_info") or {}).get("Projections")
    names = projections if isinstance(projections, list) else (
        [projections] if isinstance(projections, str) else [])

    def name(match: re.Match) -> str:
        i = int(match.group(1))
        if i < len(names) and not str(names[i]).startswith("#"):
            return str(names[i])
        return match.group(0)

    return name


def sql_plan_lines(trees: list[dict], relations: dict[str, list[str]],
                   analyze: bool = False) -> list[str]:
    """DuckDB's plan (or profile, with ``analyze``) as indented lines; ``relations`` maps what
    each input is (``g.edges``) to its columns, to say which one a scan reads."""
    lines: list[str] = []

    def emit(node: dict, depth: int) -> None:
        name, info, children, rows, seconds = _operator(node)
        line = _describe(name, info, relations)
        if line is not None and len(children) == 1:
            line = _REFERENCE.sub(_columns_of(children[0]), line)
        if line is not None:
            if analyze and rows is not None:
                line += f" · {rows} rows" + (f", {seconds * 1000:.2f} ms"
                                             if seconds is not None else "")
            lines.append("  " * depth + line)
            depth += 1
        for child in children:
            emit(child, depth)

    for tree in trees:
        emit(tree, 0)
    return lines


def explain_lines(plan: PhysicalNode, stats: dict | None = None,
                  sql_plans: dict[int, list[str]] | None = None) -> list[str]:
    """The tree, a line at a time (wrapped to :data:`WIDTH` columns); ``stats`` are the
    runner's, by ``id(node)``, for ANALYZE; ``sql_plans`` the lines of DuckDB's plan of each
    relational node, by ``id(node)``."""
    lines: list[str] = []

    def emit(node: PhysicalNode, lead: str, child_lead: str) -> None:
        label = node.label
        lines.extend(_wrap(label, lead, child_lead + ("│   " if node.inputs else "    ")))
        body = child_lead + ("│   " if node.inputs else "    ")
        for detail in node.details:
            lines.extend(_wrap(detail, body, body + "  "))
        for detail in (sql_plans or {}).get(id(node), ()):
            indent = len(detail) - len(detail.lstrip(" "))
            lines.extend(_wrap(detail.lstrip(" "), body + " " * indent,
                               body + " " * (indent + 4)))
        if stats and id(node) in stats:
            lines.extend(_wrap("actual: " + _actual(node, stats), body, body + "  "))
        elif stats:
            lines.extend(_wrap("actual: not run (what it finds, a mask or a pattern's start "
                               "vertices, kept from an earlier statement)", body, body + "  "))
        for i, child in enumerate(node.inputs):
            last = i == len(node.inputs) - 1
            emit(child, child_lead + ("└── " if last else "├── "),
                 child_lead + ("    " if last else "│   "))

    emit(plan, "", "")
    return lines

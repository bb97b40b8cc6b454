"""EXPLAIN's tree for the page: the plan's lines (what ``EXPLAIN`` returns) read back into
nodes, each with its label, its lines, and what the page shows as badges: device, variant, the
bytes it needs of which budget, and under ANALYZE its own time and rows.

The lines are :func:`graphdb.query.explain.explain_lines`' tree: a node's label after a
``├── ``/``└── `` connector four columns per level, then its lines (details, DuckDB's plan of a
relational node, ``actual: ...``) before its inputs.
"""

from __future__ import annotations

import re

__all__ = ["plan_tree"]

_CONNECTORS = ("├── ", "└── ")
_DRAWING = " │├└─"
_DECISION = re.compile(r"^(?P<device>cpu|gpu)\b(?: · (?P<variant>[^·]+?))?"
                       r"(?: · (?P<needs>needs .+))?$")
_ACTUAL = re.compile(r"^actual: (?P<ms>[\d.]+) ms, (?P<rows>\d+) rows(?:, (?P<rest>.*))?$")
_TOTAL = re.compile(r"^Total: (?P<ms>[\d.]+) ms$")


def _node(label: str) -> dict:
    return {"label": label, "lines": [], "device": None, "variant": None, "needs": None,
            "ms": None, "rows": None, "metrics": None, "children": []}


def plan_tree(lines: list[str]) -> dict:
    """``{"root": node, "total_ms": float | None}``; a node is ``{label, lines, device,
    variant, needs, ms, rows, metrics, children}``."""
    root = None
    total = None
    stack: list[tuple[int, dict]] = []  # (depth, node) from the root down to the last node
    last: dict | None = None
    for line in lines:
        match = _TOTAL.match(line)
        if match:
            total = float(match["ms"])
            continue
        start = len(line) - len(line.lstrip(_DRAWING))
        text = line[start:]
        if root is None:
            root = last = _node(text)
            stack = [(0, root)]
            continue
        if start >= 4 and line[start - 4:start] in _CONNECTORS:
            depth = start // 4
            node = _node(text)
            while stack and stack[-1][0] >= depth:
                stack.pop()
            (stack[-1][1] if stack else root)["children"].append(node)
            stack.append((depth, node))
            last = node
            continue
        if last is None:
            continue
        body = 4 * (stack[-1][0] + 1)
        indent = max(0, start - body)
        last["lines"].append({"text": text, "indent": indent})
        if indent:
            continue
        decision = _DECISION.match(text)
        actual = _ACTUAL.match(text)
        if decision and last["device"] is None:
            last["device"] = decision["device"]
            last["variant"] = (decision["variant"] or "").strip() or None
            last["needs"] = decision["needs"]
        elif actual:
            last["ms"], last["rows"] = float(actual["ms"]), int(actual["rows"])
            last["metrics"] = actual["rest"]
    return {"root": root, "total_ms": total}
